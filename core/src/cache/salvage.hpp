// Salvage: the readable, valid rows of a damaged cache file of our schema, copied into the
// fresh database that replaces it.
//
// Blocking: reads the whole damaged file and writes into `into` in one IMMEDIATE transaction
// (which may wait up to the connection's busy timeout). The caller owns and serialises `into`;
// the damaged file is opened read-only here and closed before returning.
#pragma once

#include <sqlite3.h>

#include <string>

namespace tune::cache {

// Copies the rows of the database file `from` that pass the checks of any stored row
// (column types, checksum, check_stored_key, check_stored_row) into `into`. Rows are found
// two ways: through SQLite (a scan forward and one backward, so that rows on both sides of a
// damaged page are reached; it reads the -wal too), then straight from the file's pages
// (page_scan.hpp), which reaches the rows beyond a truncation, a damaged interior page or a
// damaged schema. A primary key met twice keeps its first valid row; rows already in `into`
// are never replaced. Returns the summary for the warning ("salvaged 3 rows of 5 (2 lost)").
std::string salvage_rows(sqlite3* into, const std::string& from);

}  // namespace tune::cache
