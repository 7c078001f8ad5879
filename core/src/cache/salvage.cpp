// Salvaging the rows of a damaged cache file. See salvage.hpp.
#include "cache/salvage.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string_view>

#include "cache/page_scan.hpp"
#include "cache/row_codec.hpp"
#include "cache/row_rules.hpp"
#include "cache/sqlite_db.hpp"
#include "cache/store_schema.hpp"
#include "tune/sqlite_store.hpp"

namespace tune::cache {
namespace {

// Columns of a row of `results` as stored: the key, then the result (19 with the checksum,
// `verified` and `decision`; a row written before version 3 has 18, before version 2 17, one
// from before the checksum 16: SQLite gives an added column its default without rewriting the
// rows).
constexpr int kRowColumns = 19;

// What the salvage found and kept, for its summary.
struct Tally {
  std::map<std::string, bool> seen;  // primary key -> valid
  std::size_t kept = 0;
  std::size_t invalid = 0;
};

// Checks the row `s` is positioned on (key at columns 0..4, result at 5..18) like any stored
// row (column types, checksum, row rules) and inserts it with `ins` when valid and its
// primary key was not met before. Returns false when it was met before.
bool keep_row(sqlite3* into, const Stmt& s, Stmt& ins, Tally* t) {
  CacheRow row;
  read_key(s, &row.key);
  std::string pk = row.key.kernel + '\x1f' + std::to_string(row.key.source_hash) + '\x1f' +
                   row.key.key + '\x1f' + row.key.device + '\x1f' + row.key.toolchain + '\x1f' +
                   s.text(5);
  if (t->seen.count(pk) != 0) return false;
  std::string why;
  bool valid = key_columns_ok(s) && read_result(s, 5, row.key, &row.result, &why) &&
               check_stored_key(row.key).ok() && check_stored_row(row.result).ok();
  t->seen[pk] = valid;
  if (!valid) {
    ++t->invalid;
    return true;
  }
  StmtScope scope(ins);
  bind_key(ins, row.key);
  bind_result(ins, 6, row.key, row.result);
  if (ins.step() == SQLITE_DONE && sqlite3_changes(into) > 0) ++t->kept;
  return true;
}

// One scan of `src`'s rows through SQLite in primary-key `order` ("ASC" or "DESC"), until the
// first unreadable page or a row the other scan already met.
void salvage_scan(sqlite3* into, sqlite3* src, const char* order, Stmt& ins, Tally* t) {
  Stmt s;
  std::string o = std::string(" ") + order;
  // This version's columns, else a version-2 file's, else a version-1 file's (with and without
  // the checksum column).
  int rc = SQLITE_ERROR;
  for (std::string_view columns :
       {kResultColumns, kVersion2ResultColumns, kVersion1ResultColumns, kLegacyResultColumns}) {
    std::string sql = "SELECT " + std::string(kKeyColumns) + ", " + std::string(columns) +
                      " FROM results ORDER BY kernel" + o + ", source_hash" + o + ", key" + o +
                      ", device" + o + ", toolchain" + o + ", config" + o;
    if ((rc = s.prepare(src, sql)) == SQLITE_OK) break;
  }
  if (rc != SQLITE_OK) return;
  while (s.step() == SQLITE_ROW) {  // stops at the first unreadable page
    if (!keep_row(into, s, ins, t)) break;
  }
}

// The rows no query reaches (beyond a damaged or missing page, or under a damaged schema):
// every record of the file's index pages with the shape of a `results` row, read straight
// from the pages (page_scan.hpp) and checked like the rest. The record's values are bound to
// a "SELECT ?1, ..." so that they reach the row checks exactly as a query returns them.
std::size_t salvage_pages(sqlite3* into, const std::string& from, Stmt& ins, Tally* t) {
  sqlite3* mem = nullptr;
  if (sqlite3_open_v2(":memory:", &mem, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) !=
      SQLITE_OK) {
    sqlite3_close_v2(mem);
    return 0;
  }
  std::string sql = "SELECT ?1";
  for (int i = 2; i <= kRowColumns; ++i) sql += ", ?" + std::to_string(i);
  Stmt values;
  std::size_t found = 0;
  if (values.prepare(mem, sql) == SQLITE_OK) {
    scan_index_records(from, [&](const std::vector<RecordValue>& rec) {
      if (rec.size() < kRowColumns - 3 || rec.size() > kRowColumns) return;
      StmtScope scope(values);
      // A row from before `verified` was not checked (the column's default); before the
      // checksum, it has none, and before `decision`, no record (NULL: unbound).
      sqlite3_bind_int64(values.get(), kRowColumns - 1, 0);
      for (std::size_t i = 0; i < rec.size(); ++i) {
        const RecordValue& v = rec[i];
        sqlite3_stmt* st = values.get();
        const int at = static_cast<int>(i) + 1;
        if (v.type == SQLITE_INTEGER) {
          sqlite3_bind_int64(st, at, v.integer);
        } else if (v.type == SQLITE_FLOAT) {
          sqlite3_bind_double(st, at, v.real);
        } else if (v.type == SQLITE_TEXT) {
          sqlite3_bind_text(st, at, v.bytes.data(), static_cast<int>(v.bytes.size()),
                            SQLITE_TRANSIENT);
        } else if (v.type == SQLITE_BLOB) {
          sqlite3_bind_blob(st, at, v.bytes.data(), static_cast<int>(v.bytes.size()),
                            SQLITE_TRANSIENT);
        }  // NULL: unbound parameters are NULL (the legacy checksum too)
      }
      if (values.step() != SQLITE_ROW) return;
      ++found;
      keep_row(into, values, ins, t);
    });
  }
  values = Stmt();
  sqlite3_close_v2(mem);
  return found;
}

}  // namespace

std::string salvage_rows(sqlite3* into, const std::string& from) {
  sqlite3* src = nullptr;
  std::string uri = uri_path(from) + "?mode=ro";
  int rc = sqlite3_open_v2(uri.c_str(), &src,
                           SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOFOLLOW, nullptr);
  Tally t;
  std::int64_t total = -1;
  if (exec(into, "BEGIN IMMEDIATE") == SQLITE_OK) {
    Stmt ins;
    std::string sql(kUpsertSql);
    sql.replace(0, std::string_view("INSERT OR REPLACE").size(), "INSERT OR IGNORE");
    if (ins.prepare(into, sql) == SQLITE_OK) {
      // SQLite's own reading first (it knows the b-tree and the WAL), then the pages for
      // what it cannot reach.
      if (rc == SQLITE_OK)
        for (const char* order : {"ASC", "DESC"}) salvage_scan(into, src, order, ins, &t);
      salvage_pages(into, from, ins, &t);
    }
    if (exec(into, "COMMIT") != SQLITE_OK) {
      exec(into, "ROLLBACK");
      t.kept = 0;
    }
    Stmt count;
    if (rc == SQLITE_OK && count.prepare(src, "SELECT count(*) FROM results") == SQLITE_OK &&
        count.step() == SQLITE_ROW)
      total = count.int64(0);
  }
  sqlite3_close_v2(src);
  std::string msg = "salvaged " + std::to_string(t.kept) + " row" + (t.kept == 1 ? "" : "s");
  if (total >= 0) {
    const std::int64_t lost = std::max<std::int64_t>(total - static_cast<std::int64_t>(t.kept), 0);
    msg += " of " + std::to_string(total) + " (" + std::to_string(lost) + " lost)";
  } else {
    msg += "; rows on its unreadable pages are lost (their number cannot be read)";
  }
  if (t.invalid > 0) msg += "; " + std::to_string(t.invalid) + " readable rows were invalid";
  return msg;
}

}  // namespace tune::cache
