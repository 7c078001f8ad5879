// open_shared_store, and the entry through which default_store() composes TUNE_STORE
// (cache/shared_tier.hpp): linking this component defines it.
#include <utility>

#include "cache/shared_tier.hpp"
#include "tune/log.hpp"
#include "tune/postgres_store.hpp"

namespace tune {

Result<std::shared_ptr<SharedStore>> open_shared_store(std::shared_ptr<SqliteStore> local,
                                                       const std::string& url, CacheMode mode) {
  if (!is_postgres_url(url))
    return Status(StatusCode::invalid_argument,
                  "a shared store's address must start with postgresql:// or postgres://");
  PostgresOptions opts;
  opts.conninfo = url;
  opts.read_only = mode != CacheMode::readwrite;
  return SharedStore::open(std::move(local), PostgresStore::open(std::move(opts)));
}

namespace detail {
namespace {

std::shared_ptr<TuningStore> open_for_environment(std::shared_ptr<SqliteStore> local,
                                                  CacheMode mode, const std::string& url) {
  if (mode == CacheMode::off) return nullptr;  // TUNE_CACHE=off: nothing read or written
  Result<std::shared_ptr<SharedStore>> s = open_shared_store(local, url, mode);
  if (s.ok()) return *s;
  log_warning("TUNE_STORE: " + s.status().message() + "; using the local file only");
  return local;
}

}  // namespace

SharedTierEntry postgres_tier_entry() { return SharedTierEntry{&open_for_environment}; }

}  // namespace detail
}  // namespace tune
