// Creating and upgrading the cache's tables. See store_schema.hpp.
#include "cache/store_schema.hpp"

#include <string>

#include "cache/sqlite_db.hpp"

namespace tune::cache {

int create_schema(sqlite3* db) {
  int rc = exec(db, "BEGIN IMMEDIATE");
  if (rc != SQLITE_OK) return rc;
  // Another process may have created it between our look and our lock.
  std::int64_t app_id = 0;
  rc = query_int(db, "PRAGMA application_id", &app_id);
  if (rc == SQLITE_OK && app_id != kCacheApplicationId) {
    rc = exec(db, kResultsTableSql);
    if (rc == SQLITE_OK) rc = exec(db, kClaimsTableSql);
    if (rc == SQLITE_OK)
      rc = exec(db, "PRAGMA application_id = " + std::to_string(kCacheApplicationId));
    if (rc == SQLITE_OK)
      rc = exec(db, "PRAGMA user_version = " + std::to_string(kCacheSchemaVersion));
  }
  if (rc == SQLITE_OK) rc = exec(db, "COMMIT");
  if (rc != SQLITE_OK) exec(db, "ROLLBACK");
  return rc;
}

bool has_column(sqlite3* db, const char* table, const char* column) {
  Stmt s;
  return s.prepare(db, std::string("SELECT ") + column + " FROM " + table + " LIMIT 0") ==
         SQLITE_OK;
}

int ensure_current_schema(sqlite3* db) {
  // Not our tables under our id: changing nothing, the caller reports it as damaged.
  if (Stmt s;
      (s.prepare(db, "SELECT " + std::string(kKeyColumns) + ", " +
                         std::string(kLegacyResultColumns) + " FROM results LIMIT 0")) != SQLITE_OK)
    return SQLITE_ERROR;
  std::int64_t version = 0;
  if (int rc = query_int(db, "PRAGMA user_version", &version); rc != SQLITE_OK) return rc;
  if (version >= kCacheSchemaVersion && has_column(db, "results", "checksum") &&
      has_column(db, "results", "verified") && has_column(db, "results", "decision") &&
      has_column(db, "claims", "expires_ms"))
    return SQLITE_OK;
  int rc = exec(db, "BEGIN IMMEDIATE");
  if (rc != SQLITE_OK) return rc;
  // Another process may have upgraded it between our look and our lock: each step looks again.
  if (!has_column(db, "results", "checksum"))
    rc = exec(db, "ALTER TABLE results ADD COLUMN checksum INTEGER");
  if (rc == SQLITE_OK && !has_column(db, "results", "verified"))
    rc = exec(db, "ALTER TABLE results ADD COLUMN verified INTEGER NOT NULL DEFAULT 0");
  if (rc == SQLITE_OK && !has_column(db, "results", "decision"))
    rc = exec(db, "ALTER TABLE results ADD COLUMN decision TEXT NOT NULL DEFAULT ''");
  if (rc == SQLITE_OK) rc = exec(db, kClaimsTableSql);
  if (rc == SQLITE_OK) rc = query_int(db, "PRAGMA user_version", &version);
  if (rc == SQLITE_OK && version < kCacheSchemaVersion)
    rc = exec(db, "PRAGMA user_version = " + std::to_string(kCacheSchemaVersion));
  if (rc == SQLITE_OK) rc = exec(db, "COMMIT");
  if (rc != SQLITE_OK) exec(db, "ROLLBACK");
  return rc;
}

std::string_view result_columns_of(sqlite3* db) {
  if (!has_column(db, "results", "checksum")) return kLegacyResultColumns;
  if (!has_column(db, "results", "verified")) return kVersion1ResultColumns;
  if (!has_column(db, "results", "decision")) return kVersion2ResultColumns;
  return kResultColumns;
}

}  // namespace tune::cache
