// `tune cache`: inspect and manage the persistent tuning cache (see tune/sqlite_store.hpp).
//
//   tune cache [--db FILE] [--json] list [--kernel K] [--device D]
//   tune cache show <kernel> [--key K] [--device D]
//   tune cache clear [--kernel K] [--device D] [--key K]
//   tune cache export <file.json> [--kernel K] [--device D]
//   tune cache import <file.json>
//   tune cache path
//   tune cache explain <kernel> <key> [--bundle FILE]... [--device SPEC | --for-device FP]
//
// Tables for people, --json for scripts. The logic lives in SqliteStore; this only formats.
#pragma once

namespace CLI {
class App;
}

namespace tune::cli {

// Adds the `cache` subcommand and its subcommands to `app`.
void add_cache_command(CLI::App& app);

}  // namespace tune::cli
