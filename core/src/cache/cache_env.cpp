// TUNE_CACHE and the cache's path, and the store they ask for. See cache_env.hpp and
// tune/sqlite_store.hpp.
#include "cache/cache_env.hpp"

#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>

#include "cache/db_file.hpp"
#include "cache/shared_tier.hpp"
#include "tune/bundle.hpp"
#include "tune/environment.hpp"
#include "tune/log.hpp"

namespace tune {

namespace fs = std::filesystem;

std::string_view to_string(CacheMode mode) noexcept {
  switch (mode) {
    case CacheMode::off:
      return "off";
    case CacheMode::readonly:
      return "readonly";
    case CacheMode::readwrite:
      return "readwrite";
  }
  return "unknown";
}

bool parse_cache_mode(std::string_view text, CacheMode* out) noexcept {
  std::string t;
  for (char c : text) t += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (t == "off" || t == "0" || t == "false" || t == "no") {
    *out = CacheMode::off;
  } else if (t == "readonly" || t == "ro" || t == "read-only") {
    *out = CacheMode::readonly;
  } else if (t == "readwrite" || t == "rw" || t == "read-write" || t == "1" || t == "true" ||
             t == "on" || t == "yes") {
    *out = CacheMode::readwrite;
  } else {
    return false;
  }
  return true;
}

CacheMode cache_mode_from_env() {
  const std::string v = env_text("TUNE_CACHE");
  if (v.empty()) return CacheMode::readwrite;
  CacheMode m;
  if (parse_cache_mode(v, &m)) return m;
  log_warning("TUNE_CACHE='" + v + "' is not one of off, readonly, readwrite; using readwrite");
  return CacheMode::readwrite;
}

std::string default_cache_path() {
  auto nonempty = [](const char* name) -> const char* {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' ? v : nullptr;
  };
  if (const std::string d = env_text("TUNE_CACHE_DIR"); !d.empty())
    return (fs::path(d) / "tune.db").string();
  if (const char* d = nonempty("XDG_CACHE_HOME"))
    return (fs::path(d) / "libtune" / "tune.db").string();
  if (const char* d = nonempty("HOME"))
    return (fs::path(d) / ".cache" / "libtune" / "tune.db").string();
  return {};
}

std::shared_ptr<SqliteStore> open_store_from_env() {
  CacheMode mode = cache_mode_from_env();
  if (mode == CacheMode::off) return nullptr;
  std::string path = default_cache_path();
  if (path.empty()) {
    log_warning(
        "TUNE_CACHE_DIR, XDG_CACHE_HOME and HOME are all unset: tuning results are kept in "
        "memory");
    path = std::string(cache::kMemoryPath);
  }
  SqliteStore::Options opts;
  opts.mode = mode;
  return SqliteStore::open(std::move(path), opts);
}

std::vector<std::string> bundle_paths_from_env() {
  std::vector<std::string> paths;
  const std::string v = env_text("TUNE_BUNDLES");
  std::size_t begin = 0;
  while (begin <= v.size()) {
    std::size_t end = v.find(':', begin);
    if (end == std::string::npos) end = v.size();
    if (end > begin) paths.push_back(v.substr(begin, end - begin));
    begin = end + 1;
  }
  return paths;
}

std::shared_ptr<TuningStore> build_store_stack(const StoreStackRequest& request) {
  std::shared_ptr<TuningStore> user =
      request.store ? request.store : (request.persistent ? default_store() : nullptr);
  std::vector<std::string> bundles = request.bundles;
  for (std::string& p : bundle_paths_from_env()) bundles.push_back(std::move(p));
  return stack_stores(std::move(user), bundles);
}

std::shared_ptr<TuningStore> default_store() {
  // Thread-safe lazy initialisation; opened on first use, shared by every Autotuner.
  // TUNE_STORE may put a shared server behind the local file (cache/shared_tier.hpp).
  static const std::shared_ptr<TuningStore> store = with_shared_tier(open_store_from_env());
  return store;
}

}  // namespace tune
