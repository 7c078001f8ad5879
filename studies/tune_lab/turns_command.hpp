// `tune-lab turns`: near-equal configurations of one bundled kernel timed in turns of 1, 5, 25
// and 100 launches after a heat-up (turn_length.hpp): whether the turn length decides which is
// faster on a power-limited GPU. Prints a table; exit status 1 when a configuration could not be
// compiled or timed.
//
//   tune-lab turns [--device SPEC] [--kernel NAME] [--size N ...] [--config TEXT ...]
//                  [--heat-ms MS] [--samples N]
//
// The defaults are the wgmma fp16 matmul configurations that H200 tunings split between
// (2026-12-02): three tile orders at 8192^3 and 4096^3.
#pragma once

namespace CLI {
class App;
}

namespace tune::cli {

// Adds the `turns` subcommand to `app`.
void add_turns_command(CLI::App& app);

}  // namespace tune::cli
