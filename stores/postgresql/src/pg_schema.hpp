// The server's schema: what tables libtune keeps there, their version, and the way from an
// older version to this one.
//
// Version 1 (the tables of kMigrations[0]):
//   tune_schema (version)                     one row: the schema's version
//   tune_results (the key's five columns, the row's thirteen columns of the SQLite file,
//                 key_id)                     one row per key and config; key_id is
//                                             tune_key_id(kernel, source_hash, key, device,
//                                             toolchain), an md5 so long keys index
//   tune_claims (key_id, kernel, key, owner, expires_at)   one live claim per key
// Version 2 adds tune_results.decision (the SQLite file's `decision` column, '' for none).
// A server without tune_schema is at version 0. Opening a server at an older version applies
// the migrations from its version to kPgSchemaVersion in one transaction, under an advisory
// lock so that processes meeting it at once migrate it once; a newer version is refused.
//
// Stateless functions over a Connection the caller owns.
#pragma once

#include <string>
#include <string_view>

#include "pg_connection.hpp"

namespace tune::pg {

inline constexpr int kPgSchemaVersion = 2;

// The key of a row in a WHERE clause, its five fields bound at $1..$5.
inline constexpr std::string_view kKeyMatch =
    "key_id = tune_key_id($1::text, $2::bigint, $3::text, $4::text, $5::text) AND kernel = $1 "
    "AND source_hash = $2::bigint AND key = $3 AND device = $4 AND toolchain = $5";
// The fourteen columns of a row, in the order of the SQLite file's kResultColumns.
inline constexpr std::string_view kRowColumns =
    "config, status, reason, count, min, p20, median, p80, max, mean, unix_time, checksum, "
    "verified, decision";
inline constexpr std::string_view kKeyColumns = "kernel, source_hash, key, device, toolchain";

// Makes the schema usable: creates it when absent, migrates an older one. failed_precondition
// naming the server for a newer version, or an absent or older schema this role may not
// create or migrate; what Connection::exec returns for other failures. `*writable` says
// whether this role may write rows (INSERT and UPDATE on tune_results). A server at version 1
// that this role may not migrate is read as it is, read-only, its rows without records (as a
// read-only open reads an older SQLite file): `*row_columns` is what to select for a row,
// kRowColumns or its version-1 form.
Status ensure_schema(Connection& c, bool* writable, std::string* row_columns);

}  // namespace tune::pg
