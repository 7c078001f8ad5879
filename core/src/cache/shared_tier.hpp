// The shared tier: TUNE_STORE names a server that the process-wide store puts behind the local
// file (tune/postgres_store.hpp, the optional tune::postgresql component). The core knows only
// this entry point: the component defines postgres_tier_entry() and, when it is linked (tune::tune
// links it when built), default_store() composes through it; otherwise a TUNE_STORE naming a
// server is one warning and the local file alone is used.
//
// Thread safety: with_shared_tier reads the environment and is called once, by default_store().
#pragma once

#include <memory>
#include <string>

#include "tune/sqlite_store.hpp"
#include "tune/store.hpp"

namespace tune {
namespace detail {

// Opens the store for `url` (TUNE_STORE's value) with `local` in front (null when TUNE_CACHE is
// off); `mode` is TUNE_CACHE's. Never fails: an unusable server is a warning and a store that
// works from the local file.
using SharedTierOpener = std::shared_ptr<TuningStore> (*)(std::shared_ptr<SqliteStore> local,
                                                          CacheMode mode, const std::string& url);
struct SharedTierEntry {
  SharedTierOpener open = nullptr;
};
// Defined by tune::postgresql (stores/postgresql/src/tier_entry.cpp); null when not linked.
[[gnu::weak]] SharedTierEntry postgres_tier_entry();

}  // namespace detail

// Whether `url` names a PostgreSQL server: "postgresql://" or "postgres://".
bool is_postgres_url(const std::string& url) noexcept;

// `local` as TUNE_STORE asks: unchanged when TUNE_STORE is unset or empty; else the shared
// store for it (see SharedTierOpener), or `local` with one warning when TUNE_STORE's scheme is
// unknown or this libtune was built without its component.
std::shared_ptr<TuningStore> with_shared_tier(std::shared_ptr<SqliteStore> local);

}  // namespace tune
