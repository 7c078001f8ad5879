// The live line `tune demo` draws on stderr while it tunes: "| [1/4] tuning vector_add
// n=1048576  24 configs: 20 compiled, 18 timed, 5 raced out, 1 failed  best 12.3 us {..}  3.2 s".
//
// Only when stderr is a terminal; otherwise it prints one "<text> ..." line when made and
// nothing else (logs and CI output stay free of carriage returns). A thread redraws the line
// every 200 ms (so elapsed time moves while one compile or timing is slow); update() takes the
// counts from AutotunerOptions::progress. Thread-safe: update() may come from the tuning
// thread while the redraw thread draws. done() (and the destructor) draws the last counts once,
// then clears the line.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "tune/autotuner.hpp"

namespace tune::cli {

class ProgressLine {
 public:
  explicit ProgressLine(std::string text);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // The tuning's latest counts, shown from the next redraw on.
  void update(const TuningProgress& p);
  // Stops the redraws and clears the line. Idempotent.
  void done();
  double elapsed_s() const;

 private:
  void draw_loop();
  void draw(int frame);  // caller holds mu_

  std::string text_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::string counts_;  // guarded by mu_
  std::thread thread_;
};

// The counts part of the line: "24 configs: 20 compiled, 18 timed, 5 raced out, 1 failed,
// 0 stored  best 12.3 us {BLOCK=64}".
std::string progress_text(const TuningProgress& p);

}  // namespace tune::cli
