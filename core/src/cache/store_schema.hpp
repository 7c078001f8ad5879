// What a libtune cache database contains, and the SQL that reads and writes it.
//
// Table `results`: one row per (kernel, source hash, key, device fingerprint, toolchain
// fingerprint, config text) holding the config's status, failure reason, sample statistics,
// the unix time it was measured, a checksum of the row (row_codec.hpp) and whether its output
// was verified (StoredResult::verified) and, on a key's decided winner, its decision record
// (StoredResult::decision, as decision_codec.hpp writes it; '' on other rows). Table `claims`: one
// row per key being tuned (claims.hpp). PRAGMA application_id marks the file as libtune's and
// PRAGMA user_version is the schema version, so a foreign or older file is recognised.
//
// Schema version 2 added `verified` (0 or 1). A version-1 file is migrated on its first
// readwrite open (ensure_current_schema: the column added with 0, i.e. not checked, for every
// old row, and the version raised), and read as such (every row not checked) when opened
// read-only; a libtune that reads only version 1 leaves a version-2 file alone and works in
// memory (a newer schema). `checksum` and the `claims` table were added to version 1 in
// place: files written before them gain them on the same upgrade (their rows have a NULL
// checksum, read as unverified but checked like any row). Versions below 1 are not ours.
//
// Schema version 3 added `decision` (text, '' for none). A version-2 (or 1) file is migrated
// the same way on its first readwrite open (the column added with '' for every old row: no
// decision records) and read without records when opened read-only; a libtune that reads only
// version 2 leaves a version-3 file alone and works in memory, as for any newer schema.
//
// The functions take a connection the caller owns and serialises; each change is one
// IMMEDIATE transaction, which may wait up to the connection's busy timeout.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string_view>

namespace tune {

// The schema version this libtune reads and writes (PRAGMA user_version).
inline constexpr int kCacheSchemaVersion = 3;
// The oldest schema version this libtune reads and upgrades.
inline constexpr int kOldestCacheSchemaVersion = 1;
// PRAGMA application_id of a libtune cache ("ltun").
inline constexpr std::int32_t kCacheApplicationId = 0x6c74756e;

namespace cache {

inline constexpr std::string_view kResultsTableSql = R"sql(
CREATE TABLE IF NOT EXISTS results (
  kernel      TEXT    NOT NULL,
  source_hash INTEGER NOT NULL,
  key         TEXT    NOT NULL,
  device      TEXT    NOT NULL,
  toolchain   TEXT    NOT NULL,
  config      TEXT    NOT NULL,
  status      TEXT    NOT NULL,
  reason      TEXT    NOT NULL DEFAULT '',
  count       INTEGER NOT NULL DEFAULT 0,
  min REAL, p20 REAL, median REAL, p80 REAL, max REAL, mean REAL,
  unix_time   INTEGER NOT NULL DEFAULT 0,
  checksum    INTEGER,
  verified    INTEGER NOT NULL DEFAULT 0,
  decision    TEXT    NOT NULL DEFAULT '',
  PRIMARY KEY (kernel, source_hash, key, device, toolchain, config)
) WITHOUT ROWID;
)sql";

inline constexpr std::string_view kClaimsTableSql = R"sql(
CREATE TABLE IF NOT EXISTS claims (
  kernel      TEXT    NOT NULL,
  source_hash INTEGER NOT NULL,
  key         TEXT    NOT NULL,
  device      TEXT    NOT NULL,
  toolchain   TEXT    NOT NULL,
  owner       TEXT    NOT NULL,
  host        TEXT    NOT NULL,
  pid         INTEGER NOT NULL,
  expires_ms  INTEGER NOT NULL,
  PRIMARY KEY (kernel, source_hash, key, device, toolchain)
) WITHOUT ROWID;
)sql";

// The columns of a StoredResult, in the order read_result() reads them.
inline constexpr std::string_view kResultColumns =
    "config, status, reason, count, min, p20, median, p80, max, mean, unix_time, checksum, "
    "verified, decision";
// For a version-2 file opened read-only: no decision records.
inline constexpr std::string_view kVersion2ResultColumns =
    "config, status, reason, count, min, p20, median, p80, max, mean, unix_time, checksum, "
    "verified, ''";
// For a version-1 file opened read-only (it cannot be upgraded): every row not checked.
inline constexpr std::string_view kVersion1ResultColumns =
    "config, status, reason, count, min, p20, median, p80, max, mean, unix_time, checksum, 0, ''";
// For a version-1 file from before the checksum column, opened read-only.
inline constexpr std::string_view kLegacyResultColumns =
    "config, status, reason, count, min, p20, median, p80, max, mean, unix_time, NULL, 0, ''";

// The columns of a StoreKey, in the order read_key() reads and bind_key() binds them.
inline constexpr std::string_view kKeyColumns = "kernel, source_hash, key, device, toolchain";

// One row: key at ?1..?5 (bind_key), result at ?6..?19 (bind_result).
inline constexpr std::string_view kUpsertSql =
    "INSERT OR REPLACE INTO results (kernel, source_hash, key, device, toolchain, config, "
    "status, reason, count, min, p20, median, p80, max, mean, unix_time, checksum, verified, "
    "decision) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
    "?18, ?19)";

// The rows (or claim) of one key bound at ?1..?5.
inline constexpr std::string_view kKeyWhere =
    " WHERE kernel = ?1 AND source_hash = ?2 AND key = ?3 AND device = ?4 AND toolchain = ?5";

// The rows a CacheFilter bound at ?1..?3 matches (an empty field matches everything).
inline constexpr std::string_view kFilterWhere =
    " WHERE (?1 = '' OR kernel = ?1) AND (?2 = '' OR key = ?2) "
    "AND (?3 = '' OR instr(device, ?3) > 0)";

// Creates the tables and marks the file as a libtune cache of this version, unless another
// process did so first. An SQLite result code.
int create_schema(sqlite3* db);

// Upgrades a file of an older version this libtune reads (kOldestCacheSchemaVersion on) to
// kCacheSchemaVersion, in place: the checksum column and the claims table when missing, the
// verified column (0: not checked), the decision column ('': none), then user_version (one short
// write, once per file). SQLITE_ERROR, changing nothing, when the file's `results` table is not
// ours (the caller reports it as damaged).
int ensure_current_schema(sqlite3* db);

// Whether `table` exists and has `column`.
bool has_column(sqlite3* db, const char* table, const char* column);

// The result columns to select from a file that may be of an older version (read-only, or a
// damaged file being salvaged): kResultColumns, or the form that reads what the file lacks
// as an older libtune wrote it.
std::string_view result_columns_of(sqlite3* db);

}  // namespace cache
}  // namespace tune
