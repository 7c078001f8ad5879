// The database file behind a SqliteStore: opening, damage handling, reopening. See
// db_file.hpp.
#include "cache/db_file.hpp"

#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "cache/page_scan.hpp"
#include "cache/row_rules.hpp"
#include "cache/salvage.hpp"
#include "cache/store_schema.hpp"
#include "tune/log.hpp"

namespace tune::cache {
namespace {

namespace fs = std::filesystem;

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

// Renames `from` to a fresh "<to_base>[-N]" and returns the name used, or empty (errno set).
std::string rename_unique(const std::string& from, const std::string& to_base) {
  std::string target = to_base;
  for (int i = 1; inspect_path(target).kind != PathKind::absent && i < 1000; ++i)
    target = to_base + "-" + std::to_string(i);
  if (std::rename(from.c_str(), target.c_str()) != 0) return {};
  return target;
}

}  // namespace

DbFile::DbFile(std::string path, SqliteStore::Options opts)
    : path_(std::move(path)), opts_(std::move(opts)) {}

DbFile::~DbFile() { close(); }

std::string DbFile::dir() const {
  std::string d = fs::path(path_).parent_path().string();
  return d.empty() ? "." : d;
}

void DbFile::close() {
  opened_id_ = {};
  load_stmt_ = Stmt();
  upsert_stmt_ = Stmt();
  if (db_ != nullptr) sqlite3_close_v2(db_);
  db_ = nullptr;
}

std::string_view DbFile::result_columns() const { return result_columns_; }

// ---- Stage 1: what is at the path, looked at without opening anything.

// The database and its companions must be absent or regular files: a symbolic link is
// never followed, a FIFO, device or socket never opened (it would block). Returns what is
// wrong ("<file> is a FIFO"), empty when nothing is.
std::string DbFile::unsafe_files() const {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::string p = path_ + suffix;
    if (std::string why = unsafe_file_reason(p); !why.empty()) return p + " is " + why;
  }
  return {};
}

// Renames every unsafe one of them aside (a rename moves the link or FIFO itself and
// never opens or follows it). False when one cannot be moved.
bool DbFile::move_unsafe_aside(std::string* moved) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::string p = path_ + suffix;
    if (unsafe_file_reason(p).empty()) continue;
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
std::string DbFile::readonly_reason() const {
  struct stat st {};
  if (::lstat(path_.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return {};
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  if ((st.st_mode & 0222) == 0) return std::string("the file is read-only (mode ") + mode + ")";
  if (::access(path_.c_str(), W_OK) != 0)
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

int DbFile::prepare_statements() {
  // A writable file was upgraded (ensure_current_schema); a read-only one is read as it is.
  result_columns_ = writable_ ? kResultColumns : result_columns_of(db_);
  int rc = load_stmt_.prepare(db_, "SELECT " + std::string(result_columns()) + " FROM results" +
                                       std::string(kKeyWhere) + " ORDER BY config");
  if (rc == SQLITE_OK && writable_) rc = upsert_stmt_.prepare(db_, kUpsertSql);
  return rc;
}

// Renames the file (and its -wal / -shm / -journal companions) to <path>.corrupt-<time>.
bool DbFile::move_aside(std::string* error) {
  std::string target = rename_unique(path_, path_ + ".corrupt-" + std::to_string(now_unix()));
  if (target.empty()) {
    *error = std::strerror(errno);
    return false;
  }
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    std::string from = path_ + suffix;
    if (inspect_path(from).kind != PathKind::absent)
      std::rename(from.c_str(), (target + suffix).c_str());
  }
  moved_to_ = target;
  return true;
}

void DbFile::open_memory() {
  close();
  memory_ = true;
  writable_ = true;
  int rc = sqlite3_open_v2(":memory:", &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc == SQLITE_OK) rc = create_schema(db_);
  if (rc == SQLITE_OK) rc = prepare_statements();
  if (rc != SQLITE_OK) {
    // Only out-of-memory gets here; the store then behaves as empty.
    log_warning(where() + ": cannot create an in-memory database: " + errmsg(db_, rc));
    close();
    writable_ = false;
  }
}

bool DbFile::make_parent_dir() {
  std::error_code ec;
  fs::path parent = fs::path(path_).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (!ec) return true;
  log_warning(where() + ": cannot create directory " + parent.string() + ": " + ec.message() +
              "; tuning results are kept in memory");
  return false;
}

// Opens the file read/write and inspects it (creating the schema in an empty one).
Finding DbFile::open_rw_and_inspect() {
  int rc = sqlite3_open_v2(
      path_.c_str(), &db_,
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW,
      nullptr);
  if (rc != SQLITE_OK) return failed(db_, rc, "opening");
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, opts_.busy_timeout_ms);
  Finding f = inspect_database(db_, path_, /*check_writable=*/true);
  if (f.verdict == Verdict::fresh) {
    rc = create_schema(db_);
    f = rc == SQLITE_OK ? Finding{} : failed(db_, rc, "creating the schema");
  }
  if (f.verdict != Verdict::ok) return f;
  writable_ = true;
  rc = ensure_current_schema(db_);
  if (rc == SQLITE_OK) rc = prepare_statements();  // before anything changes the file (WAL)
  if (rc == SQLITE_OK) return f;
  f = failed(db_, rc, "preparing statements");
  // Our application id and version but not our tables: damaged.
  if (f.verdict == Verdict::unusable && (rc & 0xff) == SQLITE_ERROR) f.verdict = Verdict::damaged;
  return f;
}

// Opens the file for reading and writing. A link, special file or damaged database is
// moved aside (at most twice) and a fresh one started; a damaged one of our schema has its
// readable rows copied over. `aside` and `salvage_from` carry a move-aside made by the
// caller (damage found after opening), reported with the salvage count in one warning.
void DbFile::open_readwrite(std::string aside, std::string salvage_from) {
  if (path_ == kMemoryPath) return open_memory();
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
    const FileId before = file_id(path_);
    Finding f = open_rw_and_inspect();
    if (f.verdict == Verdict::ok) {
      // The file we opened must still be the one at the path (another process may have
      // moved it aside and started afresh in between): else look again.
      opened_id_ = file_id(path_);
      if (before.valid && !(before == opened_id_)) {
        close();
        continue;
      }
      configure_journal();
      finish_move_aside(aside, salvage_from);
      return;
    }
    close();
    writable_ = false;
    if (f.verdict == Verdict::readonly) return open_readonly_in_rw(f.what);
    if (!aside.empty()) log_warning(aside);
    aside.clear();
    if (f.verdict == Verdict::newer) {
      log_warning(where() + ": " + f.what + "; left untouched, tuning results are kept in memory");
      return open_memory();
    }
    if (f.verdict == Verdict::unusable || !before.valid) {
      log_warning(where() + ": cannot be used (" + f.what + "); tuning results are kept in memory");
      return open_memory();
    }
    // Damaged. Someone may have replaced the file since we opened it (another process
    // moving it aside): then look again instead of moving the replacement.
    if (!(file_id(path_) == before)) continue;
    std::string error;
    if (!move_aside(&error)) {
      log_warning(where() + ": " + f.what + "; cannot move it aside (" + error +
                  "); tuning results are kept in memory");
      return open_memory();
    }
    aside = where() + ": " + f.what + "; moved aside to " + moved_to_;
    // Our schema by the inspection, or by the file's header when damage stopped the
    // inspection before it could tell (a damaged schema entry): its rows are worth reading.
    salvage_from = f.salvage || has_cache_header(moved_to_) ? moved_to_ : std::string();
  }
  if (!aside.empty()) log_warning(aside);
  log_warning(where() +
              ": still unusable after moving the damaged file aside; tuning "
              "results are kept in memory");
  open_memory();
}

// Reports a move-aside made on the way to this fresh file, with what was salvaged.
void DbFile::finish_move_aside(const std::string& aside, const std::string& salvage_from) {
  if (aside.empty()) return;
  std::string msg = aside;
  if (!salvage_from.empty()) msg += "; " + salvage_rows(db_, salvage_from);
  log_warning(msg + "; starting a fresh cache");
}

// WAL on a local file system; the rollback journal (DELETE, with SQLite's file locking)
// on a network one, where WAL's shared memory does not work.
void DbFile::configure_journal() {
  std::string net =
      opts_.filesystem_probe ? opts_.filesystem_probe(dir()) : statfs_network_fs(dir());
  if (net.empty()) return configure_wal();
  Stmt s;
  std::string mode = "?";
  if (s.prepare(db_, "PRAGMA journal_mode=DELETE") == SQLITE_OK && s.step() == SQLITE_ROW)
    mode = s.text(0);
  log_warning(where() + ": on a network file system (" + net +
              "), where SQLite's WAL mode does not work; using journal_mode=" + mode +
              " with file locking");
}

void DbFile::configure_wal() {
  // journal_mode=WAL is persistent and needs a brief exclusive lock the first time; the
  // busy handler waits for it. Failing to switch is not fatal (e.g. a file system without
  // shared memory): the default rollback journal is still correct, only slower.
  Stmt s;
  if (s.prepare(db_, "PRAGMA journal_mode=WAL") == SQLITE_OK) {
    int rc = s.step();
    if (rc == SQLITE_ROW && s.text(0) != "wal")
      log(LogLevel::debug, where() + ": WAL mode unavailable, journal mode " + s.text(0));
  }
  exec(db_, "PRAGMA synchronous=NORMAL");
}

// ---- Read-only use.

// Opens the file read-only and inspects it; never creates, writes or moves anything.
Finding DbFile::open_ro_and_inspect() {
  Finding f;
  for (bool immutable : {false, true}) {
    // A WAL database in a read-only directory cannot get its -shm file: read it as
    // immutable (no locks, no shared memory) then.
    std::string uri = uri_path(path_) + (immutable ? "?mode=ro&immutable=1" : "?mode=ro");
    int rc = sqlite3_open_v2(
        uri.c_str(), &db_,
        SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW,
        nullptr);
    if (rc != SQLITE_OK) {
      f = failed(db_, rc, "opening");
    } else {
      sqlite3_extended_result_codes(db_, 1);
      sqlite3_busy_timeout(db_, opts_.busy_timeout_ms);
      f = inspect_database(db_, path_, /*check_writable=*/false);
    }
    if (f.verdict == Verdict::ok) {
      if (rc = prepare_statements(); rc == SQLITE_OK) {
        opened_id_ = file_id(path_);
        return f;
      }
      f = failed(db_, rc, "preparing statements");
    }
    if (f.verdict == Verdict::fresh) return f;
    close();
    if (f.verdict != Verdict::unusable || immutable) return f;
  }
  return f;
}

// TUNE_CACHE=readonly.
void DbFile::open_readonly() {
  writable_ = false;
  if (path_ == kMemoryPath) return;
  if (inspect_path(path_).kind == PathKind::absent) return;  // no cache yet
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

Finding DbFile::open_source() {
  writable_ = false;
  if (inspect_path(path_).kind == PathKind::absent)
    return {Verdict::unusable, "no such file", false};
  if (std::string bad = unsafe_files(); !bad.empty()) return {Verdict::unusable, bad, false};
  Finding f = open_ro_and_inspect();
  if (f.verdict != Verdict::ok) close();
  return f;
}

// Readwrite was asked but the file cannot be written (`why`): its rows are used, nothing
// is written, created or moved, with one warning. Unusable as well: rows in memory.
void DbFile::open_readonly_in_rw(const std::string& why) {
  close();
  writable_ = false;
  readonly_why_ = why;
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

void DbFile::open() {
  if (opts_.mode == CacheMode::readwrite)
    open_readwrite();
  else
    open_readonly();
}

// ---- After opening.

bool DbFile::ensure_live() {
  if (db_ == nullptr || memory_ || !opened_id_.valid) return db_ != nullptr;
  if (file_id(path_) == opened_id_) return true;
  if (reopen_depth_ > 0) return true;
  ++reopen_depth_;
  log_warning(where() + ": the file was deleted or replaced since this process opened it; " +
              "reopening the file now at that path");
  close();
  open();
  --reopen_depth_;
  return db_ != nullptr;
}

void DbFile::on_error(int rc, const char* doing, const std::string& msg) {
  if (is_damage(rc) && !memory_) {
    std::string what = "corrupt (" + msg + ") while " + doing;
    close();
    if (opts_.mode != CacheMode::readwrite || !readonly_why_.empty()) {
      log_warning(where() + ": " + what + "; the cache is treated as empty");
      return;
    }
    if (reopen_depth_ > 1) return open_memory();
    ++reopen_depth_;
    if (!(file_id(path_) == opened_id_)) {
      log_warning(where() + ": " + what + "; the file at that path is no longer the one " +
                  "this process opened (another process replaced it): nothing moved, " +
                  "reopening it");
      open_readwrite();
    } else if (std::string error; !move_aside(&error)) {
      log_warning(where() + ": " + what + "; cannot move it aside (" + error +
                  "); tuning results are kept in memory");
      open_memory();
    } else {
      open_readwrite(where() + ": " + what + "; moved aside to " + moved_to_, moved_to_);
    }
    --reopen_depth_;
    return;
  }
  bool& warned = std::string_view(doing).starts_with("saving") ? warned_write_ : warned_read_;
  if (!warned) {
    warned = true;
    log_warning(where() + ": " + doing + " failed: " + msg +
                " (further failures of this kind are not reported)");
  }
}

void DbFile::on_error(int rc, const char* doing) { on_error(rc, doing, errmsg(db_, rc)); }

bool DbFile::recheck_after_bad_row() {
  if (memory_ || deep_checked_) return false;
  deep_checked_ = true;
  Finding f = check_integrity(db_, /*full=*/true);
  if (f.verdict != Verdict::damaged) return false;
  on_error(SQLITE_CORRUPT, "checking integrity after a damaged row", f.what);
  return true;
}

Status DbFile::require_writable(std::string_view doing) const {
  if (db_ != nullptr && writable_) return {};
  return Status(
      StatusCode::invalid_argument,
      where() + ": cannot " + std::string(doing) + ": the cache is " +
          (opts_.mode == CacheMode::readwrite && readonly_why_.empty()
               ? "unusable"
               : "read-only" + (readonly_why_.empty() ? "" : " (" + readonly_why_ + ")")));
}

}  // namespace tune::cache
