// YieldingMutex: the WorkerDevice's request lock, where compiles yield to every other call.
//
// A worker answers one request at a time, and a compile holds it for as long as the compiler
// runs (NVRTC: a second or more). The tuning session queues every candidate's compile on the
// variant cache's threads at once; with a plain mutex its own launches and timings, and so its
// check of tuning_budget_ms, would wait behind all of them. Here a compile (lock_low) goes only
// when no other call holds the lock or waits for it and none released it within kQuiet, so a
// session's back-to-back calls keep the socket, and a timing waits at most for the one compile
// already in the worker. Compiles run when the session waits for them (nothing else to time),
// which is when it needs them.
//
// Thread safety: what a mutex gives. Blocking: lock() as a mutex; lock_low() also while other
// calls keep coming. Meets BasicLockable (std::lock_guard) through lock()/unlock().
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace tune::detail {

class YieldingMutex {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kQuiet{2};

  void lock() {
    std::unique_lock g(m_);
    ++waiting_;
    cv_.wait(g, [&] { return !held_; });
    --waiting_;
    held_ = true;
    low_ = false;
  }
  void lock_low() {
    std::unique_lock g(m_);
    for (;;) {
      if (held_ || waiting_ > 0) {
        cv_.wait(g);
        continue;
      }
      const Clock::time_point ready = last_release_ + kQuiet;
      if (Clock::now() >= ready) break;
      cv_.wait_until(g, ready);
    }
    held_ = true;
    low_ = true;
  }
  void unlock() {
    {
      std::lock_guard g(m_);
      held_ = false;
      if (!low_) last_release_ = Clock::now();
    }
    cv_.notify_all();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool held_ = false;
  bool low_ = false;  // the holder is a compile
  int waiting_ = 0;   // lock() callers waiting
  Clock::time_point last_release_{};
};

// std::lock_guard for lock_low().
class LowPriorityLock {
 public:
  explicit LowPriorityLock(YieldingMutex& m) : m_(m) { m_.lock_low(); }
  ~LowPriorityLock() { m_.unlock(); }
  LowPriorityLock(const LowPriorityLock&) = delete;
  LowPriorityLock& operator=(const LowPriorityLock&) = delete;

 private:
  YieldingMutex& m_;
};

}  // namespace tune::detail
