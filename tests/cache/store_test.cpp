// SqliteStore on real files: round trips, identity of a stored timing, modes, the
// environment, the library side of `tune cache`, threads.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cache/cache_env.hpp"
#include "cache/shared_tier.hpp"
#include "cache/store_schema.hpp"
#include "cache_test_util.hpp"
#include "scoped_env.hpp"
#include "tune/config.hpp"
#include "tune/sqlite_store.hpp"

namespace tune {
namespace {

using EnvVar = tune::testing::ScopedEnv;

TEST_CASE("a fresh file round-trips rows across store instances") {
  TempDir dir;
  std::string path = dir.file("sub/dir/tune.db");  // directories are created
  LogCapture log;
  std::vector<StoredResult> rows = {ok_row("BM=64", 1200.0), ok_row("BM=128", 900.0)};
  StoredResult failed;
  failed.config = "BM=256";
  failed.status = StatusCode::compile_error;
  failed.reason = "too many registers\nline 2";
  failed.stats.median = std::numeric_limits<double>::infinity();
  failed.unix_time = 1700000001;
  rows.push_back(failed);
  {
    auto store = SqliteStore::open(path);
    CHECK_FALSE(store->in_memory());
    CHECK(store->writable());
    store->save(test_key(), rows);
  }
  auto store = SqliteStore::open(path);
  std::vector<StoredResult> back = store->load(test_key());
  REQUIRE(back.size() == 3);
  // Ordered by config text.
  CHECK(back[0].config == "BM=128");
  CHECK(back[0].stats.median == 900.0);
  CHECK(back[0].stats.p20 == doctest::Approx(855.0));
  CHECK(back[0].stats.count == 20);
  CHECK(back[0].unix_time == 1700000000);
  CHECK(back[2].config == "BM=64");
  CHECK(back[1].config == "BM=256");
  CHECK(back[1].status == StatusCode::compile_error);
  CHECK(back[1].reason == "too many registers\nline 2");
  CHECK(std::isinf(back[1].stats.median));
  CHECK(log.warnings().empty());

  RawDb raw(path);
  CHECK(raw.scalar("PRAGMA journal_mode") == "wal");
  CHECK(raw.scalar("PRAGMA user_version") == std::to_string(kCacheSchemaVersion));
  CHECK(raw.scalar("PRAGMA application_id") == std::to_string(kCacheApplicationId));
  CHECK(raw.scalar("SELECT count(*) FROM results") == "3");
}

TEST_CASE("a timing is valid only for its kernel, source, key, device and toolchain") {
  TempDir dir;
  auto store = SqliteStore::open(dir.file("tune.db"));
  store->save(test_key(), std::vector{ok_row("BM=64", 100.0)});
  CHECK(store->load(test_key()).size() == 1);

  StoreKey k = test_key();
  k.source_hash ^= 1;  // the kernel source changed
  CHECK(store->load(k).empty());
  k = test_key();
  k.toolchain = "simc 2|libtune 0.1.0";
  CHECK(store->load(k).empty());
  k = test_key();
  k.device = "simulated|sim|s2|1.0";
  CHECK(store->load(k).empty());
  k = test_key();
  k.kernel = "reduce_sum";
  CHECK(store->load(k).empty());
  CHECK(store->load(test_key("n=2048|f32")).empty());
}

TEST_CASE("saving a config again replaces its row; others stay") {
  TempDir dir;
  auto store = SqliteStore::open(dir.file("tune.db"));
  store->save(test_key(), std::vector{ok_row("BM=64", 100.0), ok_row("BM=32", 300.0)});
  store->save(test_key(), std::vector{ok_row("BM=64", 50.0, 7)});
  auto back = store->load(test_key());
  REQUIRE(back.size() == 2);
  CHECK(back[0].config == "BM=32");
  CHECK(back[1].config == "BM=64");
  CHECK(back[1].stats.median == 50.0);
  CHECK(back[1].stats.count == 7);
  RawDb raw(dir.file("tune.db"));
  CHECK(raw.scalar("SELECT count(*) FROM results") == "2");
}

TEST_CASE("rows that do not parse or are not sane are ignored with a warning") {
  TempDir dir;
  std::string path = dir.file("tune.db");
  SqliteStore::open(path)->save(test_key(), std::vector{ok_row("BM=64", 100.0)});
  {
    RawDb raw(path);
    std::string cols =
        "INSERT INTO results (kernel, source_hash, key, device, toolchain, config, status, "
        "reason, count, min, p20, median, p80, max, mean, unix_time) SELECT kernel, "
        "source_hash, key, device, toolchain, ";
    // A config that does not parse, an unknown status, an ok row with no samples, negative
    // and NaN (NULL) statistics.
    raw.exec(cols + "'BM=64,,=', status, reason, count, min, p20, median, p80, max, mean, " +
             "unix_time FROM results WHERE config = 'BM=64'");
    raw.exec(cols + "'BM=16', 'exploded', reason, count, min, p20, median, p80, max, mean, " +
             "unix_time FROM results WHERE config = 'BM=64'");
    raw.exec(cols + "'BM=8', status, reason, 0, min, p20, median, p80, max, mean, " +
             "unix_time FROM results WHERE config = 'BM=64'");
    raw.exec(cols + "'BM=4', status, reason, count, -5, p20, median, p80, max, mean, " +
             "unix_time FROM results WHERE config = 'BM=64'");
    raw.exec(cols + "'BM=2', status, reason, count, min, p20, NULL, p80, max, mean, " +
             "unix_time FROM results WHERE config = 'BM=64'");
    // Not canonical but valid: comes back canonical.
    raw.exec(cols + "' BM = 1 ', status, reason, count, min, p20, median, p80, max, mean, " +
             "unix_time FROM results WHERE config = 'BM=64'");
  }
  LogCapture log;
  auto store = SqliteStore::open(path);
  auto back = store->load(test_key());
  std::vector<std::string> configs;
  for (const auto& r : back) configs.push_back(r.config);
  INFO(log.all());
  // " BM = 1 " may or may not be accepted by Config::parse; when it is, it is canonical.
  bool spaced_ok = Config::parse(" BM = 1 ").ok();
  CHECK(back.size() == (spaced_ok ? 2u : 1u));
  CHECK(std::find(configs.begin(), configs.end(), "BM=64") != configs.end());
  if (spaced_ok) CHECK(std::find(configs.begin(), configs.end(), "BM=1") != configs.end());
  REQUIRE(log.warnings().size() == 1);  // one warning per load, naming file and count
  CHECK(log.any_contains(path));
  CHECK(log.any_contains(spaced_ok ? "ignored 5 stored rows" : "ignored 6 stored rows"));
  CHECK(log.any_contains("unknown status 'exploded'"));
}

TEST_CASE("readonly mode never writes the file and still serves its rows") {
  TempDir dir;
  std::string path = dir.file("tune.db");
  SqliteStore::open(path)->save(test_key(), std::vector{ok_row("BM=64", 100.0)});
  std::string before = cache_test::read_bytes(path);
  LogCapture log;
  {
    auto store = SqliteStore::open(path, {CacheMode::readonly});
    CHECK_FALSE(store->writable());
    CHECK(store->load(test_key()).size() == 1);
    store->save(test_key(), std::vector{ok_row("BM=32", 10.0)});
    CHECK(store->load(test_key()).size() == 1);
    CHECK_FALSE(store->clear().ok());
    CHECK_FALSE(store->import_json(R"({"format":"libtune-cache","version":1,"rows":[]})").ok());
  }
  CHECK(cache_test::read_bytes(path) == before);
  // SQLite may create the -wal/-shm companions to read safely beside a writer; nothing is
  // written to the WAL, and nothing else appears.
  for (const auto& f : cache_test::files_starting(dir.path(), "tune.db")) {
    bool companion = f == path + "-wal" || f == path + "-shm";
    CHECK_MESSAGE((f == path || companion), f);
    if (f == path + "-wal") CHECK(cache_test::fs::file_size(f) == 0);
  }
  CHECK(log.warnings().empty());
}

TEST_CASE("readonly mode on a missing file creates nothing") {
  TempDir dir;
  auto store = SqliteStore::open(dir.file("none/tune.db"), {CacheMode::readonly});
  CHECK(store->load(test_key()).empty());
  store->save(test_key(), std::vector{ok_row("BM=64", 100.0)});
  CHECK_FALSE(cache_test::fs::exists(dir.file("none")));
}

TEST_CASE("an in-memory store keeps rows for its own life") {
  auto store = SqliteStore::open(":memory:");
  CHECK(store->in_memory());
  store->save(test_key(), std::vector{ok_row("BM=64", 100.0)});
  CHECK(store->load(test_key()).size() == 1);
}

TEST_CASE("TUNE_CACHE values") {
  CacheMode m{};
  CHECK(parse_cache_mode("off", &m));
  CHECK(m == CacheMode::off);
  CHECK(parse_cache_mode("ReadOnly", &m));
  CHECK(m == CacheMode::readonly);
  CHECK(parse_cache_mode("readwrite", &m));
  CHECK(m == CacheMode::readwrite);
  CHECK(parse_cache_mode("0", &m));
  CHECK(m == CacheMode::off);
  CHECK_FALSE(parse_cache_mode("sometimes", &m));
  CHECK(to_string(CacheMode::readonly) == "readonly");

  {
    EnvVar v("TUNE_CACHE", nullptr);
    CHECK(cache_mode_from_env() == CacheMode::readwrite);
  }
  {
    EnvVar v("TUNE_CACHE", "readonly");
    CHECK(cache_mode_from_env() == CacheMode::readonly);
  }
  {
    EnvVar v("TUNE_CACHE", "sometimes");
    LogCapture log;
    CHECK(cache_mode_from_env() == CacheMode::readwrite);
    REQUIRE(log.warnings().size() == 1);
    CHECK(log.any_contains("TUNE_CACHE"));
    CHECK(log.any_contains("sometimes"));
  }
}

TEST_CASE("the cache path follows TUNE_CACHE_DIR, XDG_CACHE_HOME, HOME") {
  EnvVar a("TUNE_CACHE_DIR", "/x/tcd");
  EnvVar b("XDG_CACHE_HOME", "/x/xdg");
  EnvVar c("HOME", "/x/home");
  CHECK(default_cache_path() == "/x/tcd/tune.db");
  {
    EnvVar unset("TUNE_CACHE_DIR", nullptr);
    CHECK(default_cache_path() == "/x/xdg/libtune/tune.db");
    EnvVar unset2("XDG_CACHE_HOME", "");
    CHECK(default_cache_path() == "/x/home/.cache/libtune/tune.db");
    EnvVar unset3("HOME", nullptr);
    CHECK(default_cache_path().empty());
  }
}

TEST_CASE("open_store_from_env honours TUNE_CACHE and TUNE_CACHE_DIR") {
  TempDir dir;
  EnvVar d("TUNE_CACHE_DIR", dir.path().c_str());
  {
    EnvVar m("TUNE_CACHE", "off");
    CHECK(open_store_from_env() == nullptr);
  }
  {
    EnvVar m("TUNE_CACHE", "readwrite");
    auto store = open_store_from_env();
    REQUIRE(store != nullptr);
    CHECK(store->path() == dir.file("tune.db"));
    store->save(test_key(), std::vector{ok_row("BM=64", 100.0)});
    CHECK(cache_test::fs::exists(dir.file("tune.db")));
  }
  {
    EnvVar m("TUNE_CACHE", "readonly");
    auto store = open_store_from_env();
    REQUIRE(store != nullptr);
    CHECK(store->mode() == CacheMode::readonly);
    CHECK(store->load(test_key()).size() == 1);
  }
}

// cache_tests link the core alone: TUNE_STORE naming a server is one warning, and the local
// file is used (tests/postgres checks the component linked).
TEST_CASE("TUNE_STORE: unset keeps the local store; a server without the component warns") {
  auto local = SqliteStore::open(":memory:");
  {
    EnvVar s("TUNE_STORE", nullptr);
    LogCapture log;
    CHECK(with_shared_tier(local) == local);
    CHECK(log.warnings().empty());
  }
  for (const char* url : {"postgresql://u:hunter2@db/x", "postgres://u:hunter2@db/x"}) {
    EnvVar s("TUNE_STORE", url);
    LogCapture log;
    CHECK(with_shared_tier(local) == local);
    REQUIRE(log.warnings().size() == 1);
    CHECK(
        log.any_contains("built without its PostgreSQL component (CMake option "
                         "TUNE_POSTGRESQL)"));
    CHECK_FALSE(log.any_contains("hunter2"));
  }
  {
    EnvVar s("TUNE_STORE", "redis://u:hunter2@cache/0");
    LogCapture log;
    CHECK(with_shared_tier(local) == local);
    REQUIRE(log.warnings().size() == 1);
    CHECK(log.any_contains("TUNE_STORE is not a postgresql:// or postgres://"));
    CHECK_FALSE(log.any_contains("hunter2"));
  }
}

TEST_CASE("default_store is one shared instance, created on first use") {
  TempDir dir;
  EnvVar d("TUNE_CACHE_DIR", dir.path().c_str());
  EnvVar m("TUNE_CACHE", "readwrite");
  // Another case of this binary may have created it first when run in one process; under
  // CTest each case is its own process and this is the first use.
  std::shared_ptr<TuningStore> a, b;
  std::thread t([&] { a = default_store(); });
  b = default_store();
  t.join();
  REQUIRE(a != nullptr);
  CHECK(a == b);
}

TEST_CASE("list, rows, clear by kernel, key and device") {
  TempDir dir;
  auto store = SqliteStore::open(dir.file("tune.db"));
  StoreKey k1 = test_key("n=1024");
  StoreKey k2 = test_key("n=4096");
  StoreKey k3 = test_key("n=1024");
  k3.kernel = "matmul";
  k3.device = "cuda|NVIDIA H200|sm_90|560.1";
  StoredResult fail;
  fail.config = "BM=512";
  fail.status = StatusCode::out_of_resources;
  fail.reason = "shared memory";
  fail.stats.median = std::numeric_limits<double>::infinity();
  fail.unix_time = 1700000500;
  store->save(k1, std::vector{ok_row("BM=64", 100.0, 20, 1700000100), ok_row("BM=32", 80.0), fail});
  store->save(k2, std::vector{ok_row("BM=64", 10.0)});
  store->save(k3, std::vector{ok_row("BM=16,BN=16", 5.0), ok_row("BM=32,BN=16", 4.0)});

  auto entries = store->list_entries();
  REQUIRE(entries.ok());
  REQUIRE(entries->size() == 3);
  // Ordered by kernel then key.
  CHECK((*entries)[0].key.kernel == "matmul");
  CHECK((*entries)[0].best_config == "BM=32,BN=16");
  CHECK((*entries)[1].key.key == "n=1024");
  CHECK((*entries)[1].best_config == "BM=32");
  CHECK((*entries)[1].best_stats.median == 80.0);
  CHECK((*entries)[1].rows == 3);
  CHECK((*entries)[1].failed == 1);
  CHECK((*entries)[1].newest_time == 1700000500);

  auto rows = store->rows({"vector_add", "n=1024", ""});
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 3);
  CHECK((*rows)[0].result.config == "BM=32");  // by median, failures last
  CHECK((*rows)[1].result.config == "BM=64");
  CHECK((*rows)[2].result.status == StatusCode::out_of_resources);

  auto on_h200 = store->rows({"", "", "H200"});
  REQUIRE(on_h200.ok());
  CHECK(on_h200->size() == 2);

  auto cleared = store->clear({"", "", "H200"});
  REQUIRE(cleared.ok());
  CHECK(*cleared == 2);
  cleared = store->clear({"vector_add", "n=4096", ""});
  REQUIRE(cleared.ok());
  CHECK(*cleared == 1);
  CHECK(store->load(k2).empty());
  CHECK(store->load(k1).size() == 3);
  cleared = store->clear();
  REQUIRE(cleared.ok());
  CHECK(*cleared == 3);
  CHECK(store->list_entries()->empty());
}

TEST_CASE("threads sharing one store and threads with their own store") {
  TempDir dir;
  std::string path = dir.file("tune.db");
  LogCapture log;
  auto shared = SqliteStore::open(path);
  constexpr int kThreads = 4, kConfigs = 25;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto own = SqliteStore::open(path);
      TuningStore& store = t % 2 == 0 ? static_cast<TuningStore&>(*shared) : *own;
      for (int c = 0; c < kConfigs; ++c) {
        StoreKey k = test_key("thread=" + std::to_string(t));
        store.save(k, std::vector{ok_row("BM=" + std::to_string(c), 10.0 + c)});
        store.load(test_key("thread=" + std::to_string((t + 1) % kThreads)));
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t)
    CHECK(shared->load(test_key("thread=" + std::to_string(t))).size() == kConfigs);
  CHECK(log.warnings().empty());
}

}  // namespace
}  // namespace tune
