// A StoreKey and a StoredResult to and from the server's text format (the columns of
// pg_schema.hpp), with the row checksum of the SQLite file (cache/row_codec.hpp), so that a
// row altered on the server is refused as an altered row of the file is.
//
// Stateless functions; no I/O.
#pragma once

#include <string>
#include <vector>

#include "pg_connection.hpp"
#include "tune/store.hpp"

namespace tune::pg {

// The five key parameters ($1..$5 of kKeyMatch).
void append_key(const StoreKey& key, std::vector<Param>* params);
// The fourteen row parameters (kRowColumns' order). A row without a time (unix_time 0) is
// stamped with now; a NaN statistic is NULL, +-inf is Infinity.
void append_row(const StoreKey& key, const StoredResult& row, std::vector<Param>* params);

// Reads a key from columns first..first+4 (kKeyColumns' order). False with `why` when a value
// does not parse.
bool read_key(const Answer& a, int row, int first, StoreKey* key, std::string* why);
// Reads the row at columns first..first+13 (kRowColumns' order) and checks it as the SQLite
// file's rows are checked: every value parses, the status is known, the sample count is in
// range, the checksum (when not NULL) matches, then check_stored_row. False with `why` (the
// config then holds what the server sent, for the warning) when any fails. A failed row's NULL
// statistics read as +inf.
bool read_row(const Answer& a, int row, int first, const StoreKey& key, StoredResult* out,
              std::string* why);

}  // namespace tune::pg
