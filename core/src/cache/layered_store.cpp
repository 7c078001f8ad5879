// LayeredStore: the user's store, then bundles. See layered_store.hpp.
#include "cache/layered_store.hpp"

#include <map>
#include <set>
#include <string>
#include <utility>

#include "cache/cache_entries.hpp"

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

std::vector<CacheRow> LayeredStore::find_rows(const CacheFilter& filter) {
  std::map<KeyTuple, std::vector<CacheRow>> by_key;
  std::set<std::pair<KeyTuple, std::string>> have;  // (key, config) already served
  auto add = [&](CacheRow row) {
    KeyTuple k = key_tuple(row.key);
    if (have.emplace(k, row.result.config).second) by_key[k].push_back(std::move(row));
  };
  if (user_)
    for (CacheRow& r : user_->find_rows(filter)) add(std::move(r));
  for (const auto& b : bundles_)
    for (const CacheRow& r : b->rows())
      if (filter.matches(r.key)) add(r);
  std::vector<CacheRow> out;
  for (auto& [k, rows] : by_key)
    for (CacheRow& r : rows) out.push_back(std::move(r));
  order_by_winner_rule(out);
  return out;
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
