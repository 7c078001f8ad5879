// The `verified` column (schema version 2): whether each row's output was checked, kept by the
// store, its checksum, the JSON export and import and `tune cache list`'s summary; version-1
// databases read as not checked, read-only as they are and migrated on a readwrite open.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cache/row_rules.hpp"
#include "cache/store_schema.hpp"
#include "cache_test_util.hpp"
#include "tune/sqlite_store.hpp"

namespace tune {
namespace {

StoredResult verified_row(std::string config, double median, std::uint32_t count = 20) {
  StoredResult r = ok_row(std::move(config), median, count);
  r.verified = true;
  return r;
}

StoredResult wrong_row(std::string config) {
  StoredResult r;
  r.config = std::move(config);
  r.status = StatusCode::wrong_output;
  r.reason = "output 'y' differs at 3 of 1024 elements";
  r.verified = true;
  r.unix_time = 1700000000;
  return r;
}

const StoredResult* find(const std::vector<StoredResult>& rows, const std::string& config) {
  for (const auto& r : rows)
    if (r.config == config) return &r;
  return nullptr;
}

// Makes the store's file what a version-1 libtune wrote: no verified (nor decision) column,
// user_version 1.
void downgrade_to_version_1(const std::string& path) {
  RawDb raw(path);
  raw.exec("ALTER TABLE results DROP COLUMN decision");
  raw.exec("ALTER TABLE results DROP COLUMN verified");
  raw.exec("PRAGMA user_version = 1");
}

TEST_CASE("verification states: names, and the state of a row") {
  CHECK(to_string(Verification::verified) == "verified");
  CHECK(to_string(Verification::not_checked) == "not_checked");
  CHECK(to_string(Verification::wrong_output) == "wrong_output");
  CHECK(verification_of(StatusCode::ok, true) == Verification::verified);
  CHECK(verification_of(StatusCode::ok, false) == Verification::not_checked);
  CHECK(verification_of(StatusCode::wrong_output, true) == Verification::wrong_output);
  CHECK(verification_of(StatusCode::wrong_output, false) == Verification::wrong_output);
  CHECK(verification_of(StatusCode::compile_error, false) == Verification::not_checked);
}

TEST_CASE("the store keeps each row's verification, and list_entries counts it") {
  TempDir dir;
  const std::string path = dir.file("tune.db");
  auto store = SqliteStore::open(path);
  store->save(test_key(),
              std::vector{verified_row("BM=64", 100.0), ok_row("BM=32", 90.0), wrong_row("BM=16")});
  auto back = store->load(test_key());
  REQUIRE(back.size() == 3);
  CHECK(find(back, "BM=64")->verified);
  CHECK_FALSE(find(back, "BM=32")->verified);
  CHECK(find(back, "BM=16")->verified);
  CHECK(find(back, "BM=16")->status == StatusCode::wrong_output);
  RawDb raw(path);
  CHECK(raw.scalar("SELECT verified FROM results WHERE config = 'BM=64'") == "1");
  CHECK(raw.scalar("SELECT verified FROM results WHERE config = 'BM=32'") == "0");

  auto entries = store->list_entries();
  REQUIRE(entries.ok());
  REQUIRE(entries->size() == 1);
  CHECK(entries->front().best_config == "BM=32");  // the fastest, not checked
  CHECK_FALSE(entries->front().best_verified);
  CHECK(entries->front().verified == 1);
  CHECK(entries->front().failed == 1);
}

TEST_CASE("faults: a verified flag set or mangled behind the store's back is refused") {
  TempDir dir;
  const std::string path = dir.file("tune.db");
  auto store = SqliteStore::open(path);
  store->save(test_key(),
              std::vector{ok_row("BM=64", 100.0), ok_row("BM=32", 120.0), ok_row("BM=16", 130.0)});
  {
    RawDb raw(path);
    // A row that claims a check it never had no longer matches its checksum.
    raw.exec("UPDATE results SET verified = 1 WHERE config = 'BM=64'");
    raw.exec("UPDATE results SET verified = 2 WHERE config = 'BM=32'");
    raw.exec("UPDATE results SET verified = 'yes' WHERE config = 'BM=16'");
  }
  LogCapture log;
  auto back = SqliteStore::open(path)->load(test_key());
  CHECK(back.empty());
  INFO(log.all());
  CHECK(log.any_contains("checksum mismatch"));
  CHECK(log.any_contains("column verified holds 2"));
  CHECK(log.any_contains("column verified holds text"));
}

TEST_CASE(
    "export and import carry the verification; a verified row is not replaced by an "
    "unchecked one") {
  TempDir dir;
  auto a = SqliteStore::open(dir.file("a.db"));
  a->save(test_key(),
          std::vector{verified_row("BM=64", 100.0), ok_row("BM=32", 90.0), wrong_row("BM=16")});
  auto text = a->export_json();
  REQUIRE(text.ok());
  CHECK(text->find("\"verified\": true") != std::string::npos);
  CHECK(text->find("\"verification\": \"not_checked\"") != std::string::npos);
  CHECK(text->find("\"verification\": \"wrong_output\"") != std::string::npos);

  auto b = SqliteStore::open(dir.file("b.db"));
  // b holds BM=64 unchecked with more samples: the verified row replaces it all the same.
  b->save(test_key(), std::vector{ok_row("BM=64", 95.0, 500)});
  auto stats = b->import_json(*text);
  REQUIRE(stats.ok());
  CHECK(stats->added == 2);
  CHECK(stats->replaced == 1);
  auto back = b->load(test_key());
  REQUIRE(back.size() == 3);
  CHECK(find(back, "BM=64")->verified);
  CHECK(find(back, "BM=64")->stats.median == 100.0);
  CHECK_FALSE(find(back, "BM=32")->verified);
  CHECK(find(back, "BM=16")->status == StatusCode::wrong_output);

  // And the other way: an unchecked row never replaces a verified one.
  CHECK_FALSE(has_better_provenance(ok_row("BM=64", 95.0, 500), verified_row("BM=64", 100.0)));
  CHECK(has_better_provenance(verified_row("BM=64", 100.0, 5), ok_row("BM=64", 95.0, 500)));

  // Without the field (an export of a libtune that did not write it) rows are not checked; a
  // field of the wrong type is refused.
  const std::string old_row =
      R"({"kernel": "k", "source_hash": "0x1", "key": "n=1", "device": "d", "toolchain": "t",
          "config": "BM=8", "status": "ok", "unix_time": 1700000000,
          "stats": {"count": 3, "min": 5, "p20": 5, "median": 5, "p80": 5, "max": 5, "mean": 5})";
  auto c = SqliteStore::open(dir.file("c.db"));
  stats = c->import_json(R"({"format": "libtune-cache", "version": 1, "rows": [)" + old_row +
                         "}, " + old_row + R"(, "verified": "yes"}]})");
  REQUIRE(stats.ok());
  CHECK(stats->added == 1);
  CHECK(stats->rejected == 1);
  REQUIRE(stats->problems.size() == 1);
  CHECK(stats->problems.front().find("'verified' is not a boolean") != std::string::npos);
  auto rows = c->rows();
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 1);
  CHECK_FALSE(rows->front().result.verified);
}

TEST_CASE("a version-1 database reads as not checked and is migrated to the current version") {
  TempDir dir;
  const std::string path = dir.file("tune.db");
  SqliteStore::open(path)->save(test_key(),
                                std::vector{ok_row("BM=64", 100.0), ok_row("BM=32", 120.0)});
  downgrade_to_version_1(path);

  // Read-only: read as it is (every row not checked), nothing changed.
  const std::string before = cache_test::read_bytes(path);
  {
    LogCapture log;
    auto ro = SqliteStore::open(path, {CacheMode::readonly});
    auto rows = ro->load(test_key());
    REQUIRE(rows.size() == 2);
    for (const auto& r : rows) CHECK_FALSE(r.verified);
    CHECK(log.warnings().empty());
  }
  CHECK(cache_test::read_bytes(path) == before);
  {
    RawDb raw(path, /*readonly=*/true);
    CHECK(raw.scalar("PRAGMA user_version") == "1");
  }

  // A merge reads a version-1 source as well.
  auto merged = SqliteStore::open(dir.file("merged.db"));
  auto m = merged->merge_database(path);
  REQUIRE_MESSAGE(m.ok(), m.status().to_string());
  CHECK(m->added == 2);

  // Readwrite: upgraded in place, no warning, no file moved aside; the old rows (their
  // checksums included) still valid, not checked; new rows keep their flag.
  LogCapture log;
  auto store = SqliteStore::open(path);
  CHECK(log.warnings().empty());
  CHECK(cache_test::files_starting(dir.path(), "tune.db.corrupt-").empty());
  {
    RawDb raw(path, /*readonly=*/true);
    CHECK(raw.scalar("PRAGMA user_version") == std::to_string(kCacheSchemaVersion));
    CHECK(raw.scalar("SELECT count(*) FROM results WHERE verified = 0") == "2");
  }
  auto rows = store->load(test_key());
  REQUIRE(rows.size() == 2);
  for (const auto& r : rows) CHECK_FALSE(r.verified);
  store->save(test_key(), std::vector{verified_row("BM=32", 120.0)});
  rows = store->load(test_key());
  REQUIRE(rows.size() == 2);
  CHECK(find(rows, "BM=32")->verified);
  CHECK_FALSE(find(rows, "BM=64")->verified);
  CHECK(log.warnings().empty());
  CHECK(kCacheSchemaVersion == 3);
}

}  // namespace
}  // namespace tune
