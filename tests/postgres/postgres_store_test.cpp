// PostgresStore and SharedStore against a real server (pg_server.hpp): rows, schema, bad rows,
// roles, timeouts, outages and claims. Label postgres; skipped when the server programs are
// absent.
#include <doctest/doctest.h>

#include <filesystem>
#include <limits>
#include <map>
#include <string>
#include <thread>

#include "../cache/cache_test_util.hpp"
#include "log_capture.hpp"
#include "loopback_listener.hpp"
#include "pg_server.hpp"
#include "temp_dir.hpp"
#include "tune/config.hpp"
#include "tune/postgres_store.hpp"
#include "tune/sqlite_store.hpp"
#include "watchdog.hpp"

namespace tune {
namespace {

using testing::LogCapture;
using testing::PgServer;
using testing::TempDir;
using testing::Watchdog;

StoreKey key_of(const std::string& key) { return cache_test::test_key(key); }

// An ok row of config BM=<bm>, verified when bm is even.
StoredResult ok_row(int bm, double median) {
  StoredResult r = cache_test::ok_row(Config().set("BM", bm).to_string(), median, 10);
  r.verified = bm % 2 == 0;
  return r;
}

StoredResult failed_row(int bm) {
  StoredResult r;
  r.config = Config().set("BM", bm).to_string();
  r.status = StatusCode::compile_error;
  r.reason = "too many registers";
  r.stats.min = r.stats.p20 = r.stats.median = r.stats.p80 = r.stats.max = r.stats.mean =
      std::numeric_limits<double>::infinity();
  r.unix_time = 1'780'000'000;
  return r;
}

PostgresOptions options(const std::string& url) {
  PostgresOptions o;
  o.conninfo = url;
  o.connect_timeout = std::chrono::milliseconds(2000);
  o.statement_timeout = std::chrono::milliseconds(1000);
  o.retry_after = std::chrono::milliseconds(0);  // tests decide when to try again
  return o;
}

std::map<std::string, StoredResult> by_config(const std::vector<StoredResult>& rows) {
  std::map<std::string, StoredResult> m;
  for (const auto& r : rows) m[r.config] = r;
  return m;
}

TEST_CASE("rows saved on the server read back the same, on a fresh schema of version 1") {
  PgServer server;
  auto store = PostgresStore::open(options(server.new_database("rows")));
  const std::vector<StoredResult> rows{ok_row(64, 1200.5), ok_row(33, 1500.25), failed_row(7)};
  REQUIRE(store->put(key_of("n=1"), rows).ok());
  CHECK(server.scalar("SELECT version FROM tune_schema", "rows") == "1");
  auto back = store->fetch(key_of("n=1"));
  REQUIRE(back.ok());
  auto m = by_config(*back);
  REQUIRE(m.size() == 3);
  for (const auto& r : rows) {
    const StoredResult& b = m.at(r.config);
    CHECK(b.status == r.status);
    CHECK(b.reason == r.reason);
    CHECK(b.stats.count == r.stats.count);
    CHECK(b.stats.median == r.stats.median);  // exact: the text round trip loses nothing
    CHECK(b.stats.max == r.stats.max);
    CHECK(b.unix_time == r.unix_time);
    CHECK(b.verified == r.verified);
  }
  // Another key, another device: nothing.
  StoreKey other = key_of("n=1");
  other.device = "sim|other|s1|1";
  CHECK(store->fetch(other)->empty());
  // Saving again replaces (one row per config).
  REQUIRE(store->put(key_of("n=1"), std::vector<StoredResult>{ok_row(64, 1100.0)}).ok());
  CHECK(by_config(*store->fetch(key_of("n=1"))).at("BM=64").stats.median == 1100.0);
  CHECK(server.scalar("SELECT count(*) FROM tune_results", "rows") == "3");
}

TEST_CASE("a server whose schema is newer is refused with a clear error, and not written") {
  PgServer server;
  const std::string url = server.new_database("newer");
  REQUIRE(PostgresStore::open(options(url))->put(key_of("n=1"), std::vector{ok_row(8, 900)}).ok());
  server.sql("UPDATE tune_schema SET version = 99", "newer");
  auto store = PostgresStore::open(options(url));
  auto r = store->fetch(key_of("n=1"));
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::failed_precondition);
  CHECK(r.status().message().find("schema version 99, newer than this libtune's (1)") !=
        std::string::npos);
  CHECK(!store->put(key_of("n=2"), std::vector{ok_row(8, 900)}).ok());
  CHECK(server.scalar("SELECT count(*) FROM tune_results", "newer") == "1");
  CHECK(server.scalar("SELECT version FROM tune_schema", "newer") == "99");
}

TEST_CASE("malformed rows injected in the server are refused with the damaged file's warning") {
  PgServer server;
  const std::string url = server.new_database("bad");
  auto store = PostgresStore::open(options(url));
  REQUIRE(store->put(key_of("n=1"), std::vector{ok_row(64, 1000), ok_row(32, 2000)}).ok());
  // An altered statistic (the checksum no longer matches), a config that does not parse, an
  // ok row with a negative time and an unknown status (the last three with no checksum).
  server.sql("UPDATE tune_results SET median = 1.5 WHERE config = 'BM=32'", "bad");
  const std::string insert =
      "INSERT INTO tune_results (kernel, source_hash, key, device, toolchain, config, status, "
      "reason, count, min, p20, median, p80, max, mean, unix_time, checksum, verified) "
      "SELECT kernel, source_hash, key, device, toolchain, ";
  server.sql(insert +
                 "'BM=', status, reason, count, min, p20, median, p80, max, mean, unix_time, "
                 "NULL, verified FROM tune_results WHERE config = 'BM=64'",
             "bad");
  server.sql(insert +
                 "'BM=16', status, reason, count, -5, -5, -5, -5, -5, -5, unix_time, NULL, "
                 "verified FROM tune_results WHERE config = 'BM=64'",
             "bad");
  server.sql(insert +
                 "'BM=8', 'bogus', reason, count, min, p20, median, p80, max, mean, unix_time, "
                 "NULL, verified FROM tune_results WHERE config = 'BM=64'",
             "bad");
  LogCapture log;
  auto rows = store->load(key_of("n=1"));
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].config == "BM=64");
  CHECK(log.count(LogLevel::warning, "(kernel vector_add, key n=1): ignored 4 stored rows") == 1);
  CHECK(log.count(LogLevel::warning, "checksum mismatch (the row was altered)") == 1);
  CHECK(log.count(LogLevel::warning, "config does not parse") == 1);
  auto listed = store->rows();
  REQUIRE(listed.ok());
  CHECK(listed->size() == 1);
}

TEST_CASE("a read-only role reads, is never written through, and claims are granted") {
  PgServer server;
  const std::string url = server.new_database("ro");
  REQUIRE(PostgresStore::open(options(url))->put(key_of("n=1"), std::vector{ok_row(64, 10)}).ok());
  server.sql("CREATE ROLE reader LOGIN", "ro");
  server.sql("GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader", "ro");
  auto reader = PostgresStore::open(options(server.url("ro", "reader")));
  auto rows = reader->fetch(key_of("n=1"));
  REQUIRE(rows.ok());
  CHECK(rows->size() == 1);
  CHECK_FALSE(reader->writable());
  Status put = reader->put(key_of("n=2"), std::vector{ok_row(64, 10)});
  CHECK(put.code() == StatusCode::failed_precondition);
  CHECK(put.message().find("read-only") != std::string::npos);
  CHECK(server.scalar("SELECT count(*) FROM tune_results", "ro") == "1");

  // In front of a local file: the result is kept there, nothing is queued, one warning.
  TempDir dir;
  LogCapture log;
  auto shared = SharedStore::open(SqliteStore::open((dir.path / "tune.db").string()), reader);
  shared->save(key_of("n=3"), std::vector{ok_row(16, 20)});
  shared->save(key_of("n=4"), std::vector{ok_row(16, 20)});
  CHECK(shared->queued() == 0);
  CHECK(shared->local()->load(key_of("n=3")).size() == 1);
  CHECK(log.count(LogLevel::warning, "read-only") == 1);
  CHECK(shared->try_claim(key_of("n=5"), std::chrono::milliseconds(1000)));  // cannot record
}

// A SharedStore whose server at 127.0.0.1:`port` never answers (`what` it does): every call
// goes on from the local file within the connect timeout, with one warning and no password.
void expect_one_connect_timeout(int port, const std::string& what) {
  const std::string url = "postgresql://tune:s3cret-pw@127.0.0.1:" + std::to_string(port) + "/db";
  PostgresOptions o = options(url);
  o.connect_timeout = std::chrono::milliseconds(500);
  o.retry_after = std::chrono::milliseconds(60000);
  TempDir dir;
  LogCapture log;
  Watchdog dog(what, 30);  // a hang would last minutes
  auto shared =
      SharedStore::open(SqliteStore::open((dir.path / "tune.db").string()), PostgresStore::open(o));
  CHECK(shared->load(key_of("n=1")).empty());
  shared->save(key_of("n=1"), std::vector{ok_row(64, 10)});
  CHECK(shared->try_claim(key_of("n=2"), std::chrono::milliseconds(1000)));
  shared->release_claim(key_of("n=2"));
  CHECK(shared->load(key_of("n=1")).size() == 1);  // from the local file
  CHECK(shared->queued() == 1);
  CHECK(log.count(LogLevel::warning, "") == 1);
  CHECK(log.count(LogLevel::warning, "connect timeout") == 1);
  CHECK(log.count(LogLevel::warning, "postgresql://tune@127.0.0.1:") == 1);
  CHECK(log.all().find("s3cret") == std::string::npos);
}

TEST_CASE("a server that never answers costs one connect timeout, one warning, no password") {
  // A listening socket nobody accepts on: the connection is made by the kernel, the server's
  // greeting never comes.
  testing::LoopbackListener silent(16);
  expect_one_connect_timeout(silent.port(), "a black-holed server");
}

TEST_CASE("an address that drops the connection costs one connect timeout, one warning") {
  // Every SYN dropped, as by an unreachable or firewalled address: the TCP connection itself
  // never completes.
  testing::DroppingPort dropping;
  expect_one_connect_timeout(dropping.port(), "an address that drops connections");
}

TEST_CASE("a statement slower than the statement timeout is given up, the call goes on") {
  PgServer server;
  const std::string url = server.new_database("slow");
  auto store = PostgresStore::open(options(url));
  REQUIRE(store->put(key_of("n=1"), std::vector{ok_row(64, 10)}).ok());
  // Another session holds the table: every read of it waits.
  PGconn* holder = PQconnectdb(url.c_str());
  REQUIRE(PQstatus(holder) == CONNECTION_OK);
  PQclear(PQexec(holder, "BEGIN; LOCK TABLE tune_results IN ACCESS EXCLUSIVE MODE"));
  Watchdog dog("a statement on a locked table", 30);
  auto r = store->fetch(key_of("n=1"));
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::unavailable);
  CHECK(r.status().message().find("statement timeout") != std::string::npos);
  PQclear(PQexec(holder, "ROLLBACK"));
  PQfinish(holder);
  CHECK(store->fetch(key_of("n=1"))->size() == 1);  // reconnects
}

TEST_CASE("local in front: a miss is served by the server and copied into the local file") {
  PgServer server;
  const std::string url = server.new_database("front");
  TempDir a, b;
  auto machine_a = SharedStore::open(SqliteStore::open((a.path / "tune.db").string()),
                                     PostgresStore::open(options(url)));
  machine_a->save(key_of("n=1"), std::vector{ok_row(64, 10), failed_row(8)});
  CHECK(server.scalar("SELECT count(*) FROM tune_results", "front") == "2");

  auto local_b = SqliteStore::open((b.path / "tune.db").string());
  auto machine_b = SharedStore::open(local_b, PostgresStore::open(options(url)));
  CHECK(local_b->load(key_of("n=1")).empty());
  CHECK(machine_b->load(key_of("n=1")).size() == 2);  // from the server
  CHECK(local_b->load(key_of("n=1")).size() == 2);    // copied
  server.stop();
  LogCapture log;
  CHECK(machine_b->load(key_of("n=1")).size() == 2);  // the local file alone
  CHECK(log.all().empty());
}

TEST_CASE("the server killed mid-way and restarted: no hang, queued writes arrive") {
  PgServer server;
  const std::string url = server.new_database("outage");
  TempDir dir;
  const std::string db = (dir.path / "tune.db").string();
  Watchdog dog("writes through a server outage", 60);
  {
    LogCapture log;
    auto shared = SharedStore::open(SqliteStore::open(db), PostgresStore::open(options(url)));
    shared->save(key_of("n=1"), std::vector{ok_row(64, 10)});
    server.stop();  // killed: -m immediate
    shared->save(key_of("n=2"), std::vector{ok_row(32, 20)});
    shared->save(key_of("n=3"), std::vector{ok_row(16, 30)});
    CHECK(shared->load(key_of("n=2")).size() == 1);
    CHECK(shared->queued() == 2);
    CHECK(log.count(LogLevel::warning, "new results are queued") == 1);
    CHECK(std::filesystem::exists(db + ".pg-outbox"));
  }  // the process "exits" with the server down: the queue stays in the file
  server.start();
  auto next = SharedStore::open(SqliteStore::open(db), PostgresStore::open(options(url)));
  CHECK(next->queued() == 2);
  CHECK(next->flush() == 0);
  CHECK_FALSE(std::filesystem::exists(db + ".pg-outbox"));  // removed once empty
  CHECK(server.scalar("SELECT count(*) FROM tune_results", "outage") == "3");
  CHECK(server.scalar("SELECT config FROM tune_results WHERE key = 'n=3'", "outage") == "BM=16");
}

TEST_CASE("claims across machines: one owner at a time, a dead machine's claim expires") {
  PgServer server;
  const std::string url = server.new_database("claims");
  auto a = PostgresStore::open(options(url));
  auto b = PostgresStore::open(options(url));
  const StoreKey k = key_of("n=1");
  CHECK(a->try_claim(k, std::chrono::milliseconds(60000)));
  CHECK_FALSE(b->try_claim(k, std::chrono::milliseconds(60000)));
  CHECK(a->try_claim(k, std::chrono::milliseconds(60000)));  // renewed by its owner
  a->release_claim(k);
  CHECK(b->try_claim(k, std::chrono::milliseconds(200)));
  // b "dies" holding it: once its ttl has passed on the server's clock, a is granted.
  CHECK_FALSE(a->try_claim(k, std::chrono::milliseconds(60000)));
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  CHECK(a->try_claim(k, std::chrono::milliseconds(60000)));
}

}  // namespace
}  // namespace tune
