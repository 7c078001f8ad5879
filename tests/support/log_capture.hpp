// Records every log message (debug included) while alive, for tests that check what libtune
// said. Thread-safe: libtune calls the sink under its log lock, and readers take this mutex.
#pragma once

#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tune/log.hpp"

namespace tune::testing {

class LogCapture {
 public:
  LogCapture() {
    previous_ = set_log_sink([this](LogLevel level, std::string_view m) {
      std::lock_guard<std::mutex> lock(mu_);
      messages_.emplace_back(level, std::string(m));
    });
  }
  ~LogCapture() { set_log_sink(std::move(previous_)); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  // How many messages of `level` contain `text`.
  int count(LogLevel level, std::string_view text) {
    std::lock_guard<std::mutex> lock(mu_);
    int n = 0;
    for (const auto& [l, m] : messages_)
      if (l == level && m.find(text) != std::string::npos) ++n;
    return n;
  }
  // Every message, one a line.
  std::string all() {
    std::lock_guard<std::mutex> lock(mu_);
    std::string out;
    for (const auto& [l, m] : messages_) out += m + "\n";
    return out;
  }

 private:
  std::mutex mu_;
  std::vector<std::pair<LogLevel, std::string>> messages_;
  LogSink previous_;
};

}  // namespace tune::testing
