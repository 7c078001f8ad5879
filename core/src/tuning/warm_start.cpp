// See warm_start.hpp.
#include "warm_start.hpp"

#include <algorithm>
#include <map>
#include <string>

namespace tune::detail {
namespace {

// Configurations in priority order, newest first within a group.
struct Ranked {
  std::vector<std::string> configs;
  std::int64_t newest = 0;
};

// Orders `groups` newest first and flattens them.
std::vector<std::string> newest_first(std::map<std::string, Ranked> groups) {
  std::vector<Ranked> ordered;
  for (auto& [name, g] : groups)
    if (!g.configs.empty()) ordered.push_back(std::move(g));
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const Ranked& a, const Ranked& b) { return a.newest > b.newest; });
  std::vector<std::string> out;
  for (const Ranked& g : ordered) out.insert(out.end(), g.configs.begin(), g.configs.end());
  return out;
}

// The winners of the kernel's other keys on `key.device`, newest key first. find_rows() gives each
// key's rows in the winner rule's order: a key's first row is its winner when it is ok.
std::vector<std::string> other_keys_winners(TuningStore& store, const StoreKey& key) {
  CacheFilter filter;
  filter.kernel = key.kernel;
  filter.device = key.device;
  std::map<std::string, Ranked> keys;  // by key text
  std::map<std::string, bool> decided;
  for (const CacheRow& row : store.find_rows(filter)) {
    if (row.key.device != key.device || row.key.key == key.key) continue;
    Ranked& k = keys[row.key.key];
    if (decided.emplace(row.key.key, true).second && row.result.status == StatusCode::ok)
      k.configs.push_back(row.result.config);
    k.newest = std::max(k.newest, row.result.unix_time);
  }
  return newest_first(std::move(keys));
}

// The best kPerOtherDevice configurations of the same key on every other device, in that
// device's ranking (the winner rule's order among its ok rows), newest device first.
std::vector<std::string> other_devices_rankings(TuningStore& store, const StoreKey& key) {
  CacheFilter filter;
  filter.kernel = key.kernel;
  filter.key = key.key;
  std::map<std::string, Ranked> devices;  // by device fingerprint
  for (const CacheRow& row : store.find_rows(filter)) {
    if (row.key.device == key.device || row.key.key != key.key) continue;
    Ranked& d = devices[row.key.device];
    if (row.result.status == StatusCode::ok && d.configs.size() < kPerOtherDevice)
      d.configs.push_back(row.result.config);
    d.newest = std::max(d.newest, row.result.unix_time);
  }
  return newest_first(std::move(devices));
}

}  // namespace

std::vector<Config> warm_start_points(TuningStore* store, const StoreKey& key) {
  if (store == nullptr) return {};
  std::vector<std::string> texts = other_keys_winners(*store, key);
  const std::vector<std::string> others = other_devices_rankings(*store, key);
  texts.insert(texts.end(), others.begin(), others.end());
  std::vector<Config> out;
  std::vector<std::string> seen;
  for (const std::string& text : texts) {
    if (out.size() >= kWarmStartPoints) break;
    if (std::find(seen.begin(), seen.end(), text) != seen.end()) continue;
    auto parsed = Config::parse(text);
    if (!parsed.ok()) continue;
    seen.push_back(text);
    out.push_back(std::move(*parsed));
  }
  return out;
}

}  // namespace tune::detail
