// An installed libtune's PostgreSQL tier: with TUNE_STORE naming a real server (pg_server.hpp;
// exit 77 when the server programs are absent), default_store() is the shared store, a kernel
// tuned on the simulated device lands on the server, and a second "machine" (a fresh local
// file) reads it back from there. An install that lost the component warns "built without"
// and fails here.
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <tune/postgres_store.hpp>
#include <tune/testing/quick_options.hpp>
#include <tune/testing/sim_device.hpp>
#include <tune/tune.hpp>

#include "pg_server.hpp"

namespace {

tune::KernelDef consumer_kernel() {
  tune::KernelDef def;
  def.name = "pg_consumer_kernel";
  def.sources = {{tune::Language::simulated, "k", "// simulated"}};
  def.signature.buffer("x", tune::ElemType::f32).scalar("n", tune::ElemType::i32);
  def.space.param("BM", {16, 32, 64, 128});
  def.key = {tune::KeySpec::exact("n")};
  def.dims = [](const tune::Config&, tune::ArgList) {
    tune::LaunchDims d;
    d.grid = {1, 1, 1};
    d.block = {64, 1, 1};
    return d;
  };
  return def;
}

tune::Status run(const std::string& url, const std::filesystem::path& dir) {
  if (::setenv("TUNE_STORE", url.c_str(), 1) != 0 ||
      ::setenv("TUNE_CACHE_DIR", (dir / "a").c_str(), 1) != 0)
    return tune::Status(tune::StatusCode::internal, "setenv failed");
  auto shared = std::dynamic_pointer_cast<tune::SharedStore>(tune::default_store());
  if (shared == nullptr)
    return tune::Status(tune::StatusCode::internal,
                        "default_store() is not the shared store: TUNE_STORE was not honoured");
  tune::testing::SimDevice dev;  // outlives the tuner
  tune::AutotunerOptions opts = tune::testing::quiet_options();
  opts.persistent = true;  // default_store()
  TUNE_ASSIGN_OR_RETURN(auto tuner, tune::Autotuner::make(consumer_kernel(), opts));
  TUNE_ASSIGN_OR_RETURN(auto x, dev.alloc(1024 * sizeof(float)));
  const std::vector<tune::ArgValue> args = {tune::ArgValue::buf(*x, tune::ElemType::f32, 1024),
                                            tune::ArgValue(std::int32_t{1024})};
  TUNE_ASSIGN_OR_RETURN(const tune::Config best, tuner->tune(dev, args));
  if (shared->queued() != 0)
    return tune::Status(tune::StatusCode::internal, "rows queued: the server was not written");
  // Another machine: its own empty local file, the same server.
  auto other = tune::open_shared_store(tune::SqliteStore::open((dir / "b.db").string()), url);
  if (!other.ok()) return other.status();
  tune::PostgresOptions po;
  po.conninfo = url;
  TUNE_ASSIGN_OR_RETURN(const std::vector<tune::CacheRow> rows,
                        tune::PostgresStore::open(po)->rows({.kernel = "pg_consumer_kernel"}));
  if (rows.size() != 4)
    return tune::Status(tune::StatusCode::internal,
                        "the server holds " + std::to_string(rows.size()) + " rows, not 4");
  if ((*other)->load(rows.front().key).size() != 4)
    return tune::Status(tune::StatusCode::internal, "the other machine did not read the rows");
  std::printf("postgresql consumer: best {%s}, 4 rows on the server\n", best.to_string().c_str());
  return {};
}

}  // namespace

int main() {
  tune::testing::PgServer server;  // exits 77 when the server programs are absent
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("libtune-pg-consumer-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const tune::Status s = run(server.new_database("consumer"), dir);
  std::filesystem::remove_all(dir);
  if (!s.ok()) std::printf("%s\n", s.to_string().c_str());
  return s.ok() ? 0 : 1;
}
