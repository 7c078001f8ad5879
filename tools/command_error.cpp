#include "command_error.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>

namespace tune::cli {

int command_failed(const char* command, const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: %s\n", command, message.c_str());
  return 1;
}

void fail_command(const char* command, const std::string& message, int code) {
  command_failed(command, message);
  throw CLI::RuntimeError(message, code);
}

void fail_command(const char* command, const Status& st) {
  fail_command(command, st.to_string(), 1);
}

}  // namespace tune::cli
