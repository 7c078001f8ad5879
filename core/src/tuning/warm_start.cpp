// See warm_start.hpp.
#include "warm_start.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "tune/sqlite_store.hpp"

namespace tune::detail {

std::vector<Config> warm_start_points(TuningStore* store, const StoreKey& key) {
  auto* sqlite = dynamic_cast<SqliteStore*>(store);
  if (sqlite == nullptr) return {};
  CacheFilter filter;
  filter.kernel = key.kernel;
  filter.device = key.device;
  auto rows = sqlite->rows(filter);
  if (!rows.ok()) return {};
  // rows() gives each key's rows in the winner rule's order: a key's first ok row is its
  // winner.
  struct Winner {
    std::string config;
    std::int64_t newest = 0;
  };
  std::map<std::string, Winner> winners;  // by key text
  for (const CacheRow& row : *rows) {
    if (row.key.device != key.device || row.key.key == key.key) continue;
    auto [it, first] = winners.try_emplace(row.key.key);
    if (first && row.result.status == StatusCode::ok) it->second.config = row.result.config;
    if (first && row.result.status != StatusCode::ok) it->second.config.clear();
    it->second.newest = std::max(it->second.newest, row.result.unix_time);
  }
  std::vector<Winner> ordered;
  for (auto& [text, w] : winners)
    if (!w.config.empty()) ordered.push_back(std::move(w));
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const Winner& a, const Winner& b) { return a.newest > b.newest; });
  std::vector<Config> out;
  std::vector<std::string> seen;
  for (const Winner& w : ordered) {
    if (out.size() >= kWarmStartPoints) break;
    if (std::find(seen.begin(), seen.end(), w.config) != seen.end()) continue;
    auto parsed = Config::parse(w.config);
    if (!parsed.ok()) continue;
    seen.push_back(w.config);
    out.push_back(std::move(*parsed));
  }
  return out;
}

}  // namespace tune::detail
