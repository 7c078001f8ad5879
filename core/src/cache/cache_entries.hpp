// The rows of a store as `tune cache list/show` present them, whatever store they come from
// (the SQLite file, a PostgreSQL server): each key's rows in the order of the one winner rule,
// and one CacheEntry per key.
//
// Pure functions over their arguments; no I/O.
#pragma once

#include <vector>

#include "tune/sqlite_store.hpp"

namespace tune::cache {

// Whether `key` is the library's own bookkeeping rather than a decision: key text starting
// with kBookkeepingMark (a split bucket's record, "#bucket-splits": core/src/tuning/
// bucket_splits.hpp). Such rows are stored, merged and read by the library (TuningStore::load)
// like any, but never listed: the stores' rows() (and what is made of it: `tune cache list`,
// `show`, `export`, `tune report`, `tune distill`) leave them out. A key text made by
// KeyBuilder never starts with the mark.
inline constexpr char kBookkeepingMark = '#';
bool is_bookkeeping(const StoreKey& key) noexcept;
// `rows` less the bookkeeping rows.
void drop_bookkeeping(std::vector<CacheRow>& rows);

// Whether `a` and `b` are the same key (all five fields).
bool same_key(const StoreKey& a, const StoreKey& b) noexcept;

// Each key's rows (consecutive, as a store's query by key orders them) in the order of the one
// winner rule (core/src/tuning/winner_rule.hpp, with the default tie_tolerance), so that
// `tune cache list/show` name the winner a tuning of these rows picks; the rows the rule does
// not rank (failed, no finite median) follow in their given order.
void order_by_winner_rule(std::vector<CacheRow>& rows);

// One entry per key of rows ordered as order_by_winner_rule leaves them (the first ok row of a
// key is its best).
std::vector<CacheEntry> summarize_entries(const std::vector<CacheRow>& rows);

}  // namespace tune::cache
