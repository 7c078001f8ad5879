// The row codec: a StoreKey and a StoredResult to and from the columns of the `results` table
// (store_schema.hpp), with the checksum that guards every stored row.
//
// The checksum is stable_hash over the key and every stored column, as stored (a statistic
// stored as NULL, i.e. NaN, hashes as NaN). It protects against damage, not against a
// deliberate writer. Rows written before the checksum column have NULL there: read as
// unverified, still checked like any row. The `verified` flag enters the checksum only when
// set, so rows from before that column (all not checked) keep their checksums; the decision
// record (its stored text) likewise only when the row has one.
//
// Stateless functions over a statement the caller owns; no I/O beyond the statement's.
#pragma once

#include <cstdint>
#include <string>

#include "cache/sqlite_db.hpp"
#include "tune/store.hpp"

namespace tune::cache {

// A row's checksum over its key and every stored column, as stored (a statistic stored as
// NULL, i.e. NaN, hashes as NaN). Protects against damage, not against a deliberate writer.
// `verified` counts only when set, so that the checksums of rows written before the column
// (all not checked) still match, and a row that claims a check it never had does not. Every
// store that keeps rows (the SQLite file, a PostgreSQL server) stores and checks this one.
std::int64_t row_checksum(const StoreKey& k, const StoredResult& r) noexcept;

// Binds `k` at ?1..?5 (the order of kKeyColumns).
void bind_key(Stmt& s, const StoreKey& k);
// Reads a key from result columns 0..4 (the order of kKeyColumns). The types are not checked:
// see key_columns_ok.
void read_key(const Stmt& s, StoreKey* k);
// Whether result columns 0..4 have the SQLite types of a key.
bool key_columns_ok(const Stmt& s);

// Binds a row at ?first..?first+13 (the order of kResultColumns) with its checksum. A row
// without a time (unix_time 0) is stamped with now.
void bind_result(Stmt& s, int first, const StoreKey& key, const StoredResult& row);

// Reads a StoredResult of `key` from the columns listed in kResultColumns starting at
// `first`. Returns false (with `why`) when a column has the wrong SQLite type (damage can
// leave text in a statistics column, which would otherwise read as 0.0; `verified` must be
// the integer 0 or 1; `decision` text the decision codec reads), the status name is
// unknown, the sample count is out of range, or the row's checksum does not match. A
// failed row's NULL statistics read as +inf. check_stored_row() is the caller's next step.
bool read_result(const Stmt& s, int first, const StoreKey& key, StoredResult* r, std::string* why);

}  // namespace tune::cache
