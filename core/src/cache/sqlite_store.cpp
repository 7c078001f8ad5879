// SqliteStore: opening, damage handling, load and save. See tune/sqlite_store.hpp.
#include "tune/sqlite_store.hpp"

#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <system_error>
#include <utility>

#include "cache/cache_validation.hpp"
#include "safe_file.hpp"
#include "sqlite_db.hpp"
#include "tune/backend/hash.hpp"
#include "tune/environment.hpp"
#include "tune/log.hpp"

namespace tune {

using cache::Stmt;
using cache::StmtScope;

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kMemoryPath = ":memory:";

// Schema version 1. `checksum` (a row's stable_hash, see row_checksum) and the `claims` table
// were added to version 1 in place: files written before them gain them on the first
// readwrite open (ensure_current_schema), and an older libtune ignores both (its rows have
// a NULL checksum, read as unverified but checked like any row).
constexpr std::string_view kSchemaSql = R"sql(
CREATE TABLE IF NOT EXISTS results (
  kernel      TEXT    NOT NULL,
  source_hash INTEGER NOT NULL,
  key         TEXT    NOT NULL,
  device      TEXT    NOT NULL,
  toolchain   TEXT    NOT NULL,
  config      TEXT    NOT NULL,
  status      TEXT    NOT NULL,
  reason      TEXT    NOT NULL DEFAULT '',
  count       INTEGER NOT NULL DEFAULT 0,
  min REAL, p20 REAL, median REAL, p80 REAL, max REAL, mean REAL,
  unix_time   INTEGER NOT NULL DEFAULT 0,
  checksum    INTEGER,
  PRIMARY KEY (kernel, source_hash, key, device, toolchain, config)
) WITHOUT ROWID;
)sql";

constexpr std::string_view kClaimsSql = R"sql(
CREATE TABLE IF NOT EXISTS claims (
  kernel      TEXT    NOT NULL,
  source_hash INTEGER NOT NULL,
  key         TEXT    NOT NULL,
  device      TEXT    NOT NULL,
  toolchain   TEXT    NOT NULL,
  owner       TEXT    NOT NULL,
  host        TEXT    NOT NULL,
  pid         INTEGER NOT NULL,
  expires_ms  INTEGER NOT NULL,
  PRIMARY KEY (kernel, source_hash, key, device, toolchain)
) WITHOUT ROWID;
)sql";

constexpr std::string_view kResultColumns =
    "config, status, reason, count, min, p20, median, p80, max, mean, unix_time, checksum";
// For a file from before the checksum column, opened read-only (it cannot be upgraded).
constexpr std::string_view kLegacyResultColumns =
    "config, status, reason, count, min, p20, median, p80, max, mean, unix_time, NULL";

constexpr std::string_view kKeyColumns = "kernel, source_hash, key, device, toolchain";

constexpr std::string_view kUpsertSql =
    "INSERT OR REPLACE INTO results (kernel, source_hash, key, device, toolchain, config, "
    "status, reason, count, min, p20, median, p80, max, mean, unix_time, checksum) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)";

constexpr std::string_view kKeyWhere =
    " WHERE kernel = ?1 AND source_hash = ?2 AND key = ?3 AND device = ?4 AND toolchain = ?5";

// Plausibility limits of a stored row (see check_stored_row).
constexpr std::int64_t kMaxFutureSeconds = 366 * 24 * 3600;

// Databases up to this size get the full PRAGMA integrity_check on every open (a few ms);
// larger ones the quick_check, and the full check when a read finds a damaged row.
constexpr std::int64_t kFullCheckBytes = 4 << 20;

constexpr std::string_view kFilterWhere =
    " WHERE (?1 = '' OR kernel = ?1) AND (?2 = '' OR key = ?2) "
    "AND (?3 = '' OR instr(device, ?3) > 0)";

std::int64_t now_unix() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string errmsg(sqlite3* db, int rc) {
  std::string msg = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  if (msg.empty()) msg = sqlite3_errstr(rc);
  return msg;
}

// Percent-encodes the characters that are special in an SQLite URI path.
std::string uri_path(std::string_view path) {
  std::string out = "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      static constexpr char kHex[] = "0123456789ABCDEF";
      auto u = static_cast<unsigned char>(c);
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

std::uint64_t double_bits(double v) noexcept {
  std::uint64_t u = 0;
  static_assert(sizeof u == sizeof v);
  std::memcpy(&u, &v, sizeof u);
  return u;
}

// A row's checksum over its key and every stored column, as stored (a statistic stored as
// NULL, i.e. NaN, hashes as NaN). Protects against damage, not against a deliberate writer.
std::int64_t row_checksum(const StoreKey& k, const StoredResult& r) noexcept {
  std::uint64_t h = stable_hash(k.kernel);
  for (std::string_view t :
       {std::string_view(k.key), std::string_view(k.device), std::string_view(k.toolchain),
        std::string_view(r.config), to_string(r.status), std::string_view(r.reason)})
    h = hash_combine(stable_hash(t, h), t.size());
  h = hash_combine(h, k.source_hash);
  h = hash_combine(h, r.stats.count);
  for (double v :
       {r.stats.min, r.stats.p20, r.stats.median, r.stats.p80, r.stats.max, r.stats.mean})
    h = hash_combine(h, std::isnan(v) ? 0x7ff8000000000000ULL : double_bits(v));
  h = hash_combine(h, static_cast<std::uint64_t>(r.unix_time));
  return cache::to_db(h);
}

const char* type_name(int t) noexcept {
  switch (t) {
    case SQLITE_INTEGER:
      return "an integer";
    case SQLITE_FLOAT:
      return "a real";
    case SQLITE_TEXT:
      return "text";
    case SQLITE_BLOB:
      return "a blob";
    default:
      return "NULL";
  }
}

// The SQLite type each column of kResultColumns must have (damage can leave text in a
// statistics column, which would otherwise read as 0.0).
bool check_column_types(const Stmt& s, int first, std::string* why) {
  static constexpr const char* kNames[] = {"config", "status", "reason", "count", "min",      "p20",
                                           "median", "p80",    "max",    "mean",  "unix_time"};
  for (int i = 0; i < 11; ++i) {
    int t = s.type(first + i);
    bool ok = i < 3               ? t == SQLITE_TEXT
              : i == 3 || i == 10 ? t == SQLITE_INTEGER
                                  : t == SQLITE_FLOAT || t == SQLITE_INTEGER || t == SQLITE_NULL;
    if (!ok) {
      *why = std::string("column ") + kNames[i] + " holds " + type_name(t);
      return false;
    }
  }
  int c = s.type(first + 11);
  if (c != SQLITE_INTEGER && c != SQLITE_NULL) {
    *why = std::string("column checksum holds ") + type_name(c);
    return false;
  }
  return true;
}

// Reads a StoredResult of `key` from the columns listed in kResultColumns starting at
// `first`. Returns false (with `why`) when a column has the wrong type, the status name is
// unknown, or the row's checksum does not match.
bool read_result(const Stmt& s, int first, const StoreKey& key, StoredResult* r, std::string* why) {
  r->config = s.text(first);
  if (!check_column_types(s, first, why)) return false;
  std::string status = s.text(first + 1);
  if (!parse_status_code(status, &r->status)) {
    *why = "unknown status '" + status + "'";
    return false;
  }
  r->reason = s.text(first + 2);
  std::int64_t count = s.int64(first + 3);
  if (count < 0 || count > std::numeric_limits<std::uint32_t>::max()) {
    *why = "sample count " + std::to_string(count) + " out of range";
    return false;
  }
  r->stats.count = static_cast<std::uint32_t>(count);
  double* fields[] = {&r->stats.min, &r->stats.p20, &r->stats.median,
                      &r->stats.p80, &r->stats.max, &r->stats.mean};
  for (int i = 0; i < 6; ++i) *fields[i] = s.real(first + 4 + i);
  r->unix_time = s.int64(first + 10);
  if (s.type(first + 11) == SQLITE_INTEGER && s.int64(first + 11) != row_checksum(key, *r)) {
    *why = "checksum mismatch (the row was altered)";
    return false;
  }
  // A failed configuration is timed as +inf; NULL is how a non-finite value may come back.
  for (double* f : fields)
    if (std::isnan(*f) && r->status != StatusCode::ok) *f = std::numeric_limits<double>::infinity();
  return true;
}

// Binds a row at ?6..?17 (key at ?1..?5 by bind_key), with its checksum.
void bind_result(Stmt& s, int first, const StoreKey& key, const StoredResult& in) {
  StoredResult r = in;
  if (r.unix_time == 0) r.unix_time = now_unix();
  s.bind(first, std::string_view(r.config));
  s.bind(first + 1, to_string(r.status));
  s.bind(first + 2, std::string_view(r.reason));
  s.bind(first + 3, static_cast<std::int64_t>(r.stats.count));
  s.bind(first + 4, r.stats.min);
  s.bind(first + 5, r.stats.p20);
  s.bind(first + 6, r.stats.median);
  s.bind(first + 7, r.stats.p80);
  s.bind(first + 8, r.stats.max);
  s.bind(first + 9, r.stats.mean);
  s.bind(first + 10, r.unix_time);
  s.bind(first + 11, row_checksum(key, r));
}

void bind_key(Stmt& s, const StoreKey& k) {
  s.bind(1, std::string_view(k.kernel));
  s.bind(2, cache::to_db(k.source_hash));
  s.bind(3, std::string_view(k.key));
  s.bind(4, std::string_view(k.device));
  s.bind(5, std::string_view(k.toolchain));
}

void bind_filter(Stmt& s, const CacheFilter& f) {
  s.bind(1, std::string_view(f.kernel));
  s.bind(2, std::string_view(f.key));
  s.bind(3, std::string_view(f.device));
}

// Logs one warning for the rows a read dropped: the first few reasons and a count.
void warn_dropped(const std::string& where, const std::vector<std::string>& reasons) {
  if (reasons.empty()) return;
  std::string msg = where + ": ignored " + std::to_string(reasons.size()) + " stored row" +
                    (reasons.size() == 1 ? "" : "s") + ": ";
  constexpr std::size_t kShown = 3;
  for (std::size_t i = 0; i < reasons.size() && i < kShown; ++i) {
    if (i > 0) msg += "; ";
    msg += reasons[i];
  }
  if (reasons.size() > kShown) msg += "; ...";
  log_warning(msg);
}

// What opening found about a file.
enum class Verdict {
  ok,        // our schema, this version
  fresh,     // empty database: create the schema
  damaged,   // not a database, corrupt, truncated, foreign, old schema: move aside
  newer,     // a newer libtune's schema: leave it alone, work in memory
  readonly,  // SQLite opened it read-only although readwrite was asked: use it read-only
  unusable,  // cannot be opened or read for another reason (I/O, locks, permissions)
};

struct Finding {
  Verdict verdict = Verdict::ok;
  std::string what;      // for the warning
  bool salvage = false;  // damaged, but our schema: copy the readable rows into the new file
};

// The kind of network file system `dir` is on ("NFS", "Lustre", ...), empty when local or
// unknown. SQLite's WAL mode needs shared memory between the processes, which these lack.
std::string statfs_network_fs(const std::string& dir) {
  struct statfs sfs {};
  if (::statfs(dir.empty() ? "." : dir.c_str(), &sfs) != 0) return {};
  switch (static_cast<std::uint64_t>(static_cast<std::uint32_t>(sfs.f_type))) {
    case 0x6969:
      return "NFS";
    case 0x0BD00BD0:
      return "Lustre";
    case 0xFF534D42:
      return "CIFS";
    case 0xFE534D42:
      return "SMB2";
    case 0x517B:
      return "SMB";
    case 0x01021997:
      return "9P";
    case 0x5346414F:
      return "AFS";
    case 0x00C36400:
      return "Ceph";
    case 0x47504653:
      return "GPFS";
    default:
      return {};
  }
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "?";
  return buf;
}

// Whether process `pid` exists on this host (EPERM: it exists, owned by someone else).
bool pid_alive(std::int64_t pid) {
  if (pid <= 0 || pid > std::numeric_limits<pid_t>::max()) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

// Renames `from` to a fresh "<to_base>[-N]" and returns the name used, or empty (errno set).
std::string rename_unique(const std::string& from, const std::string& to_base) {
  std::string target = to_base;
  for (int i = 1; cache::inspect_path(target).kind != cache::PathKind::absent && i < 1000; ++i)
    target = to_base + "-" + std::to_string(i);
  if (std::rename(from.c_str(), target.c_str()) != 0) return {};
  return target;
}

}  // namespace

// ----------------------------------------------------------------------------------------
// Free functions

std::string_view to_string(CacheMode mode) noexcept {
  switch (mode) {
    case CacheMode::off:
      return "off";
    case CacheMode::readonly:
      return "readonly";
    case CacheMode::readwrite:
      return "readwrite";
  }
  return "unknown";
}

bool parse_cache_mode(std::string_view text, CacheMode* out) noexcept {
  std::string t;
  for (char c : text) t += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (t == "off" || t == "0" || t == "false" || t == "no") {
    *out = CacheMode::off;
  } else if (t == "readonly" || t == "ro" || t == "read-only") {
    *out = CacheMode::readonly;
  } else if (t == "readwrite" || t == "rw" || t == "read-write" || t == "1" || t == "true" ||
             t == "on" || t == "yes") {
    *out = CacheMode::readwrite;
  } else {
    return false;
  }
  return true;
}

CacheMode cache_mode_from_env() {
  const std::string v = env_text("TUNE_CACHE");
  if (v.empty()) return CacheMode::readwrite;
  CacheMode m;
  if (parse_cache_mode(v, &m)) return m;
  log_warning("TUNE_CACHE='" + v + "' is not one of off, readonly, readwrite; using readwrite");
  return CacheMode::readwrite;
}

std::string default_cache_path() {
  auto nonempty = [](const char* name) -> const char* {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' ? v : nullptr;
  };
  if (const std::string d = env_text("TUNE_CACHE_DIR"); !d.empty())
    return (fs::path(d) / "tune.db").string();
  if (const char* d = nonempty("XDG_CACHE_HOME"))
    return (fs::path(d) / "libtune" / "tune.db").string();
  if (const char* d = nonempty("HOME"))
    return (fs::path(d) / ".cache" / "libtune" / "tune.db").string();
  return {};
}

// ----------------------------------------------------------------------------------------
// Impl

struct SqliteStore::Impl {
  std::string path;
  Options opts;
  mutable std::mutex mu;
  sqlite3* db = nullptr;
  bool memory = false;
  bool writable = false;
  bool legacy_columns = false;  // a file without the checksum column, opened read-only
  std::string readonly_why;     // readwrite was asked but the file is read-only: why
  cache::FileId opened_id;      // the file this connection opened (to notice a replacement)
  std::string moved_to;
  bool warned_write = false;  // one warning per store for failing writes
  bool warned_read = false;
  bool warned_claims = false;
  bool deep_checked = false;  // the full integrity check after a bad row: once per store
  int reopen_depth = 0;       // bounds reopen/move-aside recursion
  Stmt load_stmt;
  Stmt upsert_stmt;

  ~Impl() { close(); }

  std::string where() const { return "tuning cache " + path; }
  std::string dir() const {
    std::string d = fs::path(path).parent_path().string();
    return d.empty() ? "." : d;
  }

  void close() {
    opened_id = {};
    load_stmt = Stmt();
    upsert_stmt = Stmt();
    if (db != nullptr) sqlite3_close_v2(db);
    db = nullptr;
  }

  int exec(std::string_view sql) {
    std::string s(sql);
    return sqlite3_exec(db, s.c_str(), nullptr, nullptr, nullptr);
  }

  // Runs a one-row integer query ("PRAGMA user_version").
  int query_int(std::string_view sql, std::int64_t* out) {
    Stmt s;
    int rc = s.prepare(db, sql);
    if (rc != SQLITE_OK) return rc;
    rc = s.step();
    if (rc == SQLITE_ROW) {
      *out = s.int64(0);
      return SQLITE_OK;
    }
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
  }

  // Classifies an error met while inspecting the file.
  Finding failed(int rc, const std::string& doing) {
    Finding f;
    f.verdict = cache::is_damage(rc) ? Verdict::damaged : Verdict::unusable;
    f.what = doing + ": " + errmsg(db, rc);
    return f;
  }

  // ---- Stage 1: what is at the path, looked at without opening anything.

  // The database and its companions must be absent or regular files: a symbolic link is
  // never followed, a FIFO, device or socket never opened (it would block). Returns what is
  // wrong ("<file> is a FIFO"), empty when nothing is.
  std::string unsafe_files() const {
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
      std::string p = path + suffix;
      if (std::string why = cache::unsafe_file_reason(p); !why.empty()) return p + " is " + why;
    }
    return {};
  }

  // Renames every unsafe one of them aside (a rename moves the link or FIFO itself and
  // never opens or follows it). False when one cannot be moved.
  bool move_unsafe_aside(std::string* moved) {
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
      std::string p = path + suffix;
      if (cache::unsafe_file_reason(p).empty()) continue;
      std::string to = rename_unique(p, p + ".corrupt-" + std::to_string(now_unix()));
      if (to.empty()) return false;
      if (!moved->empty()) *moved += ", ";
      *moved += to;
    }
    return true;
  }

  // Why the file cannot be written although readwrite was asked, empty when it can. Mode
  // bits are honoured even for root (who bypasses them): a file or directory without any
  // write permission bit was made read-only on purpose.
  std::string readonly_reason() const {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return {};
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    if ((st.st_mode & 0222) == 0) return std::string("the file is read-only (mode ") + mode + ")";
    if (::access(path.c_str(), W_OK) != 0)
      return std::string("the file is not writable (") + std::strerror(errno) + ")";
    struct stat ds {};
    std::string d = dir();
    if (::stat(d.c_str(), &ds) == 0 && (ds.st_mode & 0222) == 0)
      return "its directory " + d + " is read-only";
    if (::access(d.c_str(), W_OK) != 0)
      return "its directory " + d + " is not writable (" + std::strerror(errno) + ")";
    return {};
  }

  // ---- Stage 2: open and inspect.

  // Looks at an open database: integrity, owner, schema version. The reads run in one read
  // transaction so they see one snapshot: read one by one, a schema that another process
  // commits between them looks like a foreign file (application id 0, but tables).
  Finding inspect(bool check_writable) {
    if (check_writable && sqlite3_db_readonly(db, "main") == 1)
      return {Verdict::readonly, "the file cannot be opened for writing", false};
    if (int rc = exec("BEGIN"); rc != SQLITE_OK) return failed(rc, "starting a read");
    Finding f = inspect_snapshot();
    if (exec("COMMIT") != SQLITE_OK) exec("ROLLBACK");
    return f;
  }

  Finding inspect_snapshot() {
    std::int64_t app_id = 0, version = 0, tables = 0;
    if (int rc = query_int("PRAGMA application_id", &app_id); rc != SQLITE_OK)
      return failed(rc, "reading the header");
    if (int rc = query_int("PRAGMA user_version", &version); rc != SQLITE_OK)
      return failed(rc, "reading the header");
    if (int rc = query_int("SELECT count(*) FROM sqlite_schema", &tables); rc != SQLITE_OK)
      return failed(rc, "reading the schema");
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
    if (version < kCacheSchemaVersion)
      return {Verdict::damaged,
              "an old schema (version " + std::to_string(version) + ", this libtune reads " +
                  std::to_string(kCacheSchemaVersion) + ")",
              false};
    Finding f = check_integrity(/*full=*/file_size() <= kFullCheckBytes);
    f.salvage = f.verdict == Verdict::damaged;  // our schema: its readable rows are worth keeping
    return f;
  }

  std::int64_t file_size() const {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0 ? static_cast<std::int64_t>(st.st_size) : 0;
  }

  // Integrity of every page (quick_check), and of every record and constraint too (full
  // integrity_check) when asked: catches truncation and corruption before a query trips on
  // it.
  Finding check_integrity(bool full) {
    Stmt qc;
    const char* sql = full ? "PRAGMA integrity_check(1)" : "PRAGMA quick_check(1)";
    if (int rc = qc.prepare(db, sql); rc != SQLITE_OK) return failed(rc, "checking integrity");
    int rc = qc.step();
    if (rc != SQLITE_ROW) return failed(rc, "checking integrity");
    if (std::string r = qc.text(0); r != "ok") {
      std::replace(r.begin(), r.end(), '\n', ' ');  // one line in the warning
      return {Verdict::damaged, "corrupt: " + r, false};
    }
    return {Verdict::ok, {}, false};
  }

  int create_schema() {
    int rc = exec("BEGIN IMMEDIATE");
    if (rc != SQLITE_OK) return rc;
    // Another process may have created it between our look and our lock.
    std::int64_t app_id = 0;
    rc = query_int("PRAGMA application_id", &app_id);
    if (rc == SQLITE_OK && app_id != kCacheApplicationId) {
      rc = exec(kSchemaSql);
      if (rc == SQLITE_OK) rc = exec(kClaimsSql);
      if (rc == SQLITE_OK)
        rc = exec("PRAGMA application_id = " + std::to_string(kCacheApplicationId));
      if (rc == SQLITE_OK)
        rc = exec("PRAGMA user_version = " + std::to_string(kCacheSchemaVersion));
    }
    if (rc == SQLITE_OK) rc = exec("COMMIT");
    if (rc != SQLITE_OK) exec("ROLLBACK");
    return rc;
  }

  bool has_column(const char* table, const char* column) {
    Stmt s;
    return s.prepare(db, std::string("SELECT ") + column + " FROM " + table + " LIMIT 0") ==
           SQLITE_OK;
  }

  // Upgrades a version-1 file written before the checksum column and the claims table, in
  // place (one short write, once per file).
  int ensure_current_schema() {
    // Not our tables under our id: changing nothing, the caller reports it as damaged.
    if (Stmt s; (s.prepare(db, "SELECT " + std::string(kKeyColumns) + ", " +
                                   std::string(kLegacyResultColumns) + " FROM results LIMIT 0")) !=
                SQLITE_OK)
      return SQLITE_ERROR;
    if (has_column("results", "checksum") && has_column("claims", "expires_ms")) return SQLITE_OK;
    int rc = exec("BEGIN IMMEDIATE");
    if (rc != SQLITE_OK) return rc;
    if (!has_column("results", "checksum"))
      rc = exec("ALTER TABLE results ADD COLUMN checksum INTEGER");
    if (rc == SQLITE_OK) rc = exec(kClaimsSql);
    if (rc == SQLITE_OK) rc = exec("COMMIT");
    if (rc != SQLITE_OK) exec("ROLLBACK");
    return rc;
  }

  std::string_view result_columns() const {
    return legacy_columns ? kLegacyResultColumns : kResultColumns;
  }

  int prepare_statements() {
    legacy_columns = !writable && !has_column("results", "checksum");
    int rc = load_stmt.prepare(db, "SELECT " + std::string(result_columns()) + " FROM results" +
                                       std::string(kKeyWhere) + " ORDER BY config");
    if (rc == SQLITE_OK && writable) rc = upsert_stmt.prepare(db, kUpsertSql);
    return rc;
  }

  // Renames the file (and its -wal / -shm / -journal companions) to <path>.corrupt-<time>.
  bool move_aside(std::string* error) {
    std::string target = rename_unique(path, path + ".corrupt-" + std::to_string(now_unix()));
    if (target.empty()) {
      *error = std::strerror(errno);
      return false;
    }
    for (const char* suffix : {"-wal", "-shm", "-journal"}) {
      std::string from = path + suffix;
      if (cache::inspect_path(from).kind != cache::PathKind::absent)
        std::rename(from.c_str(), (target + suffix).c_str());
    }
    moved_to = target;
    return true;
  }

  void open_memory() {
    close();
    memory = true;
    writable = true;
    int rc = sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc == SQLITE_OK) rc = create_schema();
    if (rc == SQLITE_OK) rc = prepare_statements();
    if (rc != SQLITE_OK) {
      // Only out-of-memory gets here; the store then behaves as empty.
      log_warning(where() + ": cannot create an in-memory database: " + errmsg(db, rc));
      close();
      writable = false;
    }
  }

  bool make_parent_dir() {
    std::error_code ec;
    fs::path parent = fs::path(path).parent_path();
    if (!parent.empty()) fs::create_directories(parent, ec);
    if (!ec) return true;
    log_warning(where() + ": cannot create directory " + parent.string() + ": " + ec.message() +
                "; tuning results are kept in memory");
    return false;
  }

  // Opens the file read/write and inspects it (creating the schema in an empty one).
  Finding open_rw_and_inspect() {
    int rc = sqlite3_open_v2(
        path.c_str(), &db,
        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW,
        nullptr);
    if (rc != SQLITE_OK) return failed(rc, "opening");
    sqlite3_extended_result_codes(db, 1);
    sqlite3_busy_timeout(db, opts.busy_timeout_ms);
    Finding f = inspect(/*check_writable=*/true);
    if (f.verdict == Verdict::fresh) {
      rc = create_schema();
      f = rc == SQLITE_OK ? Finding{} : failed(rc, "creating the schema");
    }
    if (f.verdict != Verdict::ok) return f;
    writable = true;
    rc = ensure_current_schema();
    if (rc == SQLITE_OK) rc = prepare_statements();  // before anything changes the file (WAL)
    if (rc == SQLITE_OK) return f;
    f = failed(rc, "preparing statements");
    // Our application id and version but not our tables: damaged.
    if (f.verdict == Verdict::unusable && (rc & 0xff) == SQLITE_ERROR) f.verdict = Verdict::damaged;
    return f;
  }

  // Opens the file for reading and writing. A link, special file or damaged database is
  // moved aside (at most twice) and a fresh one started; a damaged one of our schema has its
  // readable rows copied over. `aside` and `salvage_from` carry a move-aside made by the
  // caller (damage found after opening), reported with the salvage count in one warning.
  void open_readwrite(std::string aside = {}, std::string salvage_from = {}) {
    if (path == kMemoryPath) return open_memory();
    if (!make_parent_dir()) return open_memory();
    for (int attempt = 0; attempt < 3; ++attempt) {
      if (std::string bad = unsafe_files(); !bad.empty()) {
        std::string moved;
        if (!move_unsafe_aside(&moved)) {
          log_warning(where() + ": " + bad + "; refused (never followed or opened) and cannot " +
                      "be moved aside (" + std::strerror(errno) +
                      "); tuning results are kept in memory");
          return open_memory();
        }
        log_warning(where() + ": " + bad + "; refused (never followed or opened), moved aside to " +
                    moved);
      }
      if (std::string why = readonly_reason(); !why.empty()) return open_readonly_in_rw(why);
      const cache::FileId before = cache::file_id(path);
      Finding f = open_rw_and_inspect();
      if (f.verdict == Verdict::ok) {
        // The file we opened must still be the one at the path (another process may have
        // moved it aside and started afresh in between): else look again.
        opened_id = cache::file_id(path);
        if (before.valid && !(before == opened_id)) {
          close();
          continue;
        }
        configure_journal();
        finish_move_aside(aside, salvage_from);
        return;
      }
      close();
      writable = false;
      if (f.verdict == Verdict::readonly) return open_readonly_in_rw(f.what);
      if (!aside.empty()) log_warning(aside);
      aside.clear();
      if (f.verdict == Verdict::newer) {
        log_warning(where() + ": " + f.what +
                    "; left untouched, tuning results are kept in memory");
        return open_memory();
      }
      if (f.verdict == Verdict::unusable || !before.valid) {
        log_warning(where() + ": cannot be used (" + f.what +
                    "); tuning results are kept in memory");
        return open_memory();
      }
      // Damaged. Someone may have replaced the file since we opened it (another process
      // moving it aside): then look again instead of moving the replacement.
      if (!(cache::file_id(path) == before)) continue;
      std::string error;
      if (!move_aside(&error)) {
        log_warning(where() + ": " + f.what + "; cannot move it aside (" + error +
                    "); tuning results are kept in memory");
        return open_memory();
      }
      aside = where() + ": " + f.what + "; moved aside to " + moved_to;
      salvage_from = f.salvage ? moved_to : std::string();
    }
    if (!aside.empty()) log_warning(aside);
    log_warning(where() +
                ": still unusable after moving the damaged file aside; tuning "
                "results are kept in memory");
    open_memory();
  }

  // Reports a move-aside made on the way to this fresh file, with what was salvaged.
  void finish_move_aside(const std::string& aside, const std::string& salvage_from) {
    if (aside.empty()) return;
    std::string msg = aside;
    if (!salvage_from.empty()) msg += "; " + salvage(salvage_from);
    log_warning(msg + "; starting a fresh cache");
  }

  // WAL on a local file system; the rollback journal (DELETE, with SQLite's file locking)
  // on a network one, where WAL's shared memory does not work.
  void configure_journal() {
    std::string net =
        opts.filesystem_probe ? opts.filesystem_probe(dir()) : statfs_network_fs(dir());
    if (net.empty()) return configure_wal();
    Stmt s;
    std::string mode = "?";
    if (s.prepare(db, "PRAGMA journal_mode=DELETE") == SQLITE_OK && s.step() == SQLITE_ROW)
      mode = s.text(0);
    log_warning(where() + ": on a network file system (" + net +
                "), where SQLite's WAL mode does not work; using journal_mode=" + mode +
                " with file locking");
  }

  void configure_wal() {
    // journal_mode=WAL is persistent and needs a brief exclusive lock the first time; the
    // busy handler waits for it. Failing to switch is not fatal (e.g. a file system without
    // shared memory): the default rollback journal is still correct, only slower.
    Stmt s;
    if (s.prepare(db, "PRAGMA journal_mode=WAL") == SQLITE_OK) {
      int rc = s.step();
      if (rc == SQLITE_ROW && s.text(0) != "wal")
        log(LogLevel::debug, where() + ": WAL mode unavailable, journal mode " + s.text(0));
    }
    exec("PRAGMA synchronous=NORMAL");
  }

  // ---- Salvage: the readable, valid rows of a damaged file of our schema.

  // Copies the rows of `from` that read back and pass the row checks into this (fresh)
  // database, scanning forward and then backward so that rows on both sides of a damaged
  // page are reached. Existing rows are never replaced. Returns the summary for the warning.
  std::string salvage(const std::string& from) {
    sqlite3* src = nullptr;
    std::string uri = uri_path(from) + "?mode=ro";
    int rc = sqlite3_open_v2(
        uri.c_str(), &src, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOFOLLOW, nullptr);
    std::size_t kept = 0, invalid = 0;
    std::int64_t total = -1;
    std::map<std::string, bool> seen;  // primary key -> valid
    if (rc == SQLITE_OK && exec("BEGIN IMMEDIATE") == SQLITE_OK) {
      Stmt ins;
      std::string sql(kUpsertSql);
      sql.replace(0, std::string_view("INSERT OR REPLACE").size(), "INSERT OR IGNORE");
      if (ins.prepare(db, sql) == SQLITE_OK) {
        for (const char* order : {"ASC", "DESC"})
          salvage_scan(src, order, ins, &seen, &kept, &invalid);
      }
      if (exec("COMMIT") != SQLITE_OK) {
        exec("ROLLBACK");
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

  void salvage_scan(sqlite3* src, const char* order, Stmt& ins, std::map<std::string, bool>* seen,
                    std::size_t* kept, std::size_t* invalid) {
    Stmt s;
    std::string o = std::string(" ") + order;
    std::string sql = "SELECT " + std::string(kKeyColumns) + ", " + std::string(kResultColumns) +
                      " FROM results ORDER BY kernel" + o + ", source_hash" + o + ", key" + o +
                      ", device" + o + ", toolchain" + o + ", config" + o;
    if (s.prepare(src, sql) != SQLITE_OK) {
      // A file from before the checksum column.
      sql.replace(sql.find(kResultColumns), kResultColumns.size(), kLegacyResultColumns);
      if (s.prepare(src, sql) != SQLITE_OK) return;
    }
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
      if (ins.step() == SQLITE_DONE && sqlite3_changes(db) > 0) ++*kept;
    }
  }

  static void read_key(const Stmt& s, StoreKey* k) {
    k->kernel = s.text(0);
    k->source_hash = cache::from_db(s.int64(1));
    k->key = s.text(2);
    k->device = s.text(3);
    k->toolchain = s.text(4);
  }

  static bool key_columns_ok(const Stmt& s) {
    return s.type(0) == SQLITE_TEXT && s.type(1) == SQLITE_INTEGER && s.type(2) == SQLITE_TEXT &&
           s.type(3) == SQLITE_TEXT && s.type(4) == SQLITE_TEXT;
  }

  // ---- Read-only use.

  // Opens the file read-only and inspects it; never creates, writes or moves anything.
  Finding open_ro_and_inspect() {
    Finding f;
    for (bool immutable : {false, true}) {
      // A WAL database in a read-only directory cannot get its -shm file: read it as
      // immutable (no locks, no shared memory) then.
      std::string uri = uri_path(path) + (immutable ? "?mode=ro&immutable=1" : "?mode=ro");
      int rc = sqlite3_open_v2(
          uri.c_str(), &db,
          SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW,
          nullptr);
      if (rc != SQLITE_OK) {
        f = failed(rc, "opening");
      } else {
        sqlite3_extended_result_codes(db, 1);
        sqlite3_busy_timeout(db, opts.busy_timeout_ms);
        f = inspect(/*check_writable=*/false);
      }
      if (f.verdict == Verdict::ok) {
        if (rc = prepare_statements(); rc == SQLITE_OK) {
          opened_id = cache::file_id(path);
          return f;
        }
        f = failed(rc, "preparing statements");
      }
      if (f.verdict == Verdict::fresh) return f;
      close();
      if (f.verdict != Verdict::unusable || immutable) return f;
    }
    return f;
  }

  // TUNE_CACHE=readonly.
  void open_readonly() {
    writable = false;
    if (path == kMemoryPath) return;
    if (cache::inspect_path(path).kind == cache::PathKind::absent) return;  // no cache yet
    if (std::string bad = unsafe_files(); !bad.empty()) {
      log_warning(where() + ": " + bad +
                  "; refused, never opened (TUNE_CACHE=readonly: left as is, the cache is "
                  "treated as empty)");
      return;
    }
    Finding f = open_ro_and_inspect();
    if (f.verdict == Verdict::ok) return;
    close();
    if (f.verdict == Verdict::fresh) return;  // an empty file: nothing stored
    log_warning(where() + ": " + f.what +
                " (TUNE_CACHE=readonly: file left as is, the cache is treated as empty)");
  }

  // Readwrite was asked but the file cannot be written (`why`): its rows are used, nothing
  // is written, created or moved, with one warning. Unusable as well: rows in memory.
  void open_readonly_in_rw(const std::string& why) {
    close();
    writable = false;
    readonly_why = why;
    Finding f = open_ro_and_inspect();
    if (f.verdict == Verdict::ok) {
      log_warning(where() + ": " + why +
                  "; used read-only (its rows are read, new tuning results are not saved)");
      return;
    }
    close();
    if (f.verdict == Verdict::fresh) {
      log_warning(where() + ": " + why + " and empty; tuning results are kept in memory");
      return open_memory();
    }
    log_warning(where() + ": " + f.what + "; cannot move it aside (" + why +
                "); tuning results are kept in memory");
    open_memory();
  }

  void open() {
    if (opts.mode == CacheMode::readwrite)
      open_readwrite();
    else
      open_readonly();
  }

  // ---- Errors after opening.

  // Whether the file this connection opened is still the one at the path. When another
  // process moved it aside (or someone deleted or replaced it), reopens the path, so reads
  // and writes go to the live file. Returns false when no database is usable afterwards.
  bool ensure_live() {
    if (db == nullptr || memory || !opened_id.valid) return db != nullptr;
    if (cache::file_id(path) == opened_id) return true;
    if (reopen_depth > 0) return true;
    ++reopen_depth;
    log_warning(where() + ": the file was deleted or replaced since this process opened it; " +
                "reopening the file now at that path");
    close();
    open();
    --reopen_depth;
    return db != nullptr;
  }

  // An error met after opening. Damage: move the file aside (only when it is still the file
  // this connection opened) and continue on a fresh one, with the readable rows salvaged.
  void on_error(int rc, const char* doing, const std::string& msg) {
    if (cache::is_damage(rc) && !memory) {
      std::string what = "corrupt (" + msg + ") while " + doing;
      close();
      if (opts.mode != CacheMode::readwrite || !readonly_why.empty()) {
        log_warning(where() + ": " + what + "; the cache is treated as empty");
        return;
      }
      if (reopen_depth > 1) return open_memory();
      ++reopen_depth;
      if (!(cache::file_id(path) == opened_id)) {
        log_warning(where() + ": " + what + "; the file at that path is no longer the one " +
                    "this process opened (another process replaced it): nothing moved, " +
                    "reopening it");
        open_readwrite();
      } else if (std::string error; !move_aside(&error)) {
        log_warning(where() + ": " + what + "; cannot move it aside (" + error +
                    "); tuning results are kept in memory");
        open_memory();
      } else {
        open_readwrite(where() + ": " + what + "; moved aside to " + moved_to, moved_to);
      }
      --reopen_depth;
      return;
    }
    bool& warned = std::string_view(doing).starts_with("saving") ? warned_write : warned_read;
    if (!warned) {
      warned = true;
      log_warning(where() + ": " + doing + " failed: " + msg +
                  " (further failures of this kind are not reported)");
    }
  }
  void on_error(int rc, const char* doing) { on_error(rc, doing, errmsg(db, rc)); }

  // ---- Reading and writing rows.

  // Reads the rows of `key`; checks each. The first bad row also triggers the full integrity
  // check (once per store): when that finds damage, the file is moved aside and salvaged and the
  // read repeated.
  std::vector<StoredResult> load(const StoreKey& key) {
    if (!ensure_live()) return {};
    std::vector<StoredResult> out;
    std::vector<std::string> dropped;
    int rc = read_rows(key, &out, &dropped);
    if (rc != SQLITE_DONE) {
      on_error(rc, "loading");
      return {};
    }
    if (!dropped.empty() && !memory && !deep_checked) {
      deep_checked = true;
      Finding f = check_integrity(/*full=*/true);
      if (f.verdict == Verdict::damaged) {
        on_error(SQLITE_CORRUPT, "checking integrity after a damaged row", f.what);
        out.clear();
        dropped.clear();
        if (db == nullptr || read_rows(key, &out, &dropped) != SQLITE_DONE) return {};
      }
    }
    warn_dropped(where() + " (kernel " + key.kernel + ", key " + key.key + ")", dropped);
    return out;
  }

  int read_rows(const StoreKey& key, std::vector<StoredResult>* out,
                std::vector<std::string>* dropped) {
    if (db == nullptr) return SQLITE_DONE;
    StmtScope scope(load_stmt);
    bind_key(load_stmt, key);
    int rc;
    while ((rc = load_stmt.step()) == SQLITE_ROW) {
      StoredResult r;
      std::string why;
      if (read_result(load_stmt, 0, key, &r, &why)) {
        Status st = check_stored_row(r, &r.config);
        if (st.ok()) {
          out->push_back(std::move(r));
          continue;
        }
        why = st.message();
      }
      dropped->push_back("config '" + r.config + "': " + why);
    }
    return rc;
  }

  void save(const StoreKey& key, std::span<const StoredResult> rows) {
    if (rows.empty() || !ensure_live() || !writable) return;
    int rc = exec("BEGIN IMMEDIATE");
    if (rc == SQLITE_OK) {
      for (const StoredResult& r : rows) {
        StmtScope scope(upsert_stmt);
        bind_key(upsert_stmt, key);
        bind_result(upsert_stmt, 6, key, r);
        rc = upsert_stmt.step();
        if (rc != SQLITE_DONE) break;
        rc = SQLITE_OK;
      }
      if (rc == SQLITE_OK) rc = exec("COMMIT");
    }
    if (rc != SQLITE_OK) {
      // The failed write's own message: a ROLLBACK after SQLite already rolled back (a full
      // disk does that) would replace it with "cannot rollback - no transaction is active".
      std::string msg = errmsg(db, rc);
      if (sqlite3_get_autocommit(db) == 0) exec("ROLLBACK");
      on_error(rc, "saving", msg);
    }
  }

  // Every row matching `f`, checked (bad rows are dropped with one warning per key).
  Result<std::vector<CacheRow>> select(const CacheFilter& f) {
    std::vector<CacheRow> out;
    if (!ensure_live()) return out;
    std::string sql =
        "SELECT " + std::string(kKeyColumns) + ", " + std::string(result_columns()) +
        " FROM results" + std::string(kFilterWhere) +
        " ORDER BY kernel, key, device, toolchain, source_hash, status != 'ok', median, config";
    Stmt s;
    int rc = s.prepare(db, sql);
    std::map<std::string, std::vector<std::string>> dropped;  // per key
    if (rc == SQLITE_OK) {
      bind_filter(s, f);
      while ((rc = s.step()) == SQLITE_ROW) {
        CacheRow row;
        read_key(s, &row.key);
        std::string why = key_columns_ok(s) ? "" : "a key column has the wrong type";
        if (why.empty() && read_result(s, 5, row.key, &row.result, &why)) {
          Status st = check_stored_row(row.result, &row.result.config);
          if (st.ok()) {
            out.push_back(std::move(row));
            continue;
          }
          why = st.message();
        }
        dropped["kernel " + row.key.kernel + ", key " + row.key.key].push_back(
            "config '" + row.result.config + "': " + why);
      }
    }
    if (rc != SQLITE_DONE) {
      std::string msg = errmsg(db, rc);
      Status st(cache::is_damage(rc) ? StatusCode::data_loss : StatusCode::io_error,
                where() + ": reading rows: " + msg);
      on_error(rc, "reading rows", msg);
      return st;
    }
    for (const auto& [k, reasons] : dropped) warn_dropped(where() + " (" + k + ")", reasons);
    return out;
  }

  Status require_writable(std::string_view doing) const {
    if (db != nullptr && writable) return {};
    return Status(
        StatusCode::invalid_argument,
        where() + ": cannot " + std::string(doing) + ": the cache is " +
            (opts.mode == CacheMode::readwrite && readonly_why.empty()
                 ? "unusable"
                 : "read-only" + (readonly_why.empty() ? "" : " (" + readonly_why + ")")));
  }

  Result<std::size_t> clear(const CacheFilter& f) {
    ensure_live();
    TUNE_RETURN_IF_ERROR(require_writable("clear"));
    Stmt s;
    int rc = s.prepare(db, "DELETE FROM results" + std::string(kFilterWhere));
    if (rc == SQLITE_OK) {
      bind_filter(s, f);
      rc = s.step();
    }
    if (rc != SQLITE_DONE) {
      std::string msg = errmsg(db, rc);
      Status st(StatusCode::io_error, where() + ": clearing: " + msg);
      on_error(rc, "clearing", msg);
      return st;
    }
    return static_cast<std::size_t>(sqlite3_changes64(db));
  }

  Result<ImportStats> import_rows(std::vector<CacheRow> rows, ImportStats stats,
                                  const ImportOptions& opts_in) {
    ensure_live();
    TUNE_RETURN_IF_ERROR(require_writable("import"));
    Stmt find;
    int rc = find.prepare(db, "SELECT " + std::string(kResultColumns) + " FROM results" +
                                  std::string(kKeyWhere) + " AND config = ?6");
    if (rc != SQLITE_OK) return Status(StatusCode::io_error, where() + ": " + errmsg(db, rc));
    rc = exec("BEGIN IMMEDIATE");
    for (std::size_t i = 0; rc == SQLITE_OK && i < rows.size(); ++i) {
      CacheRow& row = rows[i];
      if (opts_in.space_for) {
        if (const ConfigSpace* space = opts_in.space_for(row.key)) {
          Status st = validate_in_space(row.result, *space);
          if (!st.ok()) {
            ++stats.rejected;
            stats.problems.push_back(row.key.kernel + " config '" + row.result.config +
                                     "': " + st.message());
            continue;
          }
        }
      }
      bool exists = false;
      bool replace = true;
      {
        StmtScope scope(find);
        bind_key(find, row.key);
        find.bind(6, std::string_view(row.result.config));
        rc = find.step();
        if (rc == SQLITE_ROW) {
          exists = true;
          StoredResult old;
          std::string why;
          // An existing row we cannot read is replaced by a valid one.
          if (read_result(find, 0, row.key, &old, &why) && check_stored_row(old).ok())
            replace = has_better_provenance(row.result, old);
          rc = SQLITE_OK;
        } else if (rc == SQLITE_DONE) {
          rc = SQLITE_OK;
        }
      }
      if (rc != SQLITE_OK) break;
      if (!replace) {
        ++stats.kept;
        continue;
      }
      StmtScope scope(upsert_stmt);
      bind_key(upsert_stmt, row.key);
      bind_result(upsert_stmt, 6, row.key, row.result);
      rc = upsert_stmt.step();
      if (rc != SQLITE_DONE) break;
      rc = SQLITE_OK;
      ++(exists ? stats.replaced : stats.added);
    }
    if (rc == SQLITE_OK) rc = exec("COMMIT");
    if (rc != SQLITE_OK) {
      std::string msg = errmsg(db, rc);
      Status st(StatusCode::io_error, where() + ": importing: " + msg);
      if (sqlite3_get_autocommit(db) == 0) exec("ROLLBACK");
      on_error(rc, "importing", msg);
      return st;
    }
    return stats;
  }

  // ---- Claims (see TuningStore::try_claim).

  static const std::string& owner_id() {
    static const std::string id = host_name() + ":" + std::to_string(::getpid());
    return id;
  }

  bool try_claim(const StoreKey& key, std::chrono::milliseconds ttl) {
    if (!ensure_live() || !writable || memory) return true;
    int rc = exec("BEGIN IMMEDIATE");
    bool granted = true;
    if (rc == SQLITE_OK) rc = claim_in_transaction(key, ttl, &granted);
    if (rc == SQLITE_OK) rc = exec("COMMIT");
    if (rc == SQLITE_OK) return granted;
    std::string msg = errmsg(db, rc);
    if (sqlite3_get_autocommit(db) == 0) exec("ROLLBACK");
    if (!warned_claims) {
      warned_claims = true;
      log_warning(where() + ": claiming a key failed: " + msg +
                  "; tuning it anyway (further failures of this kind are not reported)");
    }
    return true;
  }

  int claim_in_transaction(const StoreKey& key, std::chrono::milliseconds ttl, bool* granted) {
    Stmt s;
    int rc =
        s.prepare(db, "SELECT owner, host, pid, expires_ms FROM claims" + std::string(kKeyWhere));
    if (rc != SQLITE_OK) return rc;
    bind_key(s, key);
    rc = s.step();
    const std::int64_t now = now_ms();
    if (rc == SQLITE_ROW) {
      const std::string owner = s.text(0), host = s.text(1);
      const std::int64_t pid = s.int64(2), expires = s.int64(3);
      const bool expired = expires < now || (host == host_name() && !pid_alive(pid));
      if (owner != owner_id() && !expired) {
        *granted = false;
        return SQLITE_OK;
      }
    } else if (rc != SQLITE_DONE) {
      return rc;
    }
    s = Stmt();
    rc = s.prepare(db, "INSERT OR REPLACE INTO claims (" + std::string(kKeyColumns) +
                           ", owner, host, pid, expires_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
                           "?8, ?9)");
    if (rc != SQLITE_OK) return rc;
    bind_key(s, key);
    s.bind(6, std::string_view(owner_id()));
    s.bind(7, std::string_view(host_name()));
    s.bind(8, static_cast<std::int64_t>(::getpid()));
    s.bind(9, now + static_cast<std::int64_t>(ttl.count()));
    rc = s.step();
    *granted = true;
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
  }

  void release_claim(const StoreKey& key) {
    if (!ensure_live() || !writable || memory) return;
    Stmt s;
    int rc = s.prepare(db, "DELETE FROM claims" + std::string(kKeyWhere) + " AND owner = ?6");
    if (rc == SQLITE_OK) {
      bind_key(s, key);
      s.bind(6, std::string_view(owner_id()));
      rc = s.step();
    }
    if (rc != SQLITE_DONE && !warned_claims) {
      warned_claims = true;
      log_warning(where() + ": releasing a claim failed: " + errmsg(db, rc) +
                  " (it expires by itself; further failures of this kind are not reported)");
    }
  }

  static Status validate_in_space(const StoredResult& r, const ConfigSpace& space);
};

Status SqliteStore::Impl::validate_in_space(const StoredResult& r, const ConfigSpace& space) {
  Result<ValidatedRow> v = validate_row(r, space);
  return v.ok() ? Status{} : v.status();
}

// ----------------------------------------------------------------------------------------
// SqliteStore

SqliteStore::SqliteStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SqliteStore::~SqliteStore() = default;

std::shared_ptr<SqliteStore> SqliteStore::open(std::string path, Options opts) {
  auto impl = std::make_unique<Impl>();
  impl->path = std::move(path);
  impl->opts = opts;
  if (impl->opts.mode == CacheMode::off) impl->opts.mode = CacheMode::readonly;
  impl->open();
  return std::shared_ptr<SqliteStore>(new SqliteStore(std::move(impl)));
}

std::vector<StoredResult> SqliteStore::load(const StoreKey& key) {
  std::lock_guard lock(impl_->mu);
  return impl_->load(key);
}

void SqliteStore::save(const StoreKey& key, std::span<const StoredResult> rows) {
  std::lock_guard lock(impl_->mu);
  impl_->save(key, rows);
}

bool SqliteStore::try_claim(const StoreKey& key, std::chrono::milliseconds ttl) {
  std::lock_guard lock(impl_->mu);
  return impl_->try_claim(key, ttl);
}

void SqliteStore::release_claim(const StoreKey& key) {
  std::lock_guard lock(impl_->mu);
  impl_->release_claim(key);
}

const std::string& SqliteStore::path() const noexcept { return impl_->path; }
CacheMode SqliteStore::mode() const noexcept { return impl_->opts.mode; }

bool SqliteStore::in_memory() const {
  std::lock_guard lock(impl_->mu);
  return impl_->memory;
}

bool SqliteStore::writable() const {
  std::lock_guard lock(impl_->mu);
  return impl_->db != nullptr && impl_->writable;
}

std::string SqliteStore::moved_aside_to() const {
  std::lock_guard lock(impl_->mu);
  return impl_->moved_to;
}

Result<std::vector<CacheRow>> SqliteStore::rows(const CacheFilter& filter) {
  std::lock_guard lock(impl_->mu);
  return impl_->select(filter);
}

Result<std::vector<CacheEntry>> SqliteStore::list_entries(const CacheFilter& filter) {
  Result<std::vector<CacheRow>> all = rows(filter);
  if (!all.ok()) return all.status();
  std::vector<CacheEntry> out;
  for (CacheRow& r : *all) {
    const StoreKey& k = r.key;
    if (out.empty() || out.back().key.kernel != k.kernel || out.back().key.key != k.key ||
        out.back().key.device != k.device || out.back().key.toolchain != k.toolchain ||
        out.back().key.source_hash != k.source_hash) {
      out.push_back(CacheEntry{k, {}, {}, 0, 0, 0});
    }
    CacheEntry& e = out.back();
    ++e.rows;
    e.newest_time = std::max(e.newest_time, r.result.unix_time);
    if (r.result.status != StatusCode::ok) {
      ++e.failed;
    } else if (e.best_config.empty() || r.result.stats.median < e.best_stats.median) {
      e.best_config = r.result.config;
      e.best_stats = r.result.stats;
    }
  }
  return out;
}

Result<std::size_t> SqliteStore::clear(const CacheFilter& filter) {
  std::lock_guard lock(impl_->mu);
  return impl_->clear(filter);
}

Result<std::string> SqliteStore::export_json(const CacheFilter& filter) {
  Result<std::vector<CacheRow>> all = rows(filter);
  if (!all.ok()) return all.status();
  return cache_rows_to_json(*all);
}

Result<ImportStats> SqliteStore::import_json(std::string_view text, const ImportOptions& opts) {
  ImportStats stats;
  Result<std::vector<CacheRow>> parsed = cache_rows_from_json(text, &stats.problems);
  if (!parsed.ok()) return parsed.status();
  stats.rejected = stats.problems.size();
  std::lock_guard lock(impl_->mu);
  return impl_->import_rows(std::move(*parsed), std::move(stats), opts);
}

// ----------------------------------------------------------------------------------------
// Row rules

bool has_better_provenance(const StoredResult& incoming, const StoredResult& existing) noexcept {
  bool in_ok = incoming.status == StatusCode::ok;
  bool ex_ok = existing.status == StatusCode::ok;
  if (in_ok != ex_ok) return in_ok;
  if (incoming.stats.count != existing.stats.count)
    return incoming.stats.count > existing.stats.count;
  return incoming.unix_time > existing.unix_time;
}

Status check_stored_row(const StoredResult& row, std::string* canonical) {
  Result<Config> c = Config::parse(row.config);
  if (!c.ok())
    return Status(StatusCode::data_loss, "config does not parse: " + c.status().message());
  if (row.stats.count > kMaxPlausibleSampleCount)
    return Status(StatusCode::data_loss,
                  "sample count " + std::to_string(row.stats.count) + " is implausible");
  if (row.unix_time < 0 || row.unix_time > now_unix() + kMaxFutureSeconds)
    return Status(StatusCode::data_loss,
                  "unix time " + std::to_string(row.unix_time) + " is not a plausible date");
  if (row.status == StatusCode::ok) {
    const SampleStats& s = row.stats;
    if (s.count == 0) return Status(StatusCode::data_loss, "an ok row with no samples");
    for (double v : {s.min, s.p20, s.median, s.p80, s.max, s.mean}) {
      if (!std::isfinite(v) || v < kMinPlausibleTimeNs)
        return Status(StatusCode::data_loss, "statistic " + std::to_string(v) +
                                                 " ns is not a plausible time (finite, at "
                                                 "least 1 ns)");
    }
    double tol = 1e-9 * s.max;
    if (s.min > s.p20 + tol || s.p20 > s.median + tol || s.median > s.p80 + tol ||
        s.p80 > s.max + tol || s.mean < s.min - tol || s.mean > s.max + tol)
      return Status(StatusCode::data_loss,
                    "quantiles out of order (min <= p20 <= median <= p80 <= max, mean within: " +
                        s.to_string() + ")");
  }
  if (canonical != nullptr) *canonical = c->to_string();
  return {};
}

// ----------------------------------------------------------------------------------------
// Process-wide store

std::shared_ptr<SqliteStore> open_store_from_env() {
  CacheMode mode = cache_mode_from_env();
  if (mode == CacheMode::off) return nullptr;
  std::string path = default_cache_path();
  if (path.empty()) {
    log_warning(
        "TUNE_CACHE_DIR, XDG_CACHE_HOME and HOME are all unset: tuning results are kept in "
        "memory");
    path = std::string(kMemoryPath);
  }
  SqliteStore::Options opts;
  opts.mode = mode;
  return SqliteStore::open(std::move(path), opts);
}

std::shared_ptr<TuningStore> default_store() {
  // Thread-safe lazy initialisation; opened on first use, shared by every Autotuner.
  static const std::shared_ptr<TuningStore> store = open_store_from_env();
  return store;
}

}  // namespace tune
