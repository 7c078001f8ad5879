// Writing bundles: create_bundle (from a database) and merge_bundles (tune/bundle.hpp). The
// format is bundle_file.hpp's; what is written is read back through BundleFile before it is
// reported, so the writer and the reader agree on every check.
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <utility>

#include "cache/bundle_file.hpp"
#include "cache/cache_entries.hpp"
#include "cache/row_codec.hpp"
#include "cache/row_rules.hpp"
#include "cache/safe_file.hpp"
#include "cache/sqlite_db.hpp"
#include "cache/store_schema.hpp"
#include "tune/bundle.hpp"
#include "tune/version.hpp"

namespace tune {
namespace {

using cache::Connection;
using cache::Stmt;

struct Meta {
  std::string source;
  std::int64_t created_unix = 0;
};

bool same_key(const StoreKey& a, const StoreKey& b) {
  return cache::key_tuple(a) == cache::key_tuple(b);
}

// Keeps the keys with at least one ok row; each key's rows must be consecutive and in the
// winner rule's order (cache::order_by_winner_rule).
std::vector<CacheRow> keys_with_a_winner(std::vector<CacheRow> rows) {
  std::vector<CacheRow> kept;
  for (std::size_t i = 0; i < rows.size();) {
    std::size_t end = i;
    while (end < rows.size() && same_key(rows[end].key, rows[i].key)) ++end;
    if (rows[i].result.status == StatusCode::ok)
      for (std::size_t r = i; r < end; ++r) kept.push_back(std::move(rows[r]));
    i = end;
  }
  return kept;
}

int insert_decision(sqlite3* db, const std::vector<CacheRow>& rows, std::size_t begin,
                    std::size_t end) {
  const StoredResult& w = rows[begin].result;
  const StoredResult* ru = nullptr;
  if (begin + 1 < end && rows[begin + 1].result.status == StatusCode::ok)
    ru = &rows[begin + 1].result;
  Stmt s;
  int rc = s.prepare(db,
                     "INSERT INTO decisions VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
                     "?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)");
  if (rc != SQLITE_OK) return rc;
  cache::bind_key(s, rows[begin].key);
  s.bind(6, std::string_view(w.config));
  s.bind(7, std::string_view(ru != nullptr ? ru->config : std::string()));
  s.bind(8, ru != nullptr ? ru->stats.median / w.stats.median - 1.0
                          : std::numeric_limits<double>::quiet_NaN());
  s.bind(9, static_cast<std::int64_t>(w.stats.count));
  const double stats[] = {w.stats.min, w.stats.p20, w.stats.median,
                          w.stats.p80, w.stats.max, w.stats.mean};
  for (int i = 0; i < 6; ++i) s.bind(10 + i, stats[i]);
  s.bind(16, w.unix_time);
  s.bind(17, static_cast<std::int64_t>(w.verified ? 1 : 0));
  s.bind(18, static_cast<std::int64_t>(end - begin));
  rc = s.step();
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

int insert_rows(sqlite3* db, const std::vector<CacheRow>& rows) {
  Stmt s;
  int rc = s.prepare(db, cache::kUpsertSql);
  for (std::size_t i = 0; rc == SQLITE_OK && i < rows.size(); ++i) {
    s.rewind();
    cache::bind_key(s, rows[i].key);
    // A bundle ships decisions, not their local history: decision records stay out, so that a
    // libtune that reads bundles of this format without the record column checks every row.
    StoredResult r = rows[i].result;
    r.decision.reset();
    cache::bind_result(s, 6, rows[i].key, r);
    rc = s.step();
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
  }
  for (std::size_t i = 0; rc == SQLITE_OK && i < rows.size();) {
    std::size_t end = i;
    while (end < rows.size() && same_key(rows[end].key, rows[i].key)) ++end;
    rc = insert_decision(db, rows, i, end);
    i = end;
  }
  return rc;
}

int insert_info(sqlite3* db, const Meta& meta) {
  Stmt s;
  int rc = s.prepare(db, "INSERT INTO bundle_info VALUES (?1, ?2)");
  const std::pair<const char*, std::string> entries[] = {
      {"libtune_version", std::string(kVersion)},
      {"created_unix", std::to_string(meta.created_unix)},
      {"source", meta.source}};
  for (const auto& [name, value] : entries) {
    if (rc != SQLITE_OK) break;
    s.rewind();
    s.bind(1, std::string_view(name));
    s.bind(2, std::string_view(value));
    rc = s.step();
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
  }
  return rc;
}

// The whole bundle into the empty database `db`, in one transaction.
int write_contents(sqlite3* db, const std::vector<CacheRow>& rows, const Meta& meta) {
  const std::string pragmas =
      "PRAGMA journal_mode=DELETE; PRAGMA application_id=" +
      std::to_string(cache::kBundleApplicationId) +
      "; PRAGMA user_version=" + std::to_string(cache::kBundleFormatVersion) + ";";
  int rc = cache::exec(db, pragmas);
  if (rc == SQLITE_OK) rc = cache::exec(db, "BEGIN IMMEDIATE");
  for (std::string_view sql : {cache::kResultsTableSql, cache::kDecisionsTableSql,
                               cache::kBundleInfoTableSql, cache::kContentChecksumTableSql})
    if (rc == SQLITE_OK) rc = cache::exec(db, sql);
  if (rc == SQLITE_OK) rc = insert_rows(db, rows);
  if (rc == SQLITE_OK) rc = insert_info(db, meta);
  std::int64_t hash = 0;
  if (rc == SQLITE_OK) rc = cache::content_checksum(db, &hash);
  if (rc == SQLITE_OK)
    rc = cache::exec(db, "INSERT INTO content_checksum VALUES (" + std::to_string(hash) + ")");
  if (rc == SQLITE_OK) rc = cache::exec(db, "COMMIT");
  return rc;
}

// Writes `rows` (each key's rows consecutive, in the winner rule's order) as a bundle beside
// `out`, renames it over `out`, and reads it back.
Result<BundleInfo> write_bundle(const std::string& out, const std::vector<CacheRow>& rows,
                                const Meta& meta) {
  if (std::string why = cache::unsafe_file_reason(out); !why.empty())
    return Status(StatusCode::invalid_argument, "bundle " + out + " is " + why + ": not written");
  std::filesystem::path target(out);
  const std::string dir = target.has_parent_path() ? target.parent_path().string() : ".";
  std::string tmp;
  std::string problem;
  const int fd = cache::create_temp_file(dir, target.filename().string(), &tmp, &problem);
  if (fd < 0) return Status(StatusCode::io_error, "bundle " + out + ": " + problem);
  ::close(fd);
  int rc = SQLITE_OK;
  std::string message;
  {
    Connection c;
    rc = sqlite3_open_v2(tmp.c_str(), &c.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc == SQLITE_OK) rc = write_contents(c.db, rows, meta);
    if (rc != SQLITE_OK) message = cache::errmsg(c.db, rc);
  }
  if (rc == SQLITE_OK && std::rename(tmp.c_str(), out.c_str()) != 0) {
    rc = SQLITE_IOERR;
    message = std::string("renaming ") + tmp + ": " + std::strerror(errno);
  }
  if (rc != SQLITE_OK) {
    std::remove(tmp.c_str());
    return Status(StatusCode::io_error, "bundle " + out + ": writing: " + message);
  }
  return read_bundle(out);
}

// The rows of `db` one filter selects, added to `rows` by identity.
Status select_rows(SqliteStore& db, const CacheFilter& filter,
                   std::map<std::pair<cache::KeyTuple, std::string>, CacheRow>* rows) {
  Result<std::vector<CacheRow>> got = db.rows(filter);
  if (!got.ok()) return got.status();
  for (CacheRow& r : *got) {
    auto id = std::make_pair(cache::key_tuple(r.key), r.result.config);
    rows->emplace(std::move(id), std::move(r));
  }
  return {};
}

std::vector<CacheRow> ordered(std::map<std::pair<cache::KeyTuple, std::string>, CacheRow> rows) {
  std::vector<CacheRow> out;
  for (auto& [id, row] : rows) {
    row.result.origin.clear();
    out.push_back(std::move(row));
  }
  cache::order_by_winner_rule(out);
  return keys_with_a_winner(std::move(out));
}

}  // namespace

Result<BundleInfo> create_bundle(const std::string& from_db, const std::string& out,
                                 const BundleSelection& selection) {
  cache::PathCheck pc = cache::inspect_path(from_db);
  if (pc.kind == cache::PathKind::absent)
    return Status(StatusCode::not_found, "database " + from_db + " does not exist");
  if (pc.kind != cache::PathKind::regular)
    return Status(StatusCode::invalid_argument, "database " + from_db + " is " + pc.problem);
  SqliteStore::Options opts;
  opts.mode = CacheMode::readonly;
  std::shared_ptr<SqliteStore> db = SqliteStore::open(from_db, opts);
  std::map<std::pair<cache::KeyTuple, std::string>, CacheRow> rows;
  const std::vector<std::string> any = {""};
  for (const std::string& k : selection.kernels.empty() ? any : selection.kernels)
    for (const std::string& d : selection.devices.empty() ? any : selection.devices)
      TUNE_RETURN_IF_ERROR(select_rows(*db, CacheFilter{k, "", d}, &rows));
  std::vector<CacheRow> kept = ordered(std::move(rows));
  if (kept.empty())
    return Status(StatusCode::not_found,
                  "database " + from_db + " holds no decision (a key with an ok row) selected");
  return write_bundle(out, kept,
                      Meta{std::filesystem::path(from_db).filename().string(), cache::now_unix()});
}

Result<BundleInfo> merge_bundles(std::span<const std::string> inputs, const std::string& out) {
  if (inputs.empty()) return Status(StatusCode::invalid_argument, "merge: no input bundle");
  std::map<std::pair<cache::KeyTuple, std::string>, CacheRow> rows;
  Meta meta{"merge", 0};
  for (const std::string& in : inputs) {
    Result<std::shared_ptr<const cache::BundleFile>> b = cache::BundleFile::open(in);
    if (!b.ok()) return b.status();
    meta.created_unix = std::max(meta.created_unix, (*b)->info().created_unix);
    for (const CacheRow& r : (*b)->rows()) {
      auto id = std::make_pair(cache::key_tuple(r.key), r.result.config);
      auto it = rows.find(id);
      if (it == rows.end())
        rows.emplace(std::move(id), r);
      else if (has_better_provenance(r.result, it->second.result))
        it->second = r;
    }
  }
  return write_bundle(out, ordered(std::move(rows)), meta);
}

}  // namespace tune
