// Recognising and checking a cache database. See db_inspect.hpp.
#include "cache/db_inspect.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>

#include "cache/sqlite_db.hpp"
#include "cache/store_schema.hpp"

namespace tune::cache {
namespace {

// Databases up to this size get the full PRAGMA integrity_check on every open (a few ms);
// larger ones the quick_check, and the full check when a read finds a damaged row.
constexpr std::int64_t kFullCheckBytes = 4 << 20;

std::int64_t file_size(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? static_cast<std::int64_t>(st.st_size) : 0;
}

Finding inspect_snapshot(sqlite3* db, const std::string& path) {
  std::int64_t app_id = 0, version = 0, tables = 0;
  if (int rc = query_int(db, "PRAGMA application_id", &app_id); rc != SQLITE_OK)
    return failed(db, rc, "reading the header");
  if (int rc = query_int(db, "PRAGMA user_version", &version); rc != SQLITE_OK)
    return failed(db, rc, "reading the header");
  if (int rc = query_int(db, "SELECT count(*) FROM sqlite_schema", &tables); rc != SQLITE_OK)
    return failed(db, rc, "reading the schema");
  if (app_id == 0 && version == 0 && tables == 0) return {Verdict::fresh, {}, false};
  if (app_id != kCacheApplicationId) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "not a libtune cache (application_id 0x%llx, %lld tables)",
                  static_cast<unsigned long long>(static_cast<std::uint32_t>(app_id)),
                  static_cast<long long>(tables));
    return {Verdict::damaged, buf, false};
  }
  if (version > kCacheSchemaVersion)
    return {Verdict::newer,
            "written by a newer libtune (schema version " + std::to_string(version) +
                ", this one reads " + std::to_string(kCacheSchemaVersion) + ")",
            false};
  // An older version this libtune reads is ok: upgraded on a readwrite open
  // (ensure_current_schema), read as it is otherwise (result_columns_of).
  if (version < kOldestCacheSchemaVersion)
    return {Verdict::damaged,
            "an old schema (version " + std::to_string(version) + ", this libtune reads " +
                std::to_string(kOldestCacheSchemaVersion) + " to " +
                std::to_string(kCacheSchemaVersion) + ")",
            false};
  Finding f = check_integrity(db, /*full=*/file_size(path) <= kFullCheckBytes);
  f.salvage = f.verdict == Verdict::damaged;  // our schema: its readable rows are worth keeping
  return f;
}

}  // namespace

Finding failed(sqlite3* db, int rc, const std::string& doing) {
  Finding f;
  f.verdict = is_damage(rc) ? Verdict::damaged : Verdict::unusable;
  f.what = doing + ": " + errmsg(db, rc);
  return f;
}

Finding inspect_database(sqlite3* db, const std::string& path, bool check_writable) {
  if (check_writable && sqlite3_db_readonly(db, "main") == 1)
    return {Verdict::readonly, "the file cannot be opened for writing", false};
  if (int rc = exec(db, "BEGIN"); rc != SQLITE_OK) return failed(db, rc, "starting a read");
  Finding f = inspect_snapshot(db, path);
  if (exec(db, "COMMIT") != SQLITE_OK) exec(db, "ROLLBACK");
  return f;
}

Finding check_integrity(sqlite3* db, bool full) {
  Stmt qc;
  const char* sql = full ? "PRAGMA integrity_check(1)" : "PRAGMA quick_check(1)";
  if (int rc = qc.prepare(db, sql); rc != SQLITE_OK) return failed(db, rc, "checking integrity");
  int rc = qc.step();
  if (rc != SQLITE_ROW) return failed(db, rc, "checking integrity");
  if (std::string r = qc.text(0); r != "ok") {
    std::replace(r.begin(), r.end(), '\n', ' ');  // one line in the warning
    return {Verdict::damaged, "corrupt: " + r, false};
  }
  return {Verdict::ok, {}, false};
}

}  // namespace tune::cache
