// What the environment asks of the tuning cache: TUNE_CACHE (whether and how it is used) and
// TUNE_CACHE_DIR / XDG_CACHE_HOME / HOME (where it lives), TUNE_BUNDLES (read-only layers), and
// the stack of stores they compose (build_store_stack). The public side (CacheMode,
// cache_mode_from_env, default_cache_path, open_store_from_env) is in tune/sqlite_store.hpp;
// this is the parser behind it, shared with the tests.
//
// Safe to call from any thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tune/sqlite_store.hpp"

namespace tune {

// Parses "off", "readonly", "readwrite" (also "0"/"1", "false"/"true", "no"/"yes", "on",
// "ro"/"rw", "read-only"/"read-write", any case). False, `out` untouched, for anything else.
bool parse_cache_mode(std::string_view text, CacheMode* out) noexcept;

// What the stack of decision layers is built from (AutotunerOptions::store, persistent and
// bundles).
struct StoreStackRequest {
  std::shared_ptr<TuningStore> store;  // the user's read-write store; null: as `persistent` says
  bool persistent = true;              // null `store`: default_store() when true, else none
  std::vector<std::string> bundles;    // read-only bundles, before TUNE_BUNDLES's
};

// THE composition point of decision layers, the one function every lookup's store comes from
// (the Autotuner's, `tune cache explain`'s): the user's store (request.store, else
// default_store() when persistent), then request.bundles, then TUNE_BUNDLES (stack_stores in
// tune/bundle.hpp). A new layer (a shared server store, a fallback chain) is added here.
std::shared_ptr<TuningStore> build_store_stack(const StoreStackRequest& request);

}  // namespace tune
