// LayeredStore: the user's store, then bundles. See layered_store.hpp.
#include "cache/layered_store.hpp"

#include <set>
#include <string>
#include <utility>

namespace tune::cache {

std::vector<StoredResult> LayeredStore::load(const StoreKey& key) {
  std::vector<StoredResult> rows;
  if (user_) rows = user_->load(key);
  std::set<std::string> have;
  for (const StoredResult& r : rows) have.insert(r.config);
  for (const auto& b : bundles_) {
    for (StoredResult& r : b->load(key))
      if (have.insert(r.config).second) rows.push_back(std::move(r));
  }
  return rows;
}

void LayeredStore::save(const StoreKey& key, std::span<const StoredResult> rows) {
  if (user_) user_->save(key, rows);
}

bool LayeredStore::try_claim(const StoreKey& key, std::chrono::milliseconds ttl) {
  return user_ ? user_->try_claim(key, ttl) : true;
}

void LayeredStore::release_claim(const StoreKey& key) {
  if (user_) user_->release_claim(key);
}

}  // namespace tune::cache

namespace tune {

std::shared_ptr<TuningStore> stack_stores(std::shared_ptr<TuningStore> user,
                                          std::span<const std::string> bundles) {
  if (bundles.empty()) return user;
  std::vector<std::shared_ptr<const cache::BundleFile>> opened;
  for (const std::string& path : bundles)
    if (auto b = cache::BundleFile::open_shared(path)) opened.push_back(std::move(b));
  return std::make_shared<cache::LayeredStore>(std::move(user), std::move(opened));
}

}  // namespace tune
