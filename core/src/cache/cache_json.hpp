// The JSON interchange format of `tune cache export` / `import` (SqliteStore::export_json and
// import_json; the format is described there, in tune/sqlite_store.hpp).
//
// The parser treats its input as hostile (it is fuzzed: fuzz/fuzz_cache_import.cpp): nothing
// here throws; every field is type-checked before use. Pure functions; safe from any thread.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tune/sqlite_store.hpp"
#include "tune/status.hpp"

namespace tune {

// The rows as one document of that format. Statistics are nanoseconds; a non-finite value is
// written as null.
std::string cache_rows_to_json(std::span<const CacheRow> rows);

// Parses that format. A document that is not JSON or not this format is an error
// (invalid_argument / data_loss); rows that fail the row checks (check_stored_row) are skipped
// and described in `problems` (when non-null), never returned.
Result<std::vector<CacheRow>> cache_rows_from_json(std::string_view text,
                                                   std::vector<std::string>* problems = nullptr);

}  // namespace tune
