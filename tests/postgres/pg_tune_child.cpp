// One "machine" of the shared-store test: its own local cache directory, the shared server.
//
//   pg_tune_child <local dir> <server url> <go file> <out file>
//   pg_tune_child - default <go file> <out file>
//
// Waits until <go file> exists (so that every child starts together), then tunes one key of a
// simulated kernel (12 configurations, each compile 20 ms) through SharedStore (its local
// tune.db in front of the server), and writes "compiles <n> timings <t>" to <out file>: how many
// kernels this process compiled (the winner's, to launch it, included) and how many timings
// it made. With "- default", the Autotuner uses default_store(): the environment
// (TUNE_CACHE_DIR, TUNE_STORE) decides. Exit status: 0 tuned; 2 a failure
// (printed).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "sim_kernel.hpp"
#include "tune/postgres_store.hpp"
#include "tune/sqlite_store.hpp"
#include "tune/testing/quick_options.hpp"
#include "tune/tune.hpp"

using namespace tune;
using tune::testing::SimDevice;
namespace iso = tune::testing::isolation;

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: pg_tune_child <local dir> <server url> <go file> <out file>\n");
    return 2;
  }
  SimDevice dev;  // declared first: destroyed after the tuner
  iso::configure(dev);
  dev.compile_delay_if([](const Config&) { return true; }, 20.0);
  auto x = dev.alloc(4096 * sizeof(float)).value();
  auto y = dev.alloc(4096 * sizeof(float)).value();

  AutotunerOptions opts = tune::testing::quiet_options();
  if (std::string(argv[2]) != "default") {
    auto store = open_shared_store(SqliteStore::open(std::string(argv[1]) + "/tune.db"), argv[2]);
    if (!store.ok()) {
      std::fprintf(stderr, "open_shared_store: %s\n", store.status().to_string().c_str());
      return 2;
    }
    opts.store = *store;
  } else {
    opts.persistent = true;  // default_store()
  }
  opts.gpu_lock = false;
  auto tuner = Autotuner::make(iso::listed_kernel("pg_shared"), opts);
  if (!tuner.ok()) {
    std::fprintf(stderr, "make: %s\n", tuner.status().to_string().c_str());
    return 2;
  }
  while (!std::filesystem::exists(argv[3]))
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const std::int32_t n = 4000;
  std::vector<ArgValue> args{ArgValue::buf(*x, ElemType::f32, 4096),
                             ArgValue::buf(*y, ElemType::f32, 4096), ArgValue(n)};
  const Status st = (*tuner)->run(dev, args);
  if (!st.ok()) {
    std::fprintf(stderr, "run: %s\n", st.to_string().c_str());
    return 2;
  }
  std::ofstream(argv[4]) << "compiles " << dev.compiles() << " timings " << dev.time_calls()
                         << "\n";
  return 0;
}
