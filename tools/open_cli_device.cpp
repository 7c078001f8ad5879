// See open_cli_device.hpp.
#include "open_cli_device.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>

#include "tune/registry.hpp"

namespace tune::cli {

CLI::Option* add_device_option(CLI::App& command, std::string& spec) {
  return command.add_option(
      "--device", spec,
      "backend[:index|name] (default: TUNE_DEVICE, else TUNE_BACKEND, else the first GPU, else "
      "lavapipe)");
}

std::unique_ptr<Device> open_cli_device(std::string_view command, const std::string& spec,
                                        std::string_view program) {
  auto opened = open_device(spec);
  if (opened.ok()) return std::move(*opened);
  std::fflush(stdout);
  std::fprintf(stderr, "%.*s %.*s: %s\n", static_cast<int>(program.size()), program.data(),
               static_cast<int>(command.size()), command.data(),
               opened.status().to_string().c_str());
  return nullptr;
}

}  // namespace tune::cli
