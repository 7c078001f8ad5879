#include "serving_lookup.hpp"

#include <filesystem>
#include <utility>

#include "tune/bundle.hpp"
#include "tune/fallback.hpp"

namespace tune::cli {

LookupStack open_lookup_stack(const std::string& db, std::vector<std::string> bundles) {
  LookupStack s;
  s.db_path = db.empty() ? default_cache_path() : db;
  if (!s.db_path.empty() && std::filesystem::exists(s.db_path)) {
    SqliteStore::Options opts;
    opts.mode = CacheMode::readonly;
    s.db = SqliteStore::open(s.db_path, opts);
  }
  for (std::string& b : bundle_paths_from_env()) bundles.push_back(std::move(b));
  s.bundles = std::move(bundles);
  s.stack = stack_stores(s.db, s.bundles);
  return s;
}

KeyId id_of(const StoreKey& k) { return {k.kernel, k.source_hash, k.key, k.device, k.toolchain}; }

Result<std::map<KeyId, StoreKey>> selected_keys(const LookupStack& s, const CacheFilter& f) {
  std::map<KeyId, StoreKey> keys;
  if (s.db) {
    Result<std::vector<CacheRow>> rows = s.db->rows(f);
    if (!rows.ok()) return Status(rows.status()).with_context("database " + s.db_path);
    for (const CacheRow& r : *rows) keys.emplace(id_of(r.key), r.key);
  }
  for (const std::string& b : s.bundles) {
    Result<BundleInfo> info = read_bundle(b);
    if (!info.ok()) continue;  // the stack warns about it, naming the file
    for (const BundleDecision& d : info->decisions)
      if (f.matches(d.key)) keys.emplace(id_of(d.key), d.key);
  }
  return keys;
}

std::string winner_of(const StoreKey& key, const std::vector<StoredResult>& rows) {
  auto ranked = SqliteStore::open(":memory:");
  ranked->save(key, rows);
  Result<std::vector<CacheEntry>> entries = ranked->list_entries();
  return entries.ok() && !entries->empty() ? entries->front().best_config : std::string();
}

Served served_from_stores(TuningStore* stack, const StoreKey& want) {
  Served s;
  if (stack == nullptr) return s;
  const std::vector<StoredResult> own = stack->load(want);
  if (!own.empty()) {
    s.config = winner_of(want, own);
    for (const StoredResult& r : own)
      if (r.config == s.config) s.origin = r.origin;
    s.level = "exact";
    s.decided_on = want.device;
    return s;
  }
  if (auto c = fallback_candidates(stack, want); !c.empty()) {
    s.level = std::string(to_string(c.front().level));
    s.config = c.front().config;
    s.decided_on = c.front().device;
    s.origin = c.front().origin;
  }
  return s;
}

}  // namespace tune::cli
