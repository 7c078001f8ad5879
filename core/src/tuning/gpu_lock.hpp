// GpuLock: the per-GPU timing lock across processes (AutotunerOptions::gpu_lock). A tuning
// holds it while it times candidates, so that two processes (or two Autotuners of one process)
// never time on the same GPU at once and pollute each other's measurements.
//
// The lock is an exclusive flock(2) on <dir>/gpu-<id>.lock, where <dir> is gpu_lock_dir() (a
// private directory of this user, never the cache directory) and <id> is DeviceInfo::uuid, else (a
// driver that does not say) the fingerprint's hash and the reopen spec. flock locks belong to an
// open file description: the kernel drops one when its process exits or dies, so a crashed tuner
// never leaves a GPU locked, and two descriptors opened in one process exclude each other too. A
// thread that already holds a GPU's lock (a hook that tunes another kernel on the same GPU) takes
// it again without waiting. The lock file is created once (O_NOFOLLOW: never through a link) and
// never deleted (deleting a flock'ed file would let two holders in).
//
// Blocking: acquire() waits for the holder, logging every kLogEvery, at most kMaxWait (or until
// the tuning budget's deadline, which then ends the tuning); after that it proceeds unlocked
// with a warning (a hung holder must not hang every other process).
// A lock that cannot be made (a directory that cannot be created, belongs to another user, is
// writable by others or is a link; a link at the file's path) is one warning and no lock: the
// tuning goes on. Thread-safe; a GpuLock object is owned by one
// thread and released by its destructor.
#pragma once

#include <chrono>
#include <string>

#include "tune/device_info.hpp"

namespace tune::detail {

class GpuLock {
 public:
  static constexpr std::chrono::seconds kLogEvery{10};
  static constexpr std::chrono::seconds kMaxWait{600};

  GpuLock() = default;
  // Takes the lock of `info`'s GPU in `dir` (created when missing); `who` names the tuning
  // in the log ("kernel matmul key {...}"). An empty `dir`: no lock. Waiting ends at
  // `deadline` too (the tuning budget's: waiting counts against it), without the lock.
  static GpuLock acquire(const DeviceInfo& info, const std::string& dir, const std::string& who,
                         std::chrono::steady_clock::time_point deadline =
                             std::chrono::steady_clock::time_point::max());
  ~GpuLock() { release(); }
  GpuLock(GpuLock&& o) noexcept : fd_(o.fd_), path_(std::move(o.path_)) { o.fd_ = -1; }
  GpuLock& operator=(GpuLock&& o) noexcept;
  GpuLock(const GpuLock&) = delete;
  GpuLock& operator=(const GpuLock&) = delete;

  // Whether this object holds the lock (false when reentered, skipped or given up on).
  bool held() const noexcept { return fd_ >= 0; }
  void release() noexcept;

 private:
  int fd_ = -1;
  std::string path_;
};

// TUNE_LOCK_DIR when set (a directory of the user's choosing: several users share a GPU's
// lock through one); else $XDG_RUNTIME_DIR/libtune/locks when XDG_RUNTIME_DIR names a
// directory, else $TMPDIR/libtune-<euid>/locks (TMPDIR: /tmp when unset), made 0700 on first
// use and refused when another user owns it or could write it.
std::string gpu_lock_dir();
// The lock file of `info`'s GPU in `dir`.
std::string gpu_lock_path(const DeviceInfo& info, const std::string& dir);

}  // namespace tune::detail
