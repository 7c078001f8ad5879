// `tune-lab flush-check`: whether the cache flush before each timed launch makes a launch cold on
// one device (tune::measure_flush_effect): the last-level cache size and where it came from,
// the flush size, and a read of half the cache timed warm, after the flush and rotating input
// copies, with the ratios to the warm read. Exit status 0 whatever the ratios (a CPU device
// may show none); 1 when the check could not run.
//
//   tune-lab flush-check [--device SPEC] [--reps N] [--bytes N] [--json]
#pragma once

namespace CLI {
class App;
}

namespace tune::cli {

// Adds the `flush-check` subcommand to `app`.
void add_flush_check_command(CLI::App& app);

}  // namespace tune::cli
