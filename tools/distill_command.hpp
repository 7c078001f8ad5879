// `tune distill <kernel>`: one small table for all sizes, fit to the decisions stored for many
// keys of one kernel (tools/distill/distill_fit.hpp), printed as a summary and emitted as a
// C++ header or JSON.
//
//   tune distill <kernel> [--db FILE] [--device D] [--configs K | --single [--worst]]
//                [--depth D] [--min-leaf N] [--holdout FRACTION] [--seed S]
//                [--emit header|json] [--out FILE] [--namespace NS]
#pragma once

namespace CLI {
class App;
}

namespace tune::cli {

// Adds the `distill` subcommand to `app`.
void add_distill_command(CLI::App& app);

}  // namespace tune::cli
