// DbFile: the database file behind a SqliteStore and the one SQLite connection to it.
//
// It does everything about the file itself: opening it (readwrite, readonly or in memory),
// recognising it (db_inspect.hpp), creating or upgrading its schema (store_schema.hpp),
// refusing links and special files, moving a damaged or unsafe file aside and salvaging its
// rows (salvage.hpp), choosing the journal mode (WAL, or DELETE with file locking on a network
// file system), noticing that another process replaced the file, and reacting to damage met
// after opening. The policy is the one promised in tune/sqlite_store.hpp's header comment:
// nothing here throws or fails; every problem is one warning and a usable (possibly
// read-only, empty or in-memory) state.
//
// Ownership: owns the connection and its two prepared statements (load, upsert); closes them
// on destruction or when the file is reopened. Pointers and statements handed out are valid
// until the next call that may reopen: open(), ensure_live(), on_error(),
// recheck_after_bad_row().
// Thread safety: none. The owner serialises every call (SqliteStore holds its mutex).
// Blocking: opening and reopening touch the file system, may read the whole file (integrity
// check, salvage) and may wait up to Options::busy_timeout_ms for another process's lock.
#pragma once

#include <sqlite3.h>

#include <string>
#include <string_view>

#include "cache/db_inspect.hpp"
#include "cache/safe_file.hpp"
#include "cache/sqlite_db.hpp"
#include "cache/store_schema.hpp"
#include "tune/sqlite_store.hpp"
#include "tune/status.hpp"

namespace tune::cache {

// The path that asks for a database in memory only.
inline constexpr std::string_view kMemoryPath = ":memory:";

class DbFile {
 public:
  // Nothing is opened until open(). `opts.mode` must not be off (open() of SqliteStore maps
  // it to readonly).
  DbFile(std::string path, SqliteStore::Options opts);
  ~DbFile();
  DbFile(const DbFile&) = delete;
  DbFile& operator=(const DbFile&) = delete;

  // Opens the file as the mode says. Never fails: afterwards db() is a usable connection
  // (possibly read-only or in memory) or null (readonly mode with no usable file, or not even
  // memory could be had): the store then behaves as empty.
  void open();

  // Opens the file read-only for a caller that must know what is wrong with it (the source of
  // `tune cache merge`): never creates, writes or moves anything and logs nothing. Returns
  // the finding: ok (db() is usable), fresh (an empty file), damaged, newer, or unusable (also
  // when the path is absent, a link or a special file; `what` says which).
  Finding open_source();

  // Whether the file this connection opened is still the one at the path. When another
  // process moved it aside (or someone deleted or replaced it), reopens the path, so reads
  // and writes go to the live file. Returns false when no database is usable afterwards.
  bool ensure_live();

  // An error `rc` met after opening while `doing` ("loading", "saving", ...). Damage: the file
  // is moved aside (only when it is still the file this connection opened) and a fresh one
  // started with the readable rows salvaged; in read-only use the store continues empty.
  // Anything else: one warning per kind (writes, reads), the connection kept.
  void on_error(int rc, const char* doing, const std::string& msg);
  void on_error(int rc, const char* doing);

  // After a read found a bad row: the full integrity check, once per store and only for a
  // file. True when it found damage; the file was then handled as on_error() says and the
  // read should be repeated on db() (which may now be null).
  bool recheck_after_bad_row();

  // Ok when rows can be written; else invalid_argument naming the operation (`doing`) and
  // why the cache is read-only or unusable.
  Status require_writable(std::string_view doing) const;

  sqlite3* db() const noexcept { return db_; }
  // Whether this connection may write (meaningful while db() is not null).
  bool writable() const noexcept { return writable_; }
  // Whether rows live in memory only (":memory:" was asked or the file was unusable).
  bool in_memory() const noexcept { return memory_; }
  const std::string& path() const noexcept { return path_; }
  CacheMode mode() const noexcept { return opts_.mode; }
  // Where this store moved a damaged or unsafe file, empty when it did not.
  const std::string& moved_to() const noexcept { return moved_to_; }
  // "tuning cache <path>": how every warning names the file.
  std::string where() const { return "tuning cache " + path_; }

  // The result columns to select (an older version's form for a file of that version opened
  // read-only: result_columns_of), and the statements prepared at open: the rows of one key
  // (bind_key), and one row's upsert (bind_key, bind_result at 6; writable files only).
  std::string_view result_columns() const;
  Stmt& load_stmt() noexcept { return load_stmt_; }
  Stmt& upsert_stmt() noexcept { return upsert_stmt_; }

 private:
  std::string dir() const;
  void close();
  std::string unsafe_files() const;
  bool move_unsafe_aside(std::string* moved);
  std::string readonly_reason() const;
  int prepare_statements();
  bool move_aside(std::string* error);
  void open_memory();
  bool make_parent_dir();
  Finding open_rw_and_inspect();
  void open_readwrite(std::string aside = {}, std::string salvage_from = {});
  void finish_move_aside(const std::string& aside, const std::string& salvage_from);
  void configure_journal();
  void configure_wal();
  Finding open_ro_and_inspect();
  void open_readonly();
  void open_readonly_in_rw(const std::string& why);

  std::string path_;
  SqliteStore::Options opts_;
  sqlite3* db_ = nullptr;
  bool memory_ = false;
  bool writable_ = false;
  // kResultColumns, or an older version's form for a file opened read-only (result_columns_of)
  std::string_view result_columns_ = kResultColumns;
  std::string readonly_why_;  // readwrite was asked but the file is read-only: why
  FileId opened_id_;          // the file this connection opened (to notice a replacement)
  std::string moved_to_;
  bool warned_write_ = false;  // one warning per store for failing writes
  bool warned_read_ = false;
  bool deep_checked_ = false;  // the full integrity check after a bad row: once per store
  int reopen_depth_ = 0;       // bounds reopen/move-aside recursion
  Stmt load_stmt_;
  Stmt upsert_stmt_;
};

}  // namespace tune::cache
