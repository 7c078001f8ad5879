// Bundles that cannot be trusted (tune/bundle.hpp, cache/bundle_file.hpp): absent, special,
// empty, not SQLite, truncated, flipped bytes, altered rows, a cache database, another
// application's file, a newer format, a hostile schema, rows that fail the row checks. Each
// is a warning naming the file, never a crash or a hang; the file is never modified, moved or
// given companions; the user's rows are still served.
#include <doctest/doctest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <memory>
#include <string>
#include <vector>

#include "../cache/cache_test_util.hpp"
#include "cache/bundle_file.hpp"
#include "tune/bundle.hpp"
#include "tune/sqlite_store.hpp"

using namespace tune;
using namespace tune::cache_test;

namespace {

// A good bundle of one key (BM=16 100 ns, BM=32 120 ns) at `dir`/good.tunebundle.
std::string good_bundle(const TempDir& dir) {
  const std::string db = dir.file("src.db");
  SqliteStore::open(db)->save(
      test_key(), std::vector<StoredResult>{ok_row("BM=16", 100), ok_row("BM=32", 120)});
  const std::string out = dir.file("good.tunebundle");
  REQUIRE(create_bundle(db, out).ok());
  return out;
}

void run_sql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  const std::string msg = err != nullptr ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  REQUIRE_MESSAGE(rc == SQLITE_OK, msg);
}

// Recomputes the content checksum, as a writer who knows the format would.
void reseal(const std::string& path) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  std::int64_t h = 0;
  REQUIRE(cache::content_checksum(db, &h) == SQLITE_OK);
  const std::string sql = "UPDATE content_checksum SET hash = " + std::to_string(h);
  REQUIRE(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
}

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// The bundle at `path` is refused: read_bundle fails with `code` and a message naming the file
// and containing `why`; a stack over it serves the user's rows only, with one warning naming
// the file; the file and its directory are unchanged.
void check_refused(const std::string& path, StatusCode code, const std::string& why) {
  CAPTURE(path);
  const bool regular = fs::is_regular_file(fs::symlink_status(path));
  const std::string bytes = regular ? read_bytes(path) : "";
  const std::vector<std::string> before = names_in(fs::path(path).parent_path().string());
  Result<BundleInfo> info = read_bundle(path);
  REQUIRE_FALSE(info.ok());
  CHECK(info.status().code() == code);
  CHECK_MESSAGE(info.status().message().find(path) != std::string::npos, info.status().message());
  CHECK_MESSAGE(info.status().message().find(why) != std::string::npos, info.status().message());

  LogCapture log;
  auto user = SqliteStore::open(":memory:");
  user->save(test_key(), std::vector<StoredResult>{ok_row("BM=64", 300)});
  auto stack = stack_stores(user, std::vector<std::string>{path});
  const std::vector<StoredResult> rows = stack->load(test_key());
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].config == "BM=64");
  CHECK_MESSAGE(log.any_contains(path), log.all());
  CHECK_MESSAGE(log.any_contains("not used"), log.all());
  if (regular) CHECK(read_bytes(path) == bytes);
  CHECK(names_in(fs::path(path).parent_path().string()) == before);
}

}  // namespace

TEST_CASE("a bundle that is absent, a directory, a FIFO or empty is refused, never opened") {
  TempDir dir;
  check_refused(dir.file("absent.tunebundle"), StatusCode::not_found, "No such file");
  fs::create_directories(dir.file("dir.tunebundle"));
  check_refused(dir.file("dir.tunebundle"), StatusCode::invalid_argument, "directory");
  REQUIRE(::mkfifo(dir.file("fifo.tunebundle").c_str(), 0644) == 0);
  check_refused(dir.file("fifo.tunebundle"), StatusCode::invalid_argument, "not a regular file");
  write_bytes(dir.file("empty.tunebundle"), "");
  check_refused(dir.file("empty.tunebundle"), StatusCode::data_loss, "empty");
  write_bytes(dir.file("text.tunebundle"), std::string(5000, 'x'));
  check_refused(dir.file("text.tunebundle"), StatusCode::data_loss, "not a readable SQLite");
}

TEST_CASE("a truncated bundle or one with flipped bytes is refused") {
  TempDir dir;
  const std::string good = good_bundle(dir);
  const std::string bytes = read_bytes(good);
  REQUIRE(bytes.size() >= 4096);
  write_bytes(dir.file("trunc.tunebundle"), bytes.substr(0, bytes.size() / 2));
  {
    Result<BundleInfo> r = read_bundle(dir.file("trunc.tunebundle"));
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find("trunc.tunebundle") != std::string::npos);
  }
  check_refused(dir.file("trunc.tunebundle"),
                read_bundle(dir.file("trunc.tunebundle")).status().code(), "trunc.tunebundle");
  // Every page but the header's: a flipped byte in each is refused.
  const std::size_t page = 4096;
  for (std::size_t at = page + 100; at < bytes.size(); at += page) {
    std::string damaged = bytes;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x5a);
    const std::string path = dir.file("flip" + std::to_string(at) + ".tunebundle");
    write_bytes(path, damaged);
    Result<BundleInfo> r = read_bundle(path);
    if (r.ok()) {  // a byte SQLite never reads (free space) changes nothing served
      CHECK(r->rows == 2);
      continue;
    }
    CHECK(r.status().message().find(path) != std::string::npos);
  }
}

TEST_CASE("a row altered after writing fails the content checksum - the bundle is refused") {
  TempDir dir;
  const std::string path = good_bundle(dir);
  run_sql(path,
          "UPDATE results SET median = 1.5, min = 1.0, p20 = 1.2, p80 = 1.7, max = 2.0, "
          "mean = 1.5, checksum = NULL WHERE config = 'BM=32'");
  check_refused(path, StatusCode::data_loss, "content checksum mismatch");
}

TEST_CASE("a resealed bundle still has its rows checked, bad rows skipped with a warning") {
  TempDir dir;
  const std::string path = good_bundle(dir);
  // A writer who knows the format: an implausible row without a row checksum, and a row whose
  // row checksum does not match, then the content checksum recomputed.
  run_sql(path,
          "INSERT INTO results SELECT kernel, source_hash, key, device, toolchain, 'BM=8', "
          "status, reason, count, -5, -5, -5, -5, -5, -5, unix_time, NULL, 0, '' FROM results "
          "WHERE config = 'BM=16'; UPDATE results SET median = 119 WHERE config = 'BM=32'");
  reseal(path);
  Result<BundleInfo> info = read_bundle(path);
  REQUIRE_MESSAGE(info.ok(), info.status().to_string());
  CHECK(info->rows == 1);
  REQUIRE(info->problems.size() == 2);

  LogCapture log;
  auto stack = stack_stores(nullptr, std::vector<std::string>{path});
  const std::vector<StoredResult> rows = stack->load(test_key());
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].config == "BM=16");
  CHECK_MESSAGE(log.any_contains(path), log.all());
  CHECK_MESSAGE(log.any_contains("ignored 2"), log.all());
}

TEST_CASE("a cache database, another application's file, a newer format, a hostile schema") {
  TempDir dir;
  const std::string db = dir.file("tune.db");
  SqliteStore::open(db)->save(test_key(), std::vector<StoredResult>{ok_row("BM=16", 100)});
  check_refused(db, StatusCode::invalid_argument, "a libtune cache database, not a bundle");

  run_sql(dir.file("other.sqlite"), "CREATE TABLE t (x); PRAGMA application_id = 42;");
  check_refused(dir.file("other.sqlite"), StatusCode::invalid_argument, "not a libtune bundle");

  const std::string newer = good_bundle(dir);
  run_sql(newer, "PRAGMA user_version = 99");
  check_refused(newer, StatusCode::failed_precondition, "newer");

  TempDir dir2;
  const std::string view = good_bundle(dir2);
  // A view over a recursive query would never end; a trigger could run anything on a write.
  run_sql(view,
          "CREATE VIEW forever AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 "
          "FROM c) SELECT x FROM c");
  check_refused(view, StatusCode::data_loss, "holds view 'forever'");

  TempDir dir3;
  const std::string extra = good_bundle(dir3);
  run_sql(extra, "DROP TABLE decisions");
  check_refused(extra, StatusCode::data_loss, "lacks a bundle table");
}

TEST_CASE("a bundle replaced on disk is read again - a bad one is warned about once") {
  TempDir dir;
  const std::string path = good_bundle(dir);
  {
    LogCapture log;
    write_bytes(dir.file("junk.tunebundle"), "junk");
    const std::vector<std::string> both = {path, dir.file("junk.tunebundle")};
    CHECK(stack_stores(nullptr, both)->load(test_key()).size() == 2);
    CHECK(stack_stores(nullptr, both)->load(test_key()).size() == 2);
    int warnings = 0;
    for (const auto& w : log.warnings()) warnings += w.find("junk.tunebundle") != std::string::npos;
    CHECK(warnings == 1);
  }
  const std::string db = dir.file("src2.db");
  SqliteStore::open(db)->save(test_key(), std::vector<StoredResult>{ok_row("BM=64", 80)});
  REQUIRE(create_bundle(db, path).ok());
  const auto rows = stack_stores(nullptr, std::vector<std::string>{path})->load(test_key());
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].config == "BM=64");
}
