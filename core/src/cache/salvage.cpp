// Salvaging the rows of a damaged cache file. See salvage.hpp.
#include "cache/salvage.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string_view>

#include "cache/row_codec.hpp"
#include "cache/row_rules.hpp"
#include "cache/sqlite_db.hpp"
#include "cache/store_schema.hpp"
#include "tune/sqlite_store.hpp"

namespace tune::cache {
namespace {

// One scan of `src`'s rows in primary-key `order` ("ASC" or "DESC"), inserting the valid ones
// with `ins` until the first unreadable page or a row the other scan already met.
void salvage_scan(sqlite3* into, sqlite3* src, const char* order, Stmt& ins,
                  std::map<std::string, bool>* seen, std::size_t* kept, std::size_t* invalid) {
  Stmt s;
  std::string o = std::string(" ") + order;
  // This version's columns, else a version-1 file's (with and without the checksum column).
  int rc = SQLITE_ERROR;
  for (std::string_view columns : {kResultColumns, kVersion1ResultColumns, kLegacyResultColumns}) {
    std::string sql = "SELECT " + std::string(kKeyColumns) + ", " + std::string(columns) +
                      " FROM results ORDER BY kernel" + o + ", source_hash" + o + ", key" + o +
                      ", device" + o + ", toolchain" + o + ", config" + o;
    if ((rc = s.prepare(src, sql)) == SQLITE_OK) break;
  }
  if (rc != SQLITE_OK) return;
  while (s.step() == SQLITE_ROW) {  // stops at the first unreadable page
    CacheRow row;
    read_key(s, &row.key);
    std::string pk = row.key.kernel + '\x1f' + std::to_string(row.key.source_hash) + '\x1f' +
                     row.key.key + '\x1f' + row.key.device + '\x1f' + row.key.toolchain + '\x1f' +
                     s.text(5);
    if (seen->count(pk) != 0) break;  // the backward scan met the forward one
    std::string why;
    bool valid = read_result(s, 5, row.key, &row.result, &why) &&
                 check_stored_row(row.result).ok() && key_columns_ok(s);
    (*seen)[pk] = valid;
    if (!valid) {
      ++*invalid;
      continue;
    }
    StmtScope scope(ins);
    bind_key(ins, row.key);
    bind_result(ins, 6, row.key, row.result);
    if (ins.step() == SQLITE_DONE && sqlite3_changes(into) > 0) ++*kept;
  }
}

}  // namespace

std::string salvage_rows(sqlite3* into, const std::string& from) {
  sqlite3* src = nullptr;
  std::string uri = uri_path(from) + "?mode=ro";
  int rc = sqlite3_open_v2(uri.c_str(), &src,
                           SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOFOLLOW, nullptr);
  std::size_t kept = 0, invalid = 0;
  std::int64_t total = -1;
  std::map<std::string, bool> seen;  // primary key -> valid
  if (rc == SQLITE_OK && exec(into, "BEGIN IMMEDIATE") == SQLITE_OK) {
    Stmt ins;
    std::string sql(kUpsertSql);
    sql.replace(0, std::string_view("INSERT OR REPLACE").size(), "INSERT OR IGNORE");
    if (ins.prepare(into, sql) == SQLITE_OK) {
      for (const char* order : {"ASC", "DESC"})
        salvage_scan(into, src, order, ins, &seen, &kept, &invalid);
    }
    if (exec(into, "COMMIT") != SQLITE_OK) {
      exec(into, "ROLLBACK");
      kept = 0;
    }
    Stmt count;
    if (count.prepare(src, "SELECT count(*) FROM results") == SQLITE_OK &&
        count.step() == SQLITE_ROW)
      total = count.int64(0);
  }
  sqlite3_close_v2(src);
  std::string msg = "salvaged " + std::to_string(kept) + " row" + (kept == 1 ? "" : "s");
  if (total >= 0) {
    const std::int64_t lost = std::max<std::int64_t>(total - static_cast<std::int64_t>(kept), 0);
    msg += " of " + std::to_string(total) + " (" + std::to_string(lost) + " lost)";
  } else {
    msg += "; rows on its unreadable pages are lost (their number cannot be read)";
  }
  if (invalid > 0) msg += "; " + std::to_string(invalid) + " readable rows were invalid";
  return msg;
}

}  // namespace tune::cache
