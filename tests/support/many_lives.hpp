// Teardown tests: many short lives of a tuner (each destroys it, and its device, while work it
// started still runs) on several threads at once, their outcomes tallied. A life may succeed or
// run out of its budget (nothing timed in time); anything else fails the test, with the last
// such status named. Crashes and hangs are the caller's watchdog's to catch.
#pragma once

#include <doctest/doctest.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tune/status.hpp"

namespace tune::testing {

// Runs `one_life()` (returning a tune::Status) `lives_each` times on each of `threads`
// threads and checks that every life ended ok or in a timeout. `name` labels the outcome.
template <class OneLife>
void check_many_lives(const std::string& name, int threads, int lives_each, OneLife one_life) {
  std::atomic<int> ok{0}, timed_out{0}, other{0};
  std::mutex other_mu;
  std::string other_text;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int i = 0; i < lives_each; ++i) {
        const Status st = one_life();
        if (st.ok()) {
          ++ok;
        } else if (st.code() == StatusCode::timeout) {  // nothing timed within the budget
          ++timed_out;
        } else {
          ++other;
          std::lock_guard lock(other_mu);
          other_text = st.to_string();
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  INFO(name << ": " << ok << " ok, " << timed_out << " timed out, " << other << " other ("
            << other_text << ")");
  CHECK(other == 0);
  CHECK(ok + timed_out == threads * lives_each);
}

}  // namespace tune::testing
