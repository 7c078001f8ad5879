// Library-wide diagnostics. By default warnings and errors go to stderr prefixed "libtune:";
// a program may install its own sink. Thread-safe: the sink is called under a lock.
#pragma once

#include <functional>
#include <string_view>

namespace tune {

enum class LogLevel { debug, info, warning, error };
using LogSink = std::function<void(LogLevel, std::string_view)>;

// Replaces the sink; an empty function restores the default. Returns the previous sink.
LogSink set_log_sink(LogSink sink);
void log(LogLevel level, std::string_view message);
inline void log_warning(std::string_view message) { log(LogLevel::warning, message); }

}  // namespace tune
