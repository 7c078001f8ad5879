// `tune-lab stability`: how often the winner changes when a key is tuned again. Tunes each bundled
// kernel's demo sizes `--runs` times on one device, every run a fresh Autotuner with no tuning
// database (compiled variants may come from the disk caches), and prints per key the winners
// with their counts and the agreement: the share of runs that picked the most frequent winner.
//
//   tune-lab stability [--device SPEC] [--kernel NAME] [--runs N] [--quick] [--json]
#pragma once

namespace CLI {
class App;
}

namespace tune::cli {

// Adds the `stability` subcommand to `app`.
void add_stability_command(CLI::App& app);

}  // namespace tune::cli
