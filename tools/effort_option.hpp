// The one --effort option of the `tune` commands that tune (demo, run-space): quick, standard
// (the default) or thorough, as AutotunerOptions::effort reads them (tune/effort.hpp). Any
// other word is refused by the parser, naming the three. Main thread only (a parse).
#pragma once

#include "tune/effort.hpp"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace tune::cli {

// Adds `--effort NAME` to `command`, written into `effort` (which must outlive the parse).
CLI::Option* add_effort_option(CLI::App& command, Effort& effort);

}  // namespace tune::cli
