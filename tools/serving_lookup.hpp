// What the library's lookup serves for a key, as the `tune` commands that explain it see it:
// the user's database and the bundles stacked as an application stacks them (stack_stores),
// and the first level of the lookup that holds a decision for a device and toolchain: an
// exact row (the database's or a bundle's), else the device-family fallback chain's first
// level (fallback_candidates). Shared by `tune bundle explain` and `tune cache explain`, so
// that both say what a run of the application would take.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "tune/sqlite_store.hpp"
#include "tune/store.hpp"

namespace tune::cli {

// The user's database (read-only; null when the file does not exist) under the bundles given
// and those of TUNE_BUNDLES, stacked as an Autotuner stacks them.
struct LookupStack {
  std::string db_path;  // the file looked at, "" when no cache path is known
  std::shared_ptr<SqliteStore> db;
  std::vector<std::string> bundles;  // the given ones, then TUNE_BUNDLES'
  std::shared_ptr<TuningStore> stack;
};
// `db` empty takes the TUNE_CACHE_DIR one. Never creates the file. A damaged bundle is
// warned about (naming it) and skipped by the stack, as in an application.
LookupStack open_lookup_stack(const std::string& db, std::vector<std::string> bundles);

using KeyId = std::tuple<std::string, std::uint64_t, std::string, std::string, std::string>;
KeyId id_of(const StoreKey& k);
// The keys `f` selects in the database and in every bundle that can be read; an error names
// the database when its rows cannot be read (damaged tables behind a valid header).
Result<std::map<KeyId, StoreKey>> selected_keys(const LookupStack& s, const CacheFilter& f);

// The winner rule's pick among `rows` (the library's, through an in-memory store); "" when
// none is ok.
std::string winner_of(const StoreKey& key, const std::vector<StoredResult>& rows);

// The first level of the lookup that holds a decision for `want` (its device and toolchain):
// level "exact" with the database's or a bundle's winner ("" when every row of it failed),
// else the chain's first level
// ("same device", "same architecture", "same vendor"). Empty level: neither holds one, and a
// run decides at run time (nearest key or default configuration).
struct Served {
  std::string level;
  std::string config;
  std::string decided_on;  // the device fingerprint whose decision it is
  std::string origin;      // the bundle it was read from; "" for the user's database
};
Served served_from_stores(TuningStore* stack, const StoreKey& want);

}  // namespace tune::cli
