// The rules every stored or imported row must pass, independent of how it is stored: the
// space-independent plausibility checks (check_stored_row) and the provenance order that
// decides which of two rows for one config is kept (has_better_provenance).
//
// Used by the database (rows read back, rows salvaged), the JSON import and the Autotuner's
// validation (cache_validation.hpp), so that every way in applies the same rules.
// Pure functions: no state, no I/O, safe to call from any thread.
#pragma once

#include <cstdint>

#include "tune/sqlite_store.hpp"

namespace tune {

// check_stored_row, has_better_provenance and the plausibility limits are declared in
// tune/sqlite_store.hpp.

namespace cache {

// The current unix time in seconds: what a row saved without a time is stamped with, what
// check_stored_row judges dates against, and the suffix of a file moved aside.
std::int64_t now_unix();

}  // namespace cache
}  // namespace tune
