// SqliteStore: opening, damage handling, load and save. See tune/sqlite_store.hpp.
#include "tune/sqlite_store.hpp"

#include <sqlite3.h>
#include <sys/stat.h>
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

#include "sqlite_db.hpp"
#include "tune/cache_validation.hpp"
#include "tune/log.hpp"

namespace tune {

using cache::Stmt;
using cache::StmtScope;

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kMemoryPath = ":memory:";

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
  PRIMARY KEY (kernel, source_hash, key, device, toolchain, config)
) WITHOUT ROWID;
)sql";

constexpr std::string_view kResultColumns =
    "config, status, reason, count, min, p20, median, p80, max, mean, unix_time";

constexpr std::string_view kLoadSql =
    "SELECT config, status, reason, count, min, p20, median, p80, max, mean, unix_time "
    "FROM results WHERE kernel = ?1 AND source_hash = ?2 AND key = ?3 AND device = ?4 "
    "AND toolchain = ?5 ORDER BY config";

constexpr std::string_view kUpsertSql =
    "INSERT OR REPLACE INTO results (kernel, source_hash, key, device, toolchain, config, "
    "status, reason, count, min, p20, median, p80, max, mean, unix_time) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)";

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

// Reads a StoredResult from the columns listed in kResultColumns starting at `first`.
// Returns false (with `why`) when the status name is unknown.
bool read_result(const Stmt& s, int first, StoredResult* r, std::string* why) {
  r->config = s.text(first);
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
  for (int i = 0; i < 6; ++i) {
    double v = s.real(first + 4 + i);
    // A failed configuration is timed as +inf; NULL is how a non-finite value may come back.
    if (std::isnan(v) && r->status != StatusCode::ok) v = std::numeric_limits<double>::infinity();
    *fields[i] = v;
  }
  r->unix_time = s.int64(first + 10);
  return true;
}

void bind_result(Stmt& s, int first, const StoredResult& r) {
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
  s.bind(first + 10, r.unix_time != 0 ? r.unix_time : now_unix());
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
  damaged,   // not a database, corrupt, truncated, foreign, old schema, read-only: move aside
  newer,     // a newer libtune's schema: leave it alone, work in memory
  unusable,  // cannot be opened or read for another reason (I/O, locks, permissions)
};

struct Finding {
  Verdict verdict = Verdict::ok;
  std::string what;  // for the warning
};

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
  const char* v = std::getenv("TUNE_CACHE");
  if (v == nullptr || *v == '\0') return CacheMode::readwrite;
  CacheMode m;
  if (parse_cache_mode(v, &m)) return m;
  log_warning(std::string("TUNE_CACHE='") + v +
              "' is not one of off, readonly, readwrite; using readwrite");
  return CacheMode::readwrite;
}

std::string default_cache_path() {
  auto nonempty = [](const char* name) -> const char* {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' ? v : nullptr;
  };
  if (const char* d = nonempty("TUNE_CACHE_DIR")) return (fs::path(d) / "tune.db").string();
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
  std::string moved_to;
  bool warned_write = false;  // one warning per store for failing writes
  bool warned_read = false;
  Stmt load_stmt;
  Stmt upsert_stmt;

  ~Impl() { close(); }

  std::string where() const { return "tuning cache " + path; }

  void close() {
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

  // Looks at an open database: integrity, owner, schema version. The reads run in one read
  // transaction so they see one snapshot: read one by one, a schema that another process
  // commits between them looks like a foreign file (application id 0, but tables).
  Finding inspect(bool check_writable) {
    if (check_writable && sqlite3_db_readonly(db, "main") == 1)
      return {Verdict::damaged, "the file is read-only"};
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
    if (app_id == 0 && version == 0 && tables == 0) return {Verdict::fresh, {}};
    if (app_id != kCacheApplicationId) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "not a libtune cache (application_id 0x%llx, %lld tables)",
                    static_cast<unsigned long long>(static_cast<std::uint32_t>(app_id)),
                    static_cast<long long>(tables));
      return {Verdict::damaged, buf};
    }
    if (version > kCacheSchemaVersion)
      return {Verdict::newer, "written by a newer libtune (schema version " +
                                  std::to_string(version) + ", this one reads " +
                                  std::to_string(kCacheSchemaVersion) + ")"};
    if (version < kCacheSchemaVersion)
      return {Verdict::damaged, "an old schema (version " + std::to_string(version) +
                                    ", this libtune reads " + std::to_string(kCacheSchemaVersion) +
                                    ")"};
    // Integrity of every page: catches truncation and corruption before a query trips on it.
    Stmt qc;
    if (int rc = qc.prepare(db, "PRAGMA quick_check(1)"); rc != SQLITE_OK)
      return failed(rc, "checking integrity");
    int rc = qc.step();
    if (rc != SQLITE_ROW) return failed(rc, "checking integrity");
    if (std::string r = qc.text(0); r != "ok") return {Verdict::damaged, "corrupt: " + r};
    return {Verdict::ok, {}};
  }

  int create_schema() {
    int rc = exec("BEGIN IMMEDIATE");
    if (rc != SQLITE_OK) return rc;
    // Another process may have created it between our look and our lock.
    std::int64_t app_id = 0;
    rc = query_int("PRAGMA application_id", &app_id);
    if (rc == SQLITE_OK && app_id != kCacheApplicationId) {
      rc = exec(kSchemaSql);
      if (rc == SQLITE_OK)
        rc = exec("PRAGMA application_id = " + std::to_string(kCacheApplicationId));
      if (rc == SQLITE_OK)
        rc = exec("PRAGMA user_version = " + std::to_string(kCacheSchemaVersion));
    }
    if (rc == SQLITE_OK) rc = exec("COMMIT");
    if (rc != SQLITE_OK) exec("ROLLBACK");
    return rc;
  }

  int prepare_statements() {
    int rc = load_stmt.prepare(db, kLoadSql);
    if (rc == SQLITE_OK && writable) rc = upsert_stmt.prepare(db, kUpsertSql);
    return rc;
  }

  // Renames the file (and its -wal / -shm companions) to <path>.corrupt-<unix time>.
  bool move_aside(std::string* error) {
    std::string base = path + ".corrupt-" + std::to_string(now_unix());
    std::string target = base;
    std::error_code ec;
    for (int i = 1; fs::exists(target, ec) && i < 1000; ++i)
      target = base + "-" + std::to_string(i);
    if (std::rename(path.c_str(), target.c_str()) != 0) {
      *error = std::strerror(errno);
      return false;
    }
    for (const char* suffix : {"-wal", "-shm", "-journal"}) {
      std::string from = path + suffix;
      if (fs::exists(from, ec)) std::rename(from.c_str(), (target + suffix).c_str());
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

  // Opens the file for reading and writing; on damage moves it aside once and starts afresh.
  void open_readwrite() {
    if (path == kMemoryPath) return open_memory();
    std::error_code ec;
    fs::path parent = fs::path(path).parent_path();
    if (!parent.empty()) fs::create_directories(parent, ec);
    if (ec) {
      log_warning(where() + ": cannot create directory " + parent.string() + ": " + ec.message() +
                  "; tuning results are kept in memory");
      return open_memory();
    }
    for (int attempt = 0; attempt < 2; ++attempt) {
      struct stat before {};
      bool existed = ::stat(path.c_str(), &before) == 0;
      int rc = sqlite3_open_v2(path.c_str(), &db,
                               SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                               nullptr);
      Finding f;
      if (rc != SQLITE_OK) {
        f = failed(rc, "opening");
      } else {
        sqlite3_extended_result_codes(db, 1);
        sqlite3_busy_timeout(db, opts.busy_timeout_ms);
        f = inspect(/*check_writable=*/true);
      }
      if (f.verdict == Verdict::fresh) {
        rc = create_schema();
        f = rc == SQLITE_OK ? Finding{} : failed(rc, "creating the schema");
      }
      if (f.verdict == Verdict::ok) {
        writable = true;
        rc = prepare_statements();  // before anything changes the file (WAL switch)
        if (rc == SQLITE_OK) {
          configure_wal();
          return;
        }
        f = failed(rc, "preparing statements");
        if (f.verdict == Verdict::unusable && (rc & 0xff) == SQLITE_ERROR) {
          // Our application id and version but not our tables: damaged.
          f.verdict = Verdict::damaged;
        }
      }
      close();
      writable = false;
      if (f.verdict == Verdict::newer) {
        log_warning(where() + ": " + f.what +
                    "; left untouched, tuning results are kept in memory");
        return open_memory();
      }
      if (f.verdict == Verdict::unusable || !existed) {
        log_warning(where() + ": cannot be used (" + f.what +
                    "); tuning results are kept in memory");
        return open_memory();
      }
      // Damaged. Someone may have replaced the file since we opened it (another process
      // moving it aside): then look again instead of moving the replacement.
      struct stat now {};
      if (::stat(path.c_str(), &now) == 0 &&
          (now.st_ino != before.st_ino || now.st_dev != before.st_dev)) {
        continue;
      }
      std::string error;
      if (!move_aside(&error)) {
        log_warning(where() + ": " + f.what + "; cannot move it aside (" + error +
                    "); tuning results are kept in memory");
        return open_memory();
      }
      log_warning(where() + ": " + f.what + "; moved aside to " + moved_to +
                  "; starting a fresh cache");
    }
    log_warning(where() +
                ": still unusable after moving the damaged file aside; tuning "
                "results are kept in memory");
    open_memory();
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

  // Opens for reading only; never creates, writes or moves anything.
  void open_readonly() {
    writable = false;
    if (path == kMemoryPath) return;
    std::error_code ec;
    if (!fs::exists(path, ec)) return;  // no cache yet: empty
    for (bool immutable : {false, true}) {
      // A WAL database in a read-only directory cannot get its -shm file: read it as
      // immutable (no locks, no shared memory) then.
      std::string uri = uri_path(path) + (immutable ? "?mode=ro&immutable=1" : "?mode=ro");
      int rc = sqlite3_open_v2(
          uri.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr);
      Finding f;
      if (rc != SQLITE_OK) {
        f = failed(rc, "opening");
      } else {
        sqlite3_extended_result_codes(db, 1);
        sqlite3_busy_timeout(db, opts.busy_timeout_ms);
        f = inspect(/*check_writable=*/false);
      }
      if (f.verdict == Verdict::ok && prepare_statements() == SQLITE_OK) return;
      if (f.verdict == Verdict::fresh) {
        close();
        return;  // an empty file: nothing stored
      }
      close();
      if (f.verdict == Verdict::unusable && !immutable) continue;
      log_warning(where() + ": " + f.what + " (TUNE_CACHE=readonly: file left as is, the " +
                  "cache is treated as empty)");
      return;
    }
  }

  void open() {
    if (opts.mode == CacheMode::readwrite)
      open_readwrite();
    else
      open_readonly();
  }

  // An error met after opening. Damage: move the file aside and continue on a fresh one.
  void on_error(int rc, const char* doing) {
    if (cache::is_damage(rc) && !memory) {
      std::string what = std::string("corrupt (") + errmsg(db, rc) + ") while " + doing;
      close();
      if (opts.mode != CacheMode::readwrite) {
        log_warning(where() + ": " + what + "; the cache is treated as empty");
        return;
      }
      std::string error;
      if (!move_aside(&error)) {
        log_warning(where() + ": " + what + "; cannot move it aside (" + error +
                    "); tuning results are kept in memory");
        return open_memory();
      }
      log_warning(where() + ": " + what + "; moved aside to " + moved_to);
      open_readwrite();
      return;
    }
    bool& warned = std::string_view(doing).starts_with("saving") ? warned_write : warned_read;
    if (!warned) {
      warned = true;
      log_warning(where() + ": " + doing + " failed: " + errmsg(db, rc) +
                  " (further failures of this kind are not reported)");
    }
  }

  // Reads the rows of `key`; checks each.
  std::vector<StoredResult> load(const StoreKey& key) {
    std::vector<StoredResult> out;
    if (db == nullptr) return out;
    std::vector<std::string> dropped;
    int rc;
    {
      StmtScope scope(load_stmt);
      bind_key(load_stmt, key);
      while ((rc = load_stmt.step()) == SQLITE_ROW) {
        StoredResult r;
        std::string why;
        if (read_result(load_stmt, 0, &r, &why)) {
          Status st = check_stored_row(r, &r.config);
          if (st.ok()) {
            out.push_back(std::move(r));
            continue;
          }
          why = st.message();
        }
        dropped.push_back("config '" + r.config + "': " + why);
      }
    }
    if (rc != SQLITE_DONE) {
      on_error(rc, "loading");
      return {};
    }
    warn_dropped(where() + " (kernel " + key.kernel + ")", dropped);
    return out;
  }

  void save(const StoreKey& key, std::span<const StoredResult> rows) {
    if (db == nullptr || !writable || rows.empty()) return;
    int rc = exec("BEGIN IMMEDIATE");
    if (rc == SQLITE_OK) {
      for (const StoredResult& r : rows) {
        StmtScope scope(upsert_stmt);
        bind_key(upsert_stmt, key);
        bind_result(upsert_stmt, 6, r);
        rc = upsert_stmt.step();
        if (rc != SQLITE_DONE) break;
        rc = SQLITE_OK;
      }
      if (rc == SQLITE_OK) rc = exec("COMMIT");
      if (rc != SQLITE_OK) exec("ROLLBACK");
    }
    if (rc != SQLITE_OK) on_error(rc, "saving");
  }

  // Every row matching `f`, checked (bad rows are dropped with a warning).
  Result<std::vector<CacheRow>> select(const CacheFilter& f) {
    std::vector<CacheRow> out;
    if (db == nullptr) return out;
    std::string sql =
        "SELECT kernel, source_hash, key, device, toolchain, " + std::string(kResultColumns) +
        " FROM results" + std::string(kFilterWhere) +
        " ORDER BY kernel, key, device, toolchain, source_hash, status != 'ok', median, config";
    Stmt s;
    int rc = s.prepare(db, sql);
    std::vector<std::string> dropped;
    if (rc == SQLITE_OK) {
      bind_filter(s, f);
      while ((rc = s.step()) == SQLITE_ROW) {
        CacheRow row;
        row.key.kernel = s.text(0);
        row.key.source_hash = cache::from_db(s.int64(1));
        row.key.key = s.text(2);
        row.key.device = s.text(3);
        row.key.toolchain = s.text(4);
        std::string why;
        if (read_result(s, 5, &row.result, &why)) {
          Status st = check_stored_row(row.result, &row.result.config);
          if (st.ok()) {
            out.push_back(std::move(row));
            continue;
          }
          why = st.message();
        }
        dropped.push_back(row.key.kernel + " config '" + row.result.config + "': " + why);
      }
    }
    if (rc != SQLITE_DONE) {
      Status st(cache::is_damage(rc) ? StatusCode::data_loss : StatusCode::io_error,
                where() + ": reading rows: " + errmsg(db, rc));
      on_error(rc, "reading rows");
      return st;
    }
    warn_dropped(where(), dropped);
    return out;
  }

  Status require_writable(std::string_view doing) const {
    if (db != nullptr && writable) return {};
    return Status(StatusCode::invalid_argument,
                  where() + ": cannot " + std::string(doing) + ": the cache is " +
                      (opts.mode == CacheMode::readwrite ? "unusable" : "read-only"));
  }

  Result<std::size_t> clear(const CacheFilter& f) {
    TUNE_RETURN_IF_ERROR(require_writable("clear"));
    Stmt s;
    int rc = s.prepare(db, "DELETE FROM results" + std::string(kFilterWhere));
    if (rc == SQLITE_OK) {
      bind_filter(s, f);
      rc = s.step();
    }
    if (rc != SQLITE_DONE) {
      Status st(StatusCode::io_error, where() + ": clearing: " + errmsg(db, rc));
      on_error(rc, "clearing");
      return st;
    }
    return static_cast<std::size_t>(sqlite3_changes64(db));
  }

  Result<ImportStats> import_rows(std::vector<CacheRow> rows, ImportStats stats,
                                  const ImportOptions& opts_in) {
    TUNE_RETURN_IF_ERROR(require_writable("import"));
    Stmt find;
    int rc = find.prepare(db, "SELECT " + std::string(kResultColumns) +
                                  " FROM results WHERE kernel = ?1 AND source_hash = ?2 AND key = "
                                  "?3 AND device = ?4 AND toolchain = ?5 AND config = ?6");
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
          if (read_result(find, 0, &old, &why) && check_stored_row(old).ok())
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
      bind_result(upsert_stmt, 6, row.result);
      rc = upsert_stmt.step();
      if (rc != SQLITE_DONE) break;
      rc = SQLITE_OK;
      ++(exists ? stats.replaced : stats.added);
    }
    if (rc == SQLITE_OK) rc = exec("COMMIT");
    if (rc != SQLITE_OK) {
      Status st(StatusCode::io_error, where() + ": importing: " + errmsg(db, rc));
      exec("ROLLBACK");
      on_error(rc, "importing");
      return st;
    }
    return stats;
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
  if (row.status == StatusCode::ok) {
    const SampleStats& s = row.stats;
    if (s.count == 0) return Status(StatusCode::data_loss, "an ok row with no samples");
    for (double v : {s.min, s.p20, s.median, s.p80, s.max, s.mean}) {
      if (!std::isfinite(v) || v < 0)
        return Status(StatusCode::data_loss,
                      "statistic " + std::to_string(v) + " is not a finite non-negative time");
    }
    double tol = 1e-9 * s.max;
    if (s.min > s.p20 + tol || s.p20 > s.median + tol || s.median > s.p80 + tol ||
        s.p80 > s.max + tol)
      return Status(StatusCode::data_loss, "quantiles out of order (" + s.to_string() + ")");
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
