// Watchdog: a hang is a failure with a message, not a stuck CI job. While one is alive, a
// helper thread waits; if the guarded scope outlives `seconds`, it prints what hung and ends
// the process with exit code 1 (doctest cannot report from another thread).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

namespace tune::testing {

class Watchdog {
 public:
  Watchdog(std::string what, double seconds) : what_(std::move(what)) {
    thread_ = std::thread([this, seconds] {
      std::unique_lock lock(mu_);
      if (cv_.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return done_; })) return;
      std::fprintf(stderr, "watchdog: '%s' still running after %.0f s: a hang\n", what_.c_str(),
                   seconds);
      std::fflush(stderr);
      std::_Exit(1);
    });
  }
  ~Watchdog() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  std::string what_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace tune::testing
