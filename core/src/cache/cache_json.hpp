// The JSON interchange format of `tune cache export` / `import` (SqliteStore::export_json and
// import_json; the format is described there, in tune/sqlite_store.hpp).
//
// The parser treats its input as hostile (it is fuzzed: fuzz/fuzz_cache_import.cpp): nothing
// here throws; every field is type-checked before use. Pure functions; safe from any thread.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

#include "tune/sqlite_store.hpp"
#include "tune/status.hpp"

namespace tune {

// The rows as one document of that format. Statistics are nanoseconds; a non-finite value is
// written as null.
std::string cache_rows_to_json(std::span<const CacheRow> rows);

// What read_cache_json finds, in document order.
struct CacheJsonSink {
  // A row that passed the row checks (check_stored_key, check_stored_row; its config in
  // canonical form). A status that is not ok stops reading and is what read_cache_json
  // returns.
  std::function<Status(CacheRow&&)> row;
  // A row that did not: "row <index>: <why>", the index counting every element of "rows".
  std::function<void(std::string)> rejected;
};

// Limits of read_cache_json: they bound the memory one value can take, whatever the size of
// the document. A string (key or value) longer than this, a number or literal longer than
// kMaxJsonTokenBytes, or nesting deeper than kMaxJsonDepth ends the document with
// invalid_argument naming the limit and the byte offset.
inline constexpr std::size_t kMaxJsonStringBytes = std::size_t{4} << 20;
inline constexpr std::size_t kMaxJsonTokenBytes = 4096;
inline constexpr int kMaxJsonDepth = 64;
// A row element holding more members or more string bytes than this is rejected (as a row,
// the document goes on).
inline constexpr std::size_t kMaxJsonRowMembers = 64;
inline constexpr std::size_t kMaxJsonRowBytes = std::size_t{8} << 20;

// Reads that format from `in` incrementally (nlohmann::json's SAX parser): each element of
// "rows" is built, checked and handed to the sink before the next is read, so memory stays
// bounded (the limits above) independently of the document's size, and nothing is kept
// after the sink has the row. Members of the top-level object other than "format", "version"
// and "rows", and members of a row the format does not know, are skipped unread.
//
// Returns ok when the whole input is one JSON document of this format; else data_loss (not
// JSON, not UTF-8, truncated) or invalid_argument (another format or version, no "rows"
// array, a limit). Rows may have reached the sink before an error is found (the version may
// follow the rows): a caller that writes them must undo that on error (SqliteStore's import
// writes in one transaction and rolls it back). A "format" or "version" that comes before the
// rows and is wrong stops reading before any row.
Status read_cache_json(std::streambuf& in, const CacheJsonSink& sink);
Status read_cache_json(std::string_view text, const CacheJsonSink& sink);

// The same over a string, collecting the rows: for tests and the fuzzer.
Result<std::vector<CacheRow>> cache_rows_from_json(std::string_view text,
                                                   std::vector<std::string>* problems = nullptr);

}  // namespace tune
