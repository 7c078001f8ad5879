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

// Copies the rows of the database file `from` that read back and pass the row checks
// (read_result, check_stored_row, key column types) into `into`, scanning forward and then
// backward so that rows on both sides of a damaged page are reached. Rows already in `into`
// are never replaced. Returns the summary for the warning ("salvaged 3 rows of 5 (2 lost)").
std::string salvage_rows(sqlite3* into, const std::string& from);

}  // namespace tune::cache
