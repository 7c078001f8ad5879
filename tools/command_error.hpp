// How a `tune` command gives up: whatever it printed to stdout is flushed first, then the
// message goes to stderr prefixed by the command ("tune cache: ..."). fail_command then throws
// CLI::RuntimeError, which carries the exit code to main; command_failed returns the exit
// status (1) for commands that return it themselves. CLI11's App::exit() prints nothing for a
// CLI::RuntimeError, so the message is written here or the user never sees it. One thread at a
// time.
#pragma once

#include <string>

#include "tune/status.hpp"

namespace tune::cli {

[[noreturn]] void fail_command(const char* command, const std::string& message, int code = 1);
[[noreturn]] void fail_command(const char* command, const Status& st);
int command_failed(const char* command, const std::string& message);

}  // namespace tune::cli
