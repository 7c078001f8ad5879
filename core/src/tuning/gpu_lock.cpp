#include "gpu_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <thread>

#include "cache/safe_file.hpp"
#include "tune/environment.hpp"
#include "tune/log.hpp"

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

// A lock belongs to the machine's GPU, not to a cache: one directory per user whatever
// TUNE_CACHE_DIR and TUNE_CACHE say, so that TUNE_CACHE=off and readonly write nothing under
// the cache directory and processes with different caches still take turns on a GPU.
std::string default_lock_dir() {
  if (const char* run = std::getenv("XDG_RUNTIME_DIR"); run != nullptr && run[0] == '/') {
    std::error_code ec;
    if (std::filesystem::is_directory(run, ec)) return std::string(run) + "/libtune/locks";
  }
  const char* tmp = std::getenv("TMPDIR");
  const std::string base = tmp != nullptr && tmp[0] == '/' ? tmp : "/tmp";
  return base + "/libtune-" + std::to_string(::geteuid()) + "/locks";
}

// Creates `dir` (mode 0700) when missing; why it cannot serve as a private lock directory, or
// empty. In a shared temporary directory another user could have made it first: it must be a
// real directory (not a link) owned by this user and writable by no one else.
std::string private_dir_problem(const std::filesystem::path& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return "cannot create " + dir.string() + ": " + std::strerror(errno);
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0)
    return "cannot inspect " + dir.string() + ": " + std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return dir.string() + " is not a directory";
  if (st.st_uid != ::geteuid())
    return dir.string() + " belongs to another user (uid " + std::to_string(st.st_uid) + ")";
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) return dir.string() + " is writable by other users";
  return {};
}

// Opens (creating) the lock file without following a link; -1 with `problem`.
int open_lock_file(const std::string& dir, const std::string& path, std::string* problem) {
  if (std::string bad = cache::unsafe_dir_reason(dir); !bad.empty()) {
    *problem = dir + " is " + bad;
    return -1;
  }
  if (dir == default_lock_dir()) {  // made by libtune, in a directory others may write
    for (const auto& d : {std::filesystem::path(dir).parent_path(), std::filesystem::path(dir)}) {
      *problem = private_dir_problem(d);
      if (!problem->empty()) return -1;
    }
  } else {  // TUNE_LOCK_DIR: the user's choice, shared as they set it up
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      *problem = "cannot create " + dir + ": " + ec.message();
      return -1;
    }
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
  // TUNE_LOCK_DIR names a directory of the user's choosing (shared by several users, say).
  if (std::string chosen = env_text("TUNE_LOCK_DIR"); !chosen.empty()) return chosen;
  return default_lock_dir();
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
