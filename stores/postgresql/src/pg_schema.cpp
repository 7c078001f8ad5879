// The server's schema and its migrations. See pg_schema.hpp.
#include "pg_schema.hpp"

#include <charconv>
#include <iterator>
#include <string>

namespace tune::pg {
namespace {

// kMigrations[v] takes a schema at version v to version v + 1. Append, never edit.
constexpr std::string_view kMigrations[] = {
    R"sql(
CREATE TABLE tune_schema (version integer NOT NULL);
INSERT INTO tune_schema VALUES (0);
CREATE FUNCTION tune_key_id(text, bigint, text, text, text) RETURNS text
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT md5($1 || chr(31) || $2::text || chr(31) || $3 || chr(31) || $4 || chr(31) || $5) $$;
CREATE TABLE tune_results (
  kernel text NOT NULL, source_hash bigint NOT NULL, key text NOT NULL, device text NOT NULL,
  toolchain text NOT NULL, config text NOT NULL, status text NOT NULL, reason text NOT NULL,
  count bigint NOT NULL, min double precision, p20 double precision, median double precision,
  p80 double precision, max double precision, mean double precision,
  unix_time bigint NOT NULL, checksum bigint, verified boolean NOT NULL DEFAULT false,
  key_id text GENERATED ALWAYS AS (tune_key_id(kernel, source_hash, key, device, toolchain))
    STORED,
  PRIMARY KEY (key_id, config));
CREATE TABLE tune_claims (
  key_id text PRIMARY KEY, kernel text NOT NULL, key text NOT NULL, owner text NOT NULL,
  expires_at timestamptz NOT NULL);
)sql",
    // Version 2: the decision record of a key's decided winner (StoredResult::decision, as the
    // decision codec writes it); '' for every older row.
    R"sql(
ALTER TABLE tune_results ADD COLUMN decision text NOT NULL DEFAULT '';
)sql",
};
static_assert(std::size(kMigrations) == kPgSchemaVersion);

// The schema's version: 0 when tune_schema is absent.
Result<int> schema_version(Connection& c) {
  Result<Answer> exists = c.exec("SELECT to_regclass('tune_schema') IS NOT NULL");
  if (!exists.ok()) return exists.status();
  if (exists->text(0, 0) != "t") return 0;
  Result<Answer> v = c.exec("SELECT max(version) FROM tune_schema");
  if (!v.ok()) return v.status();
  int version = 0;
  const std::string_view t = v->rows() == 1 && !v->null(0, 0) ? v->text(0, 0) : "0";
  std::from_chars(t.data(), t.data() + t.size(), version);
  return version;
}

// A fixed advisory lock key ("libtune" in ASCII): processes meeting an old schema queue here.
constexpr std::string_view kLockKey = "31093350431335781";

// Applies the migrations from the version found in one transaction (rolled back on any
// failure). The caller holds the advisory lock.
Status migrate_in_transaction(Connection& c) {
  Result<Answer> begin = c.exec("BEGIN");
  if (!begin.ok()) return begin.status();
  Result<int> from = schema_version(c);
  Status st = from.ok() ? Status{} : from.status();
  for (int v = st.ok() ? *from : kPgSchemaVersion; v < kPgSchemaVersion && st.ok(); ++v) {
    Result<Answer> step = c.exec(std::string(kMigrations[v]));
    if (!step.ok()) st = step.status();
  }
  if (st.ok() && *from < kPgSchemaVersion) {
    Result<Answer> set =
        c.exec("UPDATE tune_schema SET version = " + std::to_string(kPgSchemaVersion));
    if (!set.ok()) st = set.status();
  }
  if (st.ok()) {
    Result<Answer> commit = c.exec("COMMIT");
    return commit.ok() ? Status{} : commit.status();
  }
  const std::string sqlstate = c.last_sqlstate();
  if (c.connected()) (void)c.exec("ROLLBACK");
  if (sqlstate == "42501")
    return Status(StatusCode::failed_precondition,
                  c.where() + ": libtune's tables are absent or older than version " +
                      std::to_string(kPgSchemaVersion) +
                      " and this role may not create them: " + st.message());
  return st;
}

// The migration under a session advisory lock, taken before the transaction begins: a
// transaction begun after another's commit sees its tables (one begun before may not, its
// catalog cache holding the earlier lookup's "absent").
Status migrate(Connection& c) {
  Result<Answer> lock = c.exec("SELECT pg_advisory_lock(" + std::string(kLockKey) + ")");
  if (!lock.ok()) return lock.status();
  const Status st = migrate_in_transaction(c);
  if (c.connected()) (void)c.exec("SELECT pg_advisory_unlock(" + std::string(kLockKey) + ")");
  return st;
}

}  // namespace

Status ensure_schema(Connection& c, bool* writable, std::string* row_columns) {
  *row_columns = std::string(kRowColumns);
  Result<int> v = schema_version(c);
  if (!v.ok()) return v.status();
  if (*v > kPgSchemaVersion)
    return Status(StatusCode::failed_precondition,
                  c.where() + ": libtune's tables are at schema version " + std::to_string(*v) +
                      ", newer than this libtune's (" + std::to_string(kPgSchemaVersion) +
                      "): the server is not used (upgrade libtune)");
  if (*v < kPgSchemaVersion) {
    Status st = migrate(c);
    // Only refused for the role's rights (42501): a version-1 server stays readable.
    if (!st.ok() && st.code() == StatusCode::failed_precondition && *v == 1) {
      const std::string_view cols = kRowColumns;
      *row_columns = std::string(cols.substr(0, cols.rfind("decision"))) + "'' AS decision";
      *writable = false;
      return {};
    }
    if (!st.ok()) return st;
  }
  Result<Answer> rights = c.exec(
      "SELECT has_table_privilege('tune_results', 'INSERT') AND "
      "has_table_privilege('tune_results', 'UPDATE')");
  if (!rights.ok()) return rights.status();
  *writable = rights->text(0, 0) == "t";
  return {};
}

}  // namespace tune::pg
