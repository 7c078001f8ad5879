// What the environment asks of the tuning cache: TUNE_CACHE (whether and how it is used) and
// TUNE_CACHE_DIR / XDG_CACHE_HOME / HOME (where it lives). The public side (CacheMode,
// cache_mode_from_env, default_cache_path, open_store_from_env) is in tune/sqlite_store.hpp;
// this is the parser behind it, shared with the tests.
//
// Pure functions over their arguments; safe to call from any thread.
#pragma once

#include <string_view>

#include "tune/sqlite_store.hpp"

namespace tune {

// Parses "off", "readonly", "readwrite" (also "0"/"1", "false"/"true", "no"/"yes", "on",
// "ro"/"rw", "read-only"/"read-write", any case). False, `out` untouched, for anything else.
bool parse_cache_mode(std::string_view text, CacheMode* out) noexcept;

}  // namespace tune
