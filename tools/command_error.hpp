// How a `tune` command gives up: whatever it printed to stdout is flushed first, then the
// message goes to stderr prefixed by the command ("tune cache: ..."), then CLI::RuntimeError
// carries the exit code to main, which returns it. Never returns; one thread at a time.
#pragma once

#include <string>

#include "tune/status.hpp"

namespace tune::cli {

[[noreturn]] void fail_command(const char* command, const std::string& message, int code = 1);
[[noreturn]] void fail_command(const char* command, const Status& st);

}  // namespace tune::cli
