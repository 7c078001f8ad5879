// BundleFile: reading and checking one bundle. See bundle_file.hpp.
#include "cache/bundle_file.hpp"

#include <sqlite3.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>
#include <utility>

#include "cache/cache_entries.hpp"
#include "cache/cache_validation.hpp"
#include "cache/row_codec.hpp"
#include "cache/row_rules.hpp"
#include "cache/sqlite_db.hpp"
#include "cache/store_schema.hpp"
#include "tune/backend/hash.hpp"
#include "tune/log.hpp"

namespace tune::cache {
namespace {

Status fail(StatusCode code, const std::string& path, const std::string& what) {
  return Status(code, "bundle " + path + ": " + what);
}

// What stat() (following a link) finds at `path`: OK for a regular file within the size limit.
Status check_file_kind(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    return fail(err == ENOENT ? StatusCode::not_found : StatusCode::io_error, path,
                std::strerror(err));
  }
  if (S_ISDIR(st.st_mode)) return fail(StatusCode::invalid_argument, path, "is a directory");
  if (!S_ISREG(st.st_mode))
    return fail(StatusCode::invalid_argument, path,
                "is not a regular file (FIFO, device or socket)");
  if (st.st_size == 0) return fail(StatusCode::data_loss, path, "is empty");
  if (st.st_size > kMaxBundleBytes)
    return fail(StatusCode::invalid_argument, path,
                "is " + std::to_string(st.st_size) + " bytes, over the limit of " +
                    std::to_string(kMaxBundleBytes));
  return {};
}

Status sqlite_failure(sqlite3* db, int rc, const std::string& path, const std::string& doing) {
  return fail(is_damage(rc) ? StatusCode::data_loss : StatusCode::io_error, path,
              doing + ": " + errmsg(db, rc));
}

// The header checks: our application id, a format this libtune reads, only our tables, and
// SQLite's quick_check.
Status check_header(sqlite3* db, const std::string& path) {
  std::int64_t app = 0;
  std::int64_t version = 0;
  int rc = query_int(db, "PRAGMA application_id", &app);
  if (rc == SQLITE_OK) rc = query_int(db, "PRAGMA user_version", &version);
  if (rc != SQLITE_OK) return sqlite_failure(db, rc, path, "not a readable SQLite database");
  if (app == kCacheApplicationId)
    return fail(StatusCode::invalid_argument, path,
                "is a libtune cache database, not a bundle (make one with `tune bundle create`)");
  if (app != kBundleApplicationId)
    return fail(StatusCode::invalid_argument, path,
                "is not a libtune bundle (application_id " + std::to_string(app) + ")");
  if (version > kBundleFormatVersion)
    return fail(StatusCode::failed_precondition, path,
                "has bundle format " + std::to_string(version) + ", newer than this libtune's " +
                    std::to_string(kBundleFormatVersion));
  if (version < 1)
    return fail(StatusCode::data_loss, path,
                "has bundle format " + std::to_string(version) + " (not one libtune writes)");
  Stmt s;
  rc = s.prepare(db,
                 "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_autoindex_%'");
  const std::set<std::string> expected = {"results", "decisions", "bundle_info",
                                          "content_checksum"};
  std::set<std::string> seen;
  for (rc = rc == SQLITE_OK ? s.step() : rc; rc == SQLITE_ROW; rc = s.step()) {
    const std::string type = s.text(0);
    const std::string name = s.text(1);
    if (type != "table" || expected.count(name) == 0)
      return fail(StatusCode::data_loss, path,
                  "holds " + type + " '" + name + "', which no bundle has");
    seen.insert(name);
  }
  if (rc != SQLITE_DONE) return sqlite_failure(db, rc, path, "reading its schema");
  if (seen != expected) return fail(StatusCode::data_loss, path, "lacks a bundle table");
  s = Stmt();
  rc = s.prepare(db, "PRAGMA quick_check(1)");
  if (rc == SQLITE_OK) rc = s.step();
  if (rc != SQLITE_ROW) return sqlite_failure(db, rc, path, "checking its pages");
  if (s.text(0) != "ok") return fail(StatusCode::data_loss, path, "is damaged: " + s.text(0));
  return {};
}

Status check_content_checksum(sqlite3* db, const std::string& path) {
  std::int64_t stored = 0;
  std::int64_t computed = 0;
  Stmt s;
  int rc = s.prepare(db,
                     "SELECT hash, typeof(hash), (SELECT count(*) FROM content_checksum) "
                     "FROM content_checksum");
  if (rc == SQLITE_OK) rc = s.step();
  if (rc == SQLITE_DONE) return fail(StatusCode::data_loss, path, "has no content checksum");
  if (rc != SQLITE_ROW) return sqlite_failure(db, rc, path, "reading its content checksum");
  if (s.text(1) != "integer" || s.int64(2) != 1)
    return fail(StatusCode::data_loss, path, "has a malformed content checksum");
  stored = s.int64(0);
  rc = content_checksum(db, &computed);
  if (rc != SQLITE_OK) return sqlite_failure(db, rc, path, "reading its content");
  if (stored != computed)
    return fail(StatusCode::data_loss, path,
                "content checksum mismatch (the bundle was altered or damaged)");
  return {};
}

Status read_info(sqlite3* db, const std::string& path, BundleInfo* info) {
  Stmt s;
  int rc = s.prepare(db, "SELECT name, value FROM bundle_info");
  for (rc = rc == SQLITE_OK ? s.step() : rc; rc == SQLITE_ROW; rc = s.step()) {
    const std::string name = s.text(0);
    if (name == "libtune_version") info->libtune_version = s.text(1);
    if (name == "source") info->source = s.text(1);
    if (name == "created_unix") info->created_unix = s.int64(1);
  }
  if (rc != SQLITE_DONE) return sqlite_failure(db, rc, path, "reading bundle_info");
  return {};
}

Status read_decisions(sqlite3* db, const std::string& path, BundleInfo* info) {
  Stmt s;
  int rc = s.prepare(db,
                     "SELECT kernel, source_hash, key, device, toolchain, winner, runner_up, "
                     "margin, count, min, p20, median, p80, max, mean, measured_unix, "
                     "winner_verified, rows FROM decisions ORDER BY kernel, key, device, "
                     "toolchain, source_hash");
  for (rc = rc == SQLITE_OK ? s.step() : rc; rc == SQLITE_ROW; rc = s.step()) {
    BundleDecision d;
    read_key(s, &d.key);
    d.winner = s.text(5);
    d.runner_up = s.text(6);
    d.margin = s.real(7);
    d.winner_stats.count = static_cast<std::uint32_t>(s.int64(8));
    double* fields[] = {&d.winner_stats.min, &d.winner_stats.p20, &d.winner_stats.median,
                        &d.winner_stats.p80, &d.winner_stats.max, &d.winner_stats.mean};
    for (int i = 0; i < 6; ++i) *fields[i] = s.real(9 + i);
    d.measured_unix = s.int64(15);
    d.winner_verified = s.int64(16) == 1;
    d.rows = static_cast<std::size_t>(s.int64(17));
    info->decisions.push_back(std::move(d));
  }
  if (rc != SQLITE_DONE) return sqlite_failure(db, rc, path, "reading decisions");
  return {};
}

// Every row through the row codec and the row checks; the ones that fail go to `problems`.
Status read_rows(sqlite3* db, const std::string& path, std::vector<CacheRow>* out,
                 std::vector<std::string>* problems) {
  Stmt s;
  // A bundle written before the decision column reads as rows without records.
  int rc = s.prepare(db, "SELECT " + std::string(kKeyColumns) + ", " +
                             std::string(result_columns_of(db)) +
                             " FROM results ORDER BY kernel, key, device, toolchain, "
                             "source_hash, status != 'ok', median, config");
  for (rc = rc == SQLITE_OK ? s.step() : rc; rc == SQLITE_ROW; rc = s.step()) {
    CacheRow row;
    read_key(s, &row.key);
    std::string why = key_columns_ok(s) ? "" : "a key column has the wrong type";
    if (why.empty() && read_result(s, 5, row.key, &row.result, &why)) {
      Status st = check_stored_key(row.key);
      if (st.ok()) st = check_stored_row(row.result, &row.result.config);
      if (st.ok()) {
        row.result.origin = path;
        out->push_back(std::move(row));
        continue;
      }
      why = st.message();
    }
    problems->push_back("kernel " + row.key.kernel + ", key " + row.key.key + ", config '" +
                        row.result.config + "': " + why);
  }
  if (rc != SQLITE_DONE) return sqlite_failure(db, rc, path, "reading rows");
  cache::order_by_winner_rule(*out);
  return {};
}

// A decision whose winner is not what the winner rule picks from the bundle's rows is listed
// (the rows are what is served; the decision only describes them).
void check_decisions(const std::vector<CacheRow>& rows, BundleInfo* info) {
  std::map<KeyTuple, std::string> first_ok;
  for (const CacheRow& r : rows)
    if (r.result.status == StatusCode::ok) first_ok.emplace(key_tuple(r.key), r.result.config);
  for (const BundleDecision& d : info->decisions) {
    auto it = first_ok.find(key_tuple(d.key));
    if (it == first_ok.end() || it->second != d.winner)
      info->problems.push_back("kernel " + d.key.kernel + ", key " + d.key.key +
                               ": the decision names winner '" + d.winner +
                               "', the rows' winner rule picks '" +
                               (it == first_ok.end() ? std::string("nothing") : it->second) + "'");
  }
}

}  // namespace

KeyTuple key_tuple(const StoreKey& k) {
  return {k.kernel, k.source_hash, k.key, k.device, k.toolchain};
}

int content_checksum(sqlite3* db, std::int64_t* out) {
  static constexpr std::string_view kTables[] = {
      "SELECT * FROM results ORDER BY kernel, source_hash, key, device, toolchain, config",
      "SELECT * FROM decisions ORDER BY kernel, source_hash, key, device, toolchain",
      "SELECT * FROM bundle_info ORDER BY name"};
  std::uint64_t h = stable_hash("libtune bundle content");
  for (std::string_view sql : kTables) {
    Stmt s;
    int rc = s.prepare(db, sql);
    if (rc != SQLITE_OK) return rc;
    const int columns = sqlite3_column_count(s.get());
    while ((rc = s.step()) == SQLITE_ROW) {
      for (int c = 0; c < columns; ++c) {
        const int type = s.type(c);
        h = hash_combine(h, static_cast<std::uint64_t>(type));
        if (type == SQLITE_NULL) continue;
        const void* p =
            type == SQLITE_BLOB ? sqlite3_column_blob(s.get(), c) : sqlite3_column_text(s.get(), c);
        const int n = sqlite3_column_bytes(s.get(), c);
        const auto len = static_cast<std::size_t>(n);
        h = hash_combine(stable_hash(std::string_view(static_cast<const char*>(p), len), h), len);
      }
    }
    if (rc != SQLITE_DONE) return rc;
    h = hash_combine(h, 0x7461626c65ULL);  // end of a table
  }
  *out = to_db(h);
  return SQLITE_OK;
}

Result<std::shared_ptr<const BundleFile>> BundleFile::open(const std::string& path) {
  TUNE_RETURN_IF_ERROR(check_file_kind(path));
  Connection c;
  const std::string uri = uri_path(path) + "?mode=ro&immutable=1";
  int rc = sqlite3_open_v2(uri.c_str(), &c.db,
                           SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) return sqlite_failure(c.db, rc, path, "cannot be opened");
  // A hostile schema must not run functions of ours or SQLite's with side effects.
  sqlite3_db_config(c.db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_db_config(c.db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  TUNE_RETURN_IF_ERROR(check_header(c.db, path));
  TUNE_RETURN_IF_ERROR(check_content_checksum(c.db, path));
  auto b = std::shared_ptr<BundleFile>(new BundleFile());
  b->info_.path = path;
  TUNE_RETURN_IF_ERROR(read_info(c.db, path, &b->info_));
  TUNE_RETURN_IF_ERROR(read_decisions(c.db, path, &b->info_));
  TUNE_RETURN_IF_ERROR(read_rows(c.db, path, &b->rows_, &b->info_.problems));
  check_decisions(b->rows_, &b->info_);
  b->info_.rows = b->rows_.size();
  for (const CacheRow& r : b->rows_) b->by_key_[key_tuple(r.key)].push_back(r.result);
  return std::shared_ptr<const BundleFile>(std::move(b));
}

std::shared_ptr<const BundleFile> BundleFile::open_shared(const std::string& path) {
  // One entry per file identity: a bundle replaced on disk is read again.
  using Identity = std::tuple<std::string, dev_t, ino_t, off_t, std::int64_t>;
  static std::mutex mu;
  static std::map<Identity, std::shared_ptr<const BundleFile>> opened;
  struct stat st {};
  Identity id{path, 0, 0, 0, 0};
  if (::stat(path.c_str(), &st) == 0)
    id = {path, st.st_dev, st.st_ino, st.st_size, static_cast<std::int64_t>(st.st_mtime)};
  std::lock_guard lock(mu);
  if (auto it = opened.find(id); it != opened.end()) return it->second;
  Result<std::shared_ptr<const BundleFile>> b = open(path);
  std::shared_ptr<const BundleFile> kept;
  if (!b.ok()) {
    log_warning(b.status().message() + "; the bundle is not used");
  } else {
    kept = std::move(*b);
    warn_ignored("bundle " + path, kept->info().problems, "row or decision",
                 " (the rest of the bundle is used)");
  }
  opened.emplace(std::move(id), kept);
  return kept;
}

std::vector<StoredResult> BundleFile::load(const StoreKey& key) const {
  auto it = by_key_.find(key_tuple(key));
  return it == by_key_.end() ? std::vector<StoredResult>{} : it->second;
}

}  // namespace tune::cache

namespace tune {

Result<BundleInfo> read_bundle(const std::string& path) {
  Result<std::shared_ptr<const cache::BundleFile>> b = cache::BundleFile::open(path);
  if (!b.ok()) return b.status();
  return (*b)->info();
}

}  // namespace tune
