// `tune bundle`: read-only files of tuning decisions shipped with an application
// (tune/bundle.hpp; docs/guide "Shipping tuned kernels with your application").
//
//   tune bundle create --from <db> [--kernel K]... [--device D]... -o <file>
//   tune bundle show <file> [--json]
//   tune bundle verify <file>...           exit 0 only when every bundle is whole and every
//                                          row passes the row checks
//   tune bundle merge -o <file> <in>...    idempotent; rows of every device kept
//   tune bundle explain <kernel> [--key K] [--device D] [--db FILE] [--bundle FILE]...
//                                          which layer (the database or which bundle) serves
//                                          each configuration of each key, and the winner
//
// The logic lives in the library (create_bundle, read_bundle, merge_bundles, stack_stores);
// this only parses and formats.
#pragma once

namespace CLI {
class App;
}

namespace tune::cli {

// Adds the `bundle` subcommand and its subcommands to `app`.
void add_bundle_command(CLI::App& app);

}  // namespace tune::cli
