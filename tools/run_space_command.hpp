// `tune run-space <space.json>`: tunes the kernel of a space file (written by `tune import-space`
// from a Kernel Tuner T1 file) on a device, with no hand-written harness.
//
//   tune run-space space.json [--device cuda|hip|vulkan[:i]] [--no-cache] [--quick]
//                             [--report report.html]
//   tune run-space space.json --list      the KernelDef without a device: signature, every point
//                                         the conditions accept, its block and grid (JSON)
//
// The KernelDef and the arguments come from space/space_kernel.hpp and space/space_args.hpp
// (the README lists what maps and what is refused). The run prints every configuration's
// median (or why it failed) and the chosen one; --report writes the HTML report of the tuning
// (html_report.hpp). Exit 1 when the space cannot be run or the tuning fails.
#pragma once

namespace CLI {
class App;
}

namespace tune::cli {

void add_run_space_command(CLI::App& app);

}  // namespace tune::cli
