#include "tune/log.hpp"

#include <cstdio>
#include <mutex>
#include <string>

namespace tune {
namespace {

std::mutex& sink_mutex() {
  static std::mutex m;
  return m;
}
LogSink& sink() {
  static LogSink s;
  return s;
}

void default_sink(LogLevel level, std::string_view message) {
  if (level < LogLevel::warning) return;
  const char* tag = level == LogLevel::error ? "error" : "warning";
  std::fprintf(stderr, "libtune: %s: %.*s\n", tag, static_cast<int>(message.size()),
               message.data());
}

}  // namespace

LogSink set_log_sink(LogSink new_sink) {
  std::lock_guard lock(sink_mutex());
  LogSink old = std::move(sink());
  sink() = std::move(new_sink);
  return old;
}

void log(LogLevel level, std::string_view message) {
  std::lock_guard lock(sink_mutex());
  if (sink())
    sink()(level, message);
  else
    default_sink(level, message);
}

}  // namespace tune
