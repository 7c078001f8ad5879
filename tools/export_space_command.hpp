// `tune export-space <space.json> [--format t1] [--out F]`: a space file written back as Kernel
// Tuner's T1 input (space/t1_writer.hpp), so a problem imported with `tune import-space` can go
// back to Kernel Tuner. KernelFile is written relative to the output's directory (absolute on
// stdout). Errors name the file and field; nothing is written on one.
#pragma once

namespace CLI {
class App;
}

namespace tune::cli {

void add_export_space_command(CLI::App& app);

}  // namespace tune::cli
