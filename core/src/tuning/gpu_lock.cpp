#include "gpu_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <thread>

#include "cache/safe_file.hpp"
#include "tune/log.hpp"
#include "tune/sqlite_store.hpp"

namespace tune::detail {
namespace {

// How often a waiting acquire() tries the lock again.
constexpr auto kPoll = std::chrono::milliseconds(5);

// Lock files this thread holds: taking one again would wait for itself.
thread_local std::set<std::string> t_held;

std::string file_safe(const std::string& s) {
  std::string out;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    out += ok ? c : '_';
  }
  return out;
}

// Opens (creating) the lock file without following a link; -1 with `problem`.
int open_lock_file(const std::string& dir, const std::string& path, std::string* problem) {
  if (std::string bad = cache::unsafe_dir_reason(dir); !bad.empty()) {
    *problem = dir + " is " + bad;
    return -1;
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    *problem = "cannot create " + dir + ": " + ec.message();
    return -1;
  }
  if (std::string bad = cache::unsafe_file_reason(path); !bad.empty()) {
    *problem = path + " is " + bad;
    return -1;
  }
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644);
  if (fd < 0) *problem = "cannot open " + path + ": " + std::strerror(errno);
  return fd;
}

}  // namespace

std::string gpu_lock_dir() {
  const std::string db = default_cache_path();
  if (db.empty()) return {};
  return std::filesystem::path(db).parent_path().string() + "/locks";
}

std::string gpu_lock_path(const DeviceInfo& info, const std::string& dir) {
  std::string id = info.uuid;
  if (id.empty()) {
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016llx",
                  static_cast<unsigned long long>(info.fingerprint_hash()));
    id = info.backend + "-" + hash + (info.reopen_spec.empty() ? "" : "-" + info.reopen_spec);
  }
  return dir + "/gpu-" + file_safe(id) + ".lock";
}

GpuLock GpuLock::acquire(const DeviceInfo& info, const std::string& dir, const std::string& who,
                         std::chrono::steady_clock::time_point deadline) {
  GpuLock lock;
  if (dir.empty()) return lock;
  const std::string path = gpu_lock_path(info, dir);
  if (t_held.count(path)) return lock;  // this thread holds it already
  std::string problem;
  const int fd = open_lock_file(dir, path, &problem);
  if (fd < 0) {
    log_warning("per-GPU timing lock for " + info.name + " not taken (" + problem + "); " + who +
                " times without it");
    return lock;
  }
  const auto start = std::chrono::steady_clock::now();
  auto next_log = start + kLogEvery;
  for (;;) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) break;
    if (errno != EWOULDBLOCK && errno != EINTR) {
      log_warning("per-GPU timing lock " + path + ": flock failed (" + std::strerror(errno) +
                  "); " + who + " times without it");
      ::close(fd);
      return lock;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {  // the tuning budget is spent: the tuning ends without timing
      ::close(fd);
      return lock;
    }
    if (now - start >= kMaxWait) {
      log_warning("per-GPU timing lock " + path + " still held by another tuning after " +
                  std::to_string(kMaxWait.count()) + " s; " + who +
                  " times without it (its timings may be disturbed)");
      ::close(fd);
      return lock;
    }
    if (now >= next_log) {
      log_warning(who + " waits for " + info.name + ": another process is timing on it (" + path +
                  ")");
      next_log = now + kLogEvery;
    }
    std::this_thread::sleep_for(kPoll);
  }
  lock.fd_ = fd;
  lock.path_ = path;
  t_held.insert(path);
  return lock;
}

GpuLock& GpuLock::operator=(GpuLock&& o) noexcept {
  if (this != &o) {
    release();
    fd_ = o.fd_;
    path_ = std::move(o.path_);
    o.fd_ = -1;
  }
  return *this;
}

void GpuLock::release() noexcept {
  if (fd_ < 0) return;
  t_held.erase(path_);
  ::close(fd_);  // drops the flock
  fd_ = -1;
}

}  // namespace tune::detail
