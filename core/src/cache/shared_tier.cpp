// TUNE_STORE: the shared tier behind the local file. See shared_tier.hpp.
#include "cache/shared_tier.hpp"

#include <utility>

#include "tune/environment.hpp"
#include "tune/log.hpp"

namespace tune {

bool is_postgres_url(const std::string& url) noexcept {
  return url.starts_with("postgresql://") || url.starts_with("postgres://");
}

std::shared_ptr<TuningStore> with_shared_tier(std::shared_ptr<SqliteStore> local) {
  const std::string url = env_text("TUNE_STORE");
  if (url.empty()) return local;
  if (!is_postgres_url(url)) {
    // Not echoed: the value may hold credentials.
    log_warning(
        "TUNE_STORE is not a postgresql:// or postgres:// connection string; using the local "
        "file only");
    return local;
  }
  if (&detail::postgres_tier_entry == nullptr || detail::postgres_tier_entry().open == nullptr) {
    log_warning(
        "TUNE_STORE names a PostgreSQL server but this libtune was built without its "
        "PostgreSQL component (CMake option TUNE_POSTGRESQL); using the local file only");
    return local;
  }
  return detail::postgres_tier_entry().open(std::move(local), cache_mode_from_env(), url);
}

}  // namespace tune
