// Thin RAII helpers over the SQLite C API, private to the cache.
//
// Nothing here owns a connection: the caller does, and serialises every use of it and of its
// statements (SQLite connections are opened with SQLITE_OPEN_NOMUTEX).
#pragma once

#include <sqlite3.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace tune::cache {

// A prepared statement; finalized on destruction. Binding indices start at 1.
class Stmt {
 public:
  Stmt() = default;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  Stmt(Stmt&& o) noexcept : s_(o.s_) { o.s_ = nullptr; }
  Stmt& operator=(Stmt&& o) noexcept {
    if (this != &o) {
      reset_handle();
      s_ = o.s_;
      o.s_ = nullptr;
    }
    return *this;
  }
  ~Stmt() { reset_handle(); }

  // Returns the SQLite result code; on success this statement holds the compiled SQL.
  int prepare(sqlite3* db, std::string_view sql) {
    reset_handle();
    return sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &s_, nullptr);
  }
  explicit operator bool() const noexcept { return s_ != nullptr; }
  sqlite3_stmt* get() const noexcept { return s_; }

  // Clears bindings and rewinds, ready for the next use.
  void rewind() noexcept {
    if (s_ == nullptr) return;
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }
  void bind(int i, std::string_view text) noexcept {
    sqlite3_bind_text(s_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
  void bind(int i, std::int64_t v) noexcept { sqlite3_bind_int64(s_, i, v); }
  // NaN is stored as NULL (SQLite would do so anyway); infinities are stored as such.
  void bind(int i, double v) noexcept {
    if (std::isnan(v))
      sqlite3_bind_null(s_, i);
    else
      sqlite3_bind_double(s_, i, v);
  }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int step() noexcept { return sqlite3_step(s_); }

  std::string text(int col) const {
    const unsigned char* p = sqlite3_column_text(s_, col);
    if (p == nullptr) return {};
    return std::string(reinterpret_cast<const char*>(p),
                       static_cast<std::size_t>(sqlite3_column_bytes(s_, col)));
  }
  std::int64_t int64(int col) const noexcept { return sqlite3_column_int64(s_, col); }
  // NULL reads as NaN.
  double real(int col) const noexcept {
    if (sqlite3_column_type(s_, col) == SQLITE_NULL)
      return std::numeric_limits<double>::quiet_NaN();
    return sqlite3_column_double(s_, col);
  }
  int type(int col) const noexcept { return sqlite3_column_type(s_, col); }

 private:
  void reset_handle() noexcept {
    if (s_ != nullptr) sqlite3_finalize(s_);
    s_ = nullptr;
  }
  sqlite3_stmt* s_ = nullptr;
};

// A connection closed when the scope ends (sqlite3_close_v2: its statements may outlive it).
struct Connection {
  sqlite3* db = nullptr;
  Connection() = default;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection() {
    if (db != nullptr) sqlite3_close_v2(db);
  }
};

// Rewinds a statement when the scope ends, so an early return never leaves it mid-step
// (which would keep a read transaction open).
class StmtScope {
 public:
  explicit StmtScope(Stmt& s) : s_(s) { s_.rewind(); }
  ~StmtScope() { s_.rewind(); }
  StmtScope(const StmtScope&) = delete;
  StmtScope& operator=(const StmtScope&) = delete;

 private:
  Stmt& s_;
};

// Whether a result code (primary or extended) means the file's contents cannot be trusted.
inline bool is_damage(int rc) noexcept {
  int primary = rc & 0xff;
  return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB;
}

// SQLite's message for the last error on `db`, else the text of `rc`.
inline std::string errmsg(sqlite3* db, int rc) {
  std::string msg = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  if (msg.empty()) msg = sqlite3_errstr(rc);
  return msg;
}

// Runs SQL without results ("BEGIN IMMEDIATE", "PRAGMA ..."); the SQLite result code.
inline int exec(sqlite3* db, std::string_view sql) {
  std::string s(sql);
  return sqlite3_exec(db, s.c_str(), nullptr, nullptr, nullptr);
}

// Runs a one-row integer query ("PRAGMA user_version") into `out` (untouched when it returns
// no row). The SQLite result code.
inline int query_int(sqlite3* db, std::string_view sql, std::int64_t* out) {
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

// "file:<path>" with the characters that are special in an SQLite URI path percent-encoded,
// for sqlite3_open_v2 with SQLITE_OPEN_URI (the caller appends "?mode=ro" and such).
inline std::string uri_path(std::string_view path) {
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

// uint64 hashes are stored as the int64 with the same bits.
inline std::int64_t to_db(std::uint64_t v) noexcept { return static_cast<std::int64_t>(v); }
inline std::uint64_t from_db(std::int64_t v) noexcept { return static_cast<std::uint64_t>(v); }

}  // namespace tune::cache
