// One of several processes tuning on one cache directory that then exit at once, compiles
// still running (tests/core/isolation/teardown_processes_test.cpp spawns it; a fork of the
// multi-threaded test process itself hung under ASan).
//
//   teardown_child <cache dir> <keys>
//
// Tunes `keys` keys (n = 1000 + k) of a simulated kernel whose compiles take 2 ms, each with
// tuning_budget_ms = 1, calling again until the call is ok (at most 200 calls a key), into the
// SQLite store of <cache dir>, then returns from main: the tuner, then the device, are destroyed
// while the last calls' compiles may still run. SimDevice aborts if a kernel outlives it.
// Exit status: 0 every key tuned; 3 a key never tuned; 2 a call failed otherwise (printed).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "sim_kernel.hpp"
#include "tune/sqlite_store.hpp"
#include "tune/testing/quick_options.hpp"
#include "tune/tune.hpp"

using namespace tune;
using tune::testing::SimDevice;
namespace iso = tune::testing::isolation;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: teardown_child <cache dir> <keys>\n");
    return 2;
  }
  const std::string dir = argv[1];
  const int keys = std::atoi(argv[2]);
  SimDevice dev;  // declared first: destroyed after the tuner
  iso::configure(dev);
  dev.compile_delay_if([](const Config&) { return true; }, 2.0);
  auto x = dev.alloc(4096 * sizeof(float)).value();
  auto y = dev.alloc(4096 * sizeof(float)).value();

  AutotunerOptions opts = tune::testing::quiet_options();
  opts.store = SqliteStore::open(dir + "/tune.db");
  opts.gpu_lock = false;
  opts.tuning_budget_ms = 1;
  auto tuner = Autotuner::make(iso::listed_kernel("teardown_child"), opts);
  if (!tuner.ok()) {
    std::fprintf(stderr, "make: %s\n", tuner.status().to_string().c_str());
    return 2;
  }
  for (int k = 0; k < keys; ++k) {
    const std::int32_t n = 1000 + k;
    std::vector<ArgValue> args{ArgValue::buf(*x, ElemType::f32, 4096),
                               ArgValue::buf(*y, ElemType::f32, 4096), ArgValue(n)};
    Status st(StatusCode::timeout, "not called");
    for (int call = 0; call < 200 && st.code() == StatusCode::timeout; ++call)
      st = (*tuner)->run(dev, args);
    if (st.code() == StatusCode::timeout) return 3;
    if (!st.ok()) {
      std::fprintf(stderr, "key n=%d: %s\n", n, st.to_string().c_str());
      return 2;
    }
  }
  return 0;  // the tuner, then the device, are destroyed here, compiles maybe still running
}
