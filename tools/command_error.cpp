#include "command_error.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>

namespace tune::cli {

void fail_command(const char* command, const std::string& message, int code) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: %s\n", command, message.c_str());
  throw CLI::RuntimeError(message, code);
}

void fail_command(const char* command, const Status& st) {
  fail_command(command, st.to_string(), 1);
}

}  // namespace tune::cli
