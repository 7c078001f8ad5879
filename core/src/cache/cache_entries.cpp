// The rows as `tune cache` presents them. See cache_entries.hpp.
#include "cache/cache_entries.hpp"

#include <algorithm>
#include <utility>

#include "timing_policy.hpp"
#include "tuning/winner_rule.hpp"

namespace tune {

bool CacheFilter::matches(const StoreKey& k) const noexcept {
  return (kernel.empty() || kernel == k.kernel) && (key.empty() || key == k.key) &&
         (device.empty() || k.device.find(device) != std::string::npos);
}

}  // namespace tune

namespace tune::cache {

bool is_bookkeeping(const StoreKey& key) noexcept {
  return !key.key.empty() && key.key.front() == kBookkeepingMark;
}

void drop_bookkeeping(std::vector<CacheRow>& rows) {
  std::erase_if(rows, [](const CacheRow& r) { return is_bookkeeping(r.key); });
}

bool same_key(const StoreKey& a, const StoreKey& b) noexcept {
  return a.kernel == b.kernel && a.key == b.key && a.device == b.device &&
         a.toolchain == b.toolchain && a.source_hash == b.source_hash;
}

void order_by_winner_rule(std::vector<CacheRow>& rows) {
  const double tolerance = TimingPolicy{}.tie_tolerance;
  for (std::size_t i = 0; i < rows.size();) {
    std::size_t end = i;
    while (end < rows.size() && same_key(rows[end].key, rows[i].key)) ++end;
    std::vector<detail::RuledResult> ruled;
    for (std::size_t r = i; r < end; ++r) {
      const StoredResult& res = rows[r].result;
      ruled.push_back({res.config, res.stats.median, res.status == StatusCode::ok});
    }
    std::vector<std::size_t> order = detail::rank_by_winner_rule(ruled, tolerance);
    std::vector<bool> ranked(ruled.size(), false);
    for (std::size_t k : order) ranked[k] = true;
    for (std::size_t k = 0; k < ruled.size(); ++k)
      if (!ranked[k]) order.push_back(k);
    std::vector<CacheRow> key_rows;
    for (std::size_t k : order) key_rows.push_back(std::move(rows[i + k]));
    std::move(key_rows.begin(), key_rows.end(), rows.begin() + static_cast<std::ptrdiff_t>(i));
    i = end;
  }
}

std::vector<CacheEntry> summarize_entries(const std::vector<CacheRow>& rows) {
  std::vector<CacheEntry> out;
  for (const CacheRow& r : rows) {
    const StoreKey& k = r.key;
    if (out.empty() || !same_key(out.back().key, k)) {
      out.push_back(CacheEntry{k, {}, {}, 0, 0, 0, 0, false, std::nullopt});
    }
    CacheEntry& e = out.back();
    ++e.rows;
    e.newest_time = std::max(e.newest_time, r.result.unix_time);
    if (const auto& d = r.result.decision;
        d && (!e.decision || d->unix_time > e.decision->unix_time))
      e.decision = d;
    if (r.result.status != StatusCode::ok) {
      ++e.failed;
      continue;
    }
    if (r.result.verified) ++e.verified;
    if (e.best_config.empty()) {  // rows() puts the winner rule's pick first
      e.best_config = r.result.config;
      e.best_stats = r.result.stats;
      e.best_verified = r.result.verified;
    }
  }
  return out;
}

}  // namespace tune::cache
