// Helpers shared by the cache suites: temporary directories, captured warnings, rows, raw
// SQLite access to inspect what the store wrote, and running a scenario as an unprivileged
// user (tests run as root in CI containers, where file permissions do not stop writes).
#pragma once

#include <grp.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tune/log.hpp"
#include "tune/store.hpp"

namespace tune::cache_test {

namespace fs = std::filesystem;

// A fresh directory under $TMPDIR (or /tmp), removed with its contents on destruction.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base != nullptr && *base ? base : "/tmp") + "/tune-cache-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    // Restore permissions a test may have removed, then delete everything.
    for (auto it = fs::recursive_directory_iterator(path_, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
    }
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Captures every log message while alive.
class LogCapture {
 public:
  LogCapture() {
    previous_ = set_log_sink([this](LogLevel level, std::string_view msg) {
      if (level >= LogLevel::warning) warnings_.emplace_back(msg);
    });
  }
  ~LogCapture() { set_log_sink(std::move(previous_)); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  // The sink runs under libtune's log lock; reading after the calls under test is safe.
  const std::vector<std::string>& warnings() const { return warnings_; }
  bool any_contains(const std::string& needle) const {
    for (const auto& w : warnings_)
      if (w.find(needle) != std::string::npos) return true;
    return false;
  }
  std::string all() const {
    std::string s;
    for (const auto& w : warnings_) s += w + "\n";
    return s;
  }

 private:
  LogSink previous_;
  std::vector<std::string> warnings_;
};

inline StoreKey test_key(std::string key = "n=1024|f32") {
  return StoreKey{"vector_add", 0xfeedfacecafebeefULL, std::move(key), "simulated|sim|s1|1.0",
                  "simc 1|libtune 0.1.0"};
}

// test_key() on another device.
inline StoreKey key_on(const std::string& device, const std::string& key = "n=1024|f32") {
  StoreKey k = test_key(key);
  k.device = device;
  return k;
}

inline StoredResult ok_row(std::string config, double median, std::uint32_t count = 20,
                           std::int64_t when = 1700000000) {
  StoredResult r;
  r.config = std::move(config);
  r.status = StatusCode::ok;
  r.stats.count = count;
  r.stats.min = median * 0.9;
  r.stats.p20 = median * 0.95;
  r.stats.median = median;
  r.stats.p80 = median * 1.05;
  r.stats.max = median * 1.2;
  r.stats.mean = median;
  r.unix_time = when;
  return r;
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Files in `dir` whose name starts with `prefix`.
inline std::vector<std::string> files_starting(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0) out.push_back(e.path().string());
  }
  return out;
}

// Raw SQLite access for setting up and checking files behind the store's back.
class RawDb {
 public:
  explicit RawDb(const std::string& path, bool readonly = false) {
    int flags = readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK)
      throw std::runtime_error("cannot open " + path);
    sqlite3_busy_timeout(db_, 30000);
  }
  ~RawDb() { sqlite3_close_v2(db_); }
  RawDb(const RawDb&) = delete;
  RawDb& operator=(const RawDb&) = delete;

  void exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err != nullptr ? err : "?";
      sqlite3_free(err);
      throw std::runtime_error(sql + ": " + msg);
    }
  }
  // The first column of the first row, as text ("" when no row).
  std::string scalar(const std::string& sql) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) != SQLITE_OK)
      throw std::runtime_error(sql + ": " + sqlite3_errmsg(db_));
    std::string out;
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW && sqlite3_column_text(s, 0) != nullptr)
      out = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) throw std::runtime_error(sql + ": step failed");
    return out;
  }

 private:
  sqlite3* db_ = nullptr;
};

// The parent's side of a forked child that reports through the pipe `fds`: closes the write
// end, reads the report to its end, waits for the child (its wait status in `*status`).
inline std::string child_report(const int fds[2], pid_t pid, int* status) {
  ::close(fds[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  ::waitpid(pid, status, 0);
  return out;
}

// Runs `fn` in a child process as the unprivileged user "nobody" (uid/gid 65534) when this
// process is root, or as this user otherwise. Returns what `fn` returned (its stdout-style
// report, passed back through a pipe), or nullopt when privileges cannot be dropped (no
// CAP_SETUID, e.g. in a user namespace).
inline std::optional<std::string> run_unprivileged(const std::function<std::string()>& fn) {
  int fds[2];
  if (::pipe(fds) != 0) return std::nullopt;
  pid_t pid = ::fork();
  if (pid < 0) return std::nullopt;
  if (pid == 0) {
    ::close(fds[0]);
    if (::geteuid() == 0) {
      if (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
          ::setresuid(65534, 65534, 65534) != 0) {
        std::_Exit(42);
      }
    }
    std::string report = fn();
    std::size_t off = 0;
    while (off < report.size()) {
      ssize_t n = ::write(fds[1], report.data() + off, report.size() - off);
      if (n <= 0) std::_Exit(43);
      off += static_cast<std::size_t>(n);
    }
    std::_Exit(0);
  }
  int status = 0;
  std::string out = child_report(fds, pid, &status);
  if (!WIFEXITED(status)) throw std::runtime_error("unprivileged child crashed");
  if (WEXITSTATUS(status) == 42) return std::nullopt;
  if (WEXITSTATUS(status) != 0) throw std::runtime_error("unprivileged child failed");
  return out;
}

}  // namespace tune::cache_test

namespace tune {
// What every cache suite names unqualified.
using cache_test::LogCapture;
using cache_test::ok_row;
using cache_test::RawDb;
using cache_test::TempDir;
using cache_test::test_key;
}  // namespace tune
