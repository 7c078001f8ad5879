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
#include "cache/row_rules.hpp"
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

TEST_CASE("rows saved on the server read back the same, on a fresh schema of version 2") {
  PgServer server;
  auto store = PostgresStore::open(options(server.new_database("rows")));
  const std::vector<StoredResult> rows{ok_row(64, 1200.5), ok_row(33, 1500.25), failed_row(7)};
  REQUIRE(store->put(key_of("n=1"), rows).ok());
  CHECK(server.scalar("SELECT version FROM tune_schema", "rows") == "2");
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
  // Saving again: a row of the same kind replaces only when newer (one row per config).
  StoredResult again = ok_row(64, 1100.0);
  REQUIRE(store->put(key_of("n=1"), std::vector{again}).ok());  // a full tie: the stored row stays
  CHECK(by_config(*store->fetch(key_of("n=1"))).at("BM=64").stats.median == 1200.5);
  again.unix_time += 1;
  REQUIRE(store->put(key_of("n=1"), std::vector{again}).ok());
  CHECK(by_config(*store->fetch(key_of("n=1"))).at("BM=64").stats.median == 1100.0);
  CHECK(server.scalar("SELECT count(*) FROM tune_results", "rows") == "3");
}

// A decision record of `tunings` tunings and `flips` flips (values every field of its own).
DecisionRecord record(std::uint32_t tunings, std::uint32_t flips) {
  DecisionRecord d;
  d.runner_up = "BM=32";
  d.margin = 0.25;
  d.confidence = 0.875;
  d.timing = "rotate";
  d.sustained_turns = 4;
  d.library_version = "0.1.0";
  d.unix_time = 1'780'000'500;
  d.tunings = tunings;
  d.flips = flips;
  return d;
}

TEST_CASE("decision records on the server: kept, replaced on the same measurement, migrated") {
  PgServer server;
  const std::string url = server.new_database("records");
  auto store = PostgresStore::open(options(url));
  StoredResult winner = ok_row(64, 1000.0);
  winner.decision = record(2, 1);
  REQUIRE(store->put(key_of("n=1"), std::vector{winner, ok_row(32, 1250.0)}).ok());
  auto m = by_config(*store->fetch(key_of("n=1")));
  REQUIRE(m.at("BM=64").decision.has_value());
  const DecisionRecord& d = *m.at("BM=64").decision;
  CHECK(d.runner_up == "BM=32");
  CHECK(d.margin == 0.25);
  CHECK(d.confidence == 0.875);
  CHECK(d.timing == "rotate");
  CHECK(d.sustained_turns == 4);
  CHECK(d.library_version == "0.1.0");
  CHECK(d.unix_time == 1'780'000'500);
  CHECK(d.tunings == 2);
  CHECK(d.flips == 1);
  CHECK_FALSE(m.at("BM=32").decision.has_value());

  // The same measurement with a newer record (a later tuning's) replaces the stored one; an
  // older record, or none, never erases it.
  winner.decision = record(3, 1);
  winner.decision->unix_time += 60;
  REQUIRE(store->put(key_of("n=1"), std::vector{winner}).ok());
  CHECK(by_config(*store->fetch(key_of("n=1"))).at("BM=64").decision->tunings == 3);
  StoredResult stale = winner;
  stale.decision = record(4, 1);
  REQUIRE(store->put(key_of("n=1"), std::vector{stale}).ok());
  CHECK(by_config(*store->fetch(key_of("n=1"))).at("BM=64").decision->tunings == 3);
  stale.decision.reset();
  REQUIRE(store->put(key_of("n=1"), std::vector{stale}).ok());
  CHECK(by_config(*store->fetch(key_of("n=1"))).at("BM=64").decision->tunings == 3);

  // The record moved: a batch whose newer record is on BM=32 clears BM=64's older one (the
  // row stays readable: its checksum is written with it).
  StoredResult runner = ok_row(32, 1250.0);
  runner.decision = record(4, 2);
  runner.decision->unix_time += 120;
  REQUIRE(store->put(key_of("n=1"), std::vector{stale, runner}).ok());
  m = by_config(*store->fetch(key_of("n=1")));
  REQUIRE(m.count("BM=64") == 1);
  CHECK_FALSE(m.at("BM=64").decision.has_value());
  REQUIRE(m.at("BM=32").decision.has_value());
  CHECK(m.at("BM=32").decision->tunings == 4);
  // A fresh tuning's row measured worse than the server's (fewer samples): the server's row
  // stays and takes the newer record.
  StoredResult thin = ok_row(32, 1300.0);
  thin.stats.count = 3;
  thin.decision = record(5, 2);
  thin.decision->unix_time += 180;
  REQUIRE(store->put(key_of("n=1"), std::vector{thin}).ok());
  m = by_config(*store->fetch(key_of("n=1")));
  CHECK(m.at("BM=32").stats.count == 10);
  CHECK(m.at("BM=32").stats.median == 1250.0);
  REQUIRE(m.at("BM=32").decision.has_value());
  CHECK(m.at("BM=32").decision->tunings == 5);
  // An older record elsewhere clears nothing newer.
  winner.decision = record(3, 1);
  StoredResult plain_runner = ok_row(32, 1250.0);
  REQUIRE(store->put(key_of("n=1"), std::vector{winner, plain_runner}).ok());
  m = by_config(*store->fetch(key_of("n=1")));
  CHECK(m.at("BM=32").decision->tunings == 5);
  CHECK(m.at("BM=64").decision->tunings == 3);

  // A record altered on the server fails the row's checksum.
  winner.decision = record(3, 1);
  REQUIRE(store->put(key_of("n=1"), std::vector{winner}).ok());
  server.sql(
      "UPDATE tune_results SET decision = replace(decision, '\"flips\":1', "
      "'\"flips\":0') WHERE config = 'BM=64'",
      "records");
  {
    LogCapture log;
    auto rows = store->load(key_of("n=1"));
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].config == "BM=32");
  }

  // A server at version 1 (no decision column) is migrated on the next open, its rows kept
  // without records.
  const std::string old_url = server.new_database("old");
  REQUIRE(PostgresStore::open(options(old_url))
              ->put(key_of("n=2"), std::vector{ok_row(16, 900.0)})
              .ok());
  server.sql("ALTER TABLE tune_results DROP COLUMN decision; UPDATE tune_schema SET version = 1",
             "old");
  auto migrated = PostgresStore::open(options(old_url));
  auto rows = migrated->fetch(key_of("n=2"));
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 1);
  CHECK_FALSE(rows->front().decision.has_value());
  CHECK(server.scalar("SELECT version FROM tune_schema", "old") == "2");
  winner.decision = record(1, 0);
  REQUIRE(migrated->put(key_of("n=2"), std::vector{winner}).ok());
  CHECK(by_config(*migrated->fetch(key_of("n=2"))).at("BM=64").decision->tunings == 1);
}

// Every kind of row a machine writes: failed or measured, with the verified flag or not (the
// rule ignores it on a failure); few or many samples; older or newer.
std::vector<StoredResult> row_kinds() {
  std::vector<StoredResult> kinds;
  for (bool ok : {false, true})
    for (bool verified : {false, true})
      for (std::uint32_t count : {5u, 20u})
        for (std::int64_t when : {1'780'000'000, 1'780'000'100})
          for (int decided : {0, 1, 2}) {  // no record, an older one, a newer one
            StoredResult r = ok ? ok_row(1, 100.0 + count) : failed_row(1);
            r.stats.count = count;  // a failure's: its attempts
            r.verified = verified;
            r.unix_time = when;
            if (decided > 0) {
              r.decision = record(1, 0);
              r.decision->unix_time += decided;
            }
            kinds.push_back(r);
          }
  return kinds;
}

TEST_CASE("the server keeps import's provenance rule on every kind of pair of rows") {
  PgServer server;
  auto store = PostgresStore::open(options(server.new_database("provenance")));
  const std::vector<StoredResult> kinds = row_kinds();
  // One config per ordered pair (stored, incoming).
  std::vector<StoredResult> stored, incoming, expected;
  std::size_t expect_kept = 0;
  for (std::size_t a = 0; a < kinds.size(); ++a)
    for (std::size_t b = 0; b < kinds.size(); ++b) {
      const std::string config = Config().set("BM", static_cast<int>(a * 100 + b)).to_string();
      StoredResult s = kinds[a], in = kinds[b];
      s.config = in.config = config;
      // Tells which row the server holds.
      if (in.status == StatusCode::ok)
        in.stats.median += 0.5;
      else
        in.reason = "incoming";
      stored.push_back(s);
      incoming.push_back(in);
      const bool better = has_better_provenance(in, s);
      expected.push_back(better ? in : s);
      // A newer record goes onto the server's row even where that row stays.
      if (in.decision && decision_time(expected.back()) < decision_time(in))
        expected.back().decision = in.decision;
      expect_kept += better ? 0 : 1;
    }
  REQUIRE(store->put(key_of("n=1"), stored).ok());
  // Rows with records and rows without in two batches: a batch carrying a record also clears
  // older records from the rows it sends without one (the moved record's rule, tested above).
  std::vector<StoredResult> with, without;
  for (const StoredResult& in : incoming) (in.decision ? with : without).push_back(in);
  std::size_t kept = 0, kept_too = 0;
  REQUIRE(store->put(key_of("n=1"), with, &kept).ok());
  REQUIRE(store->put(key_of("n=1"), without, &kept_too).ok());
  CHECK(kept + kept_too == expect_kept);
  const auto held = by_config(*store->fetch(key_of("n=1")));
  REQUIRE(held.size() == expected.size());
  for (const StoredResult& e : expected) {
    CAPTURE(e.config);
    const StoredResult& h = held.at(e.config);
    CHECK(h.status == e.status);
    CHECK(h.verified == e.verified);
    CHECK(h.stats.count == e.stats.count);
    CHECK(h.unix_time == e.unix_time);
    CHECK(h.reason == e.reason);
    CHECK(decision_time(h) == decision_time(e));
    if (e.status == StatusCode::ok) CHECK(h.stats.median == e.stats.median);
  }
}

TEST_CASE("two machines writing one key never replace the better-measured row") {
  PgServer server;
  const std::string url = server.new_database("conflict");
  TempDir dir;
  auto a = SharedStore::open(SqliteStore::open((dir.path / "a.db").string()),
                             PostgresStore::open(options(url)));
  auto b = SharedStore::open(SqliteStore::open((dir.path / "b.db").string()),
                             PostgresStore::open(options(url)));
  StoredResult a64 = ok_row(64, 1000);  // verified, 10 samples
  a64.stats.count = 50;
  a->save(key_of("n=1"), std::vector{a64});
  // Machine B measured BM=64 worse (fewer samples, unchecked) and BM=32 first.
  StoredResult b64 = ok_row(63, 900);
  b64.config = a64.config;
  b64.unix_time += 10;  // newer, but of worse provenance
  b->save(key_of("n=1"), std::vector{b64, ok_row(32, 1500)});
  auto server_rows = by_config(*b->remote()->fetch(key_of("n=1")));
  REQUIRE(server_rows.size() == 2);
  CHECK(server_rows.at(a64.config).stats.count == 50);  // A's row stays
  CHECK(server_rows.at(a64.config).verified);
  CHECK(server_rows.count("BM=32") == 1);  // B's new config arrives
  // B's local file adopts the fleet's better row, so its next process decides as A does.
  auto b_local = by_config(b->local()->load(key_of("n=1")));
  CHECK(b_local.at(a64.config).stats.count == 50);
  CHECK(b_local.at("BM=32").stats.median == 1500);
  // A failure on A does not replace B's measurement; a better measurement on B does replace A's.
  StoredResult a32 = failed_row(32);
  a32.unix_time += 1'000'000;
  a->save(key_of("n=1"), std::vector{a32});
  StoredResult b64_better = a64;
  b64_better.stats.count = 80;
  b64_better.stats.median = 950;
  b->save(key_of("n=1"), std::vector{b64_better});
  server_rows = by_config(*a->remote()->fetch(key_of("n=1")));
  CHECK(server_rows.at("BM=32").status == StatusCode::ok);
  CHECK(server_rows.at(a64.config).stats.count == 80);
  CHECK(a->queued() == 0);
  CHECK(b->queued() == 0);
}

TEST_CASE("a damaged row on the server is replaced by a valid one of any provenance") {
  PgServer server;
  const std::string url = server.new_database("repair");
  auto store = PostgresStore::open(options(url));
  StoredResult many = ok_row(64, 1000);
  many.stats.count = 500;
  REQUIRE(store->put(key_of("n=1"), std::vector{many}).ok());
  server.sql("UPDATE tune_results SET median = 1.5", "repair");  // the checksum no longer matches
  LogCapture log;
  std::size_t kept = 9;
  REQUIRE(store->put(key_of("n=1"), std::vector{ok_row(64, 1200)}, &kept).ok());  // 10 samples
  CHECK(kept == 0);
  const auto held = by_config(*store->fetch(key_of("n=1")));
  REQUIRE(held.size() == 1);
  CHECK(held.at("BM=64").stats.count == 10);
  CHECK(held.at("BM=64").stats.median == 1200);
  CHECK(log.count(LogLevel::warning, "") == 0);  // the damaged row was replaced, never read
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
  CHECK(r.status().message().find("schema version 99, newer than this libtune's (2)") !=
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

TEST_CASE("a read-only role reads a version-1 server as it is, its rows without records") {
  PgServer server;
  const std::string url = server.new_database("ro1");
  REQUIRE(PostgresStore::open(options(url))->put(key_of("n=1"), std::vector{ok_row(64, 10)}).ok());
  server.sql("ALTER TABLE tune_results DROP COLUMN decision; UPDATE tune_schema SET version = 1",
             "ro1");
  server.sql("CREATE ROLE reader1 LOGIN", "ro1");
  server.sql("GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader1", "ro1");
  auto reader = PostgresStore::open(options(server.url("ro1", "reader1")));
  auto rows = reader->fetch(key_of("n=1"));
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 1);
  CHECK_FALSE(rows->front().decision.has_value());
  CHECK_FALSE(reader->writable());
  auto all = reader->rows();
  REQUIRE(all.ok());
  CHECK(all->size() == 1);
  CHECK(server.scalar("SELECT version FROM tune_schema", "ro1") == "1");
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
