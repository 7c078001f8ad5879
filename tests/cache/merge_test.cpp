// SqliteStore::merge_database (`tune cache merge`): idempotent, rows keep their device
// identity, conflicts decided by the import provenance rule, bad sources refused before
// anything is written.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "cache_test_util.hpp"
#include "tune/sqlite_store.hpp"

using namespace tune;
using namespace tune::cache_test;

namespace {

// Every row as comparable text: identity, status, statistics and time.
std::vector<std::string> dump(SqliteStore& store) {
  auto rows = store.rows();
  REQUIRE_MESSAGE(rows.ok(), rows.status().to_string());
  std::vector<std::string> out;
  for (const auto& r : *rows) {
    const auto& s = r.result.stats;
    out.push_back(r.key.kernel + "|" + std::to_string(r.key.source_hash) + "|" + r.key.key + "|" +
                  r.key.device + "|" + r.key.toolchain + "|" + r.result.config + "|" +
                  std::string(to_string(r.result.status)) + "|" + r.result.reason + "|" +
                  std::to_string(s.count) + "|" + std::to_string(s.median) + "|" +
                  std::to_string(s.min) + "|" + std::to_string(r.result.unix_time));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A: machine A's rows and one key shared with B. B: machine B's rows and the shared key with
// other measurements.
void fill(SqliteStore& a, SqliteStore& b) {
  a.save(key_on("cuda|A100"),
         std::vector<StoredResult>{ok_row("BM=64", 1000), ok_row("BM=128", 900)});
  b.save(key_on("cuda|H200"), std::vector<StoredResult>{ok_row("BM=64", 500)});
  // Shared key on sim: A has more samples of BM=32 (wins), B a newer BM=16 with as many (wins),
  // B a measurement of BM=8 where A has a failure (B's stays), A a measurement where B failed.
  StoredResult a_fail = ok_row("BM=8", 0);
  a_fail.status = StatusCode::launch_failed;
  a_fail.reason = "bad launch";
  a_fail.stats = SampleStats{};
  StoredResult b_fail = a_fail;
  b_fail.config = "BM=4";
  a.save(key_on("simulated|sim|s1|1.0"),
         std::vector<StoredResult>{ok_row("BM=32", 700, 40), ok_row("BM=16", 650, 20, 1700000000),
                                   a_fail, ok_row("BM=4", 900)});
  b.save(key_on("simulated|sim|s1|1.0"),
         std::vector<StoredResult>{ok_row("BM=32", 710, 20), ok_row("BM=16", 660, 20, 1700000500),
                                   ok_row("BM=8", 800), b_fail});
}

}  // namespace

TEST_CASE("merge: the union, conflicts by provenance, and merging twice changes nothing") {
  TempDir dir;
  auto a = SqliteStore::open(dir.file("a.db"));
  auto b = SqliteStore::open(dir.file("b.db"));
  fill(*a, *b);
  const auto a_before = dump(*a);

  auto once = b->merge_database(dir.file("a.db"));
  REQUIRE_MESSAGE(once.ok(), once.status().to_string());
  CHECK(once->added == 2);     // A100's two rows
  CHECK(once->replaced == 2);  // BM=32 (more samples), BM=4 (a measurement over a failure)
  CHECK(once->kept == 2);      // BM=16 (B's is newer), BM=8 (B measured it, A failed)
  CHECK(once->rejected == 0);
  const auto merged = dump(*b);
  CHECK(merged.size() == 7);  // 2 A100 + 1 H200 + 4 shared
  auto rows = b->rows().value();
  std::map<std::string, StoredResult> shared;
  std::size_t a100 = 0, h200 = 0;
  for (const auto& r : rows) {
    if (r.key.device == "cuda|A100") ++a100;  // identity kept: still A100's rows
    if (r.key.device == "cuda|H200") ++h200;
    if (r.key.device == "simulated|sim|s1|1.0") shared[r.result.config] = r.result;
  }
  CHECK(a100 == 2);
  CHECK(h200 == 1);
  REQUIRE(shared.size() == 4);
  CHECK(shared["BM=32"].stats.count == 40);
  CHECK(shared["BM=32"].stats.median == 700);
  CHECK(shared["BM=16"].unix_time == 1700000500);
  CHECK(shared["BM=8"].status == StatusCode::ok);
  CHECK(shared["BM=4"].status == StatusCode::ok);

  auto twice = b->merge_database(dir.file("a.db"));
  REQUIRE_MESSAGE(twice.ok(), twice.status().to_string());
  CHECK(twice->added == 0);
  CHECK(twice->replaced == 0);
  CHECK(twice->kept == 6);
  CHECK(dump(*b) == merged);    // row for row
  CHECK(dump(*a) == a_before);  // the source is never modified

  // Merging B back into A gives A the same union.
  auto back = a->merge_database(dir.file("b.db"));
  REQUIRE_MESSAGE(back.ok(), back.status().to_string());
  CHECK(dump(*a) == merged);
}

TEST_CASE("merge: a damaged, foreign, empty, missing or linked source is refused; target intact") {
  TempDir dir;
  auto b = SqliteStore::open(dir.file("b.db"));
  b->save(key_on("cuda|H200"), std::vector<StoredResult>{ok_row("BM=64", 500)});
  const auto before = dump(*b);
  const std::string target_bytes = read_bytes(dir.file("b.db"));

  // A real database of ours, truncated to half.
  {
    auto a = SqliteStore::open(dir.file("full.db"));
    std::vector<StoredResult> many;
    for (int i = 1; i <= 400; ++i) many.push_back(ok_row("BM=" + std::to_string(i), 1000 + i));
    a->save(key_on("cuda|A100"), many);
  }
  {
    // Checkpoint the WAL into the main file so that truncating it damages the rows.
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(dir.file("full.db").c_str(), &db) == SQLITE_OK);
    sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;", nullptr,
                 nullptr, nullptr);
    sqlite3_close(db);
  }
  const std::string full = read_bytes(dir.file("full.db"));
  REQUIRE(full.size() > 8192);
  write_bytes(dir.file("truncated.db"), full.substr(0, full.size() / 2));
  write_bytes(dir.file("garbage.db"), std::string(4096, 'x'));
  write_bytes(dir.file("empty.db"), "");
  {
    sqlite3* db = nullptr;  // a SQLite database that is not libtune's
    REQUIRE(sqlite3_open(dir.file("foreign.db").c_str(), &db) == SQLITE_OK);
    sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES(1);", nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  REQUIRE(::symlink(dir.file("full.db").c_str(), dir.file("link.db").c_str()) == 0);

  struct Case {
    const char* file;
    StatusCode code;
    const char* says;
  };
  for (const Case& c : {Case{"truncated.db", StatusCode::data_loss, ""},
                        Case{"garbage.db", StatusCode::data_loss, ""},
                        Case{"foreign.db", StatusCode::data_loss, ""},
                        Case{"empty.db", StatusCode::invalid_argument, "empty"},
                        Case{"missing.db", StatusCode::not_found, "no such file"},
                        Case{"link.db", StatusCode::invalid_argument, "symbolic link"},
                        Case{"b.db", StatusCode::invalid_argument, "being merged into"}}) {
    CAPTURE(std::string(c.file));
    LogCapture log;
    auto r = b->merge_database(dir.file(c.file));
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == c.code);
    CHECK(r.status().message().find(dir.file(c.file)) != std::string::npos);
    CHECK(r.status().message().find(c.says) != std::string::npos);
    CHECK(r.status().message().find("left as it was") != std::string::npos);
    CHECK(dump(*b) == before);
  }
  CHECK(read_bytes(dir.file("b.db")) == target_bytes);
  CHECK(files_starting(dir.path(), "truncated.db.corrupt").empty());  // never moved aside
  CHECK(read_bytes(dir.file("truncated.db")) == full.substr(0, full.size() / 2));
}

TEST_CASE("merge: rows outside the kernel's declared space are rejected and named") {
  TempDir dir;
  auto a = SqliteStore::open(dir.file("a.db"));
  auto b = SqliteStore::open(dir.file("b.db"));
  a->save(key_on("cuda|A100"),
          std::vector<StoredResult>{ok_row("BM=64", 1000), ok_row("BM=1000", 900)});
  ConfigSpace space;
  space.param("BM", {32, 64});
  ImportOptions opts;
  opts.space_for = [&](const StoreKey&) { return &space; };
  auto r = b->merge_database(dir.file("a.db"), opts);
  REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  CHECK(r->added == 1);
  CHECK(r->rejected == 1);
  REQUIRE(r->problems.size() == 1);
  CHECK(r->problems[0].find("BM=1000") != std::string::npos);
}
