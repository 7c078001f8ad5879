// The one way a `tune` command takes and opens its device: the --device option (one help text
// for every command) and open_cli_device, which opens what it names and, when it cannot, says
// why on stderr as "tune <command>: <status>". Commands that open a device use these two and
// nothing else, so `tune demo` and `run-space` (and tune-lab's `stability` and `flush-check`,
// studies/tune_lab) read --device alike and fail alike. Main thread only (prints; open_device
// may take seconds on a cold driver).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "tune/device.hpp"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace tune::cli {

// Adds `--device SPEC` to `command`, written into `spec` (which must outlive the parse).
CLI::Option* add_device_option(CLI::App& command, std::string& spec);

// Opens the device `spec` names with tune::open_device: "backend" or "backend:index|name";
// empty reads TUNE_DEVICE, else TUNE_BACKEND, else takes the first compiled backend that opens.
// On failure flushes stdout (so the message follows what the command printed), writes
// "<program> <command>: <status with its culprit>" to stderr and returns null: the caller exits
// 1 without printing again. The device is the caller's; release tuners before it.
std::unique_ptr<Device> open_cli_device(std::string_view command, const std::string& spec,
                                        std::string_view program = "tune");

}  // namespace tune::cli
