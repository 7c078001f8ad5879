// `tune record`: a record of keys missed in production (TUNE_RECORD, tune/record.hpp), tuned
// offline on this machine's device.
//
//   tune record tune <file.jsonl> [--device SPEC] [--db FILE] [--bundle FILE] [--space FILE]...
//                                 [--quick] [--effort NAME]
//       tunes each distinct (kernel, source hash, key) of the record whose kernel the program
//       can build: the bundled kernels (kernels/) of the device's language and the kernels of
//       the --space files (tune import-space), with tune::tune_recorded (of two kernels of one
//       name, the one of the recorded source). Results go to --db (default: the user's
//       database, as any program's); with --bundle, this device's decisions of those kernels in
//       that database are written as a bundle. Each line not tuned is printed with why (a
//       kernel the program cannot build, a source hash of another version, a damaged line, a
//       failed tuning); the rest go on. Exit 0 when every line was tuned, 1 otherwise.
#pragma once

namespace CLI {
class App;
}

namespace tune::cli {

// Adds the `record` subcommand and its subcommands to `app`.
void add_record_command(CLI::App& app);

}  // namespace tune::cli
