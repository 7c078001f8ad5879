// `tune cache explain <kernel> <key> [--db FILE] [--bundle FILE]... [--device SPEC |
// --for-device FINGERPRINT [--toolchain T]] [--json]`: the level of the lookup that serves one
// key on one device, and its configuration (docs/cli.md).
#pragma once

#include <memory>
#include <string>

namespace CLI {
class App;
}

namespace tune::cli {

// Adds `explain` under `cache`; `parent_db` is `tune cache --db`, used when explain's own
// --db is not given.
void add_cache_explain(CLI::App& cache, std::shared_ptr<const std::string> parent_db);

}  // namespace tune::cli
