#include "winner_rule.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>

namespace tune::detail {

std::vector<std::size_t> rank_by_winner_rule(std::span<const RuledResult> results,
                                             double tolerance) {
  std::vector<std::size_t> order;
  double fastest = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    if (!r.ok || !std::isfinite(r.median)) continue;
    if (order.empty() || r.median < fastest) fastest = r.median;
    order.push_back(i);
  }
  // Equivalent to the fastest: compared by canonical text alone, so that noise within the
  // tolerance never decides.
  const double bound = fastest * (1.0 + std::max(tolerance, 0.0));
  const auto tied = [&](std::size_t i) { return results[i].median <= bound; };
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const bool ta = tied(a), tb = tied(b);
    if (ta != tb) return ta;
    if (!ta) {
      const double ma = results[a].median, mb = results[b].median;
      if (ma != mb) return ma < mb;
    }
    if (results[a].config != results[b].config) return results[a].config < results[b].config;
    return a < b;
  });
  return order;
}

std::vector<std::size_t> rank_by_winner_rule(const std::vector<ConfigResult>& results,
                                             double tolerance) {
  // The texts live here while the rule reads them.
  std::vector<std::string> text(results.size());
  std::vector<RuledResult> ruled(results.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    const bool ok = r.status.ok() && std::isfinite(r.stats.median);
    if (ok) text[i] = r.config.to_string();  // only the ranked ones are ever compared
    ruled[i] = RuledResult{text[i], r.stats.median, ok};
  }
  return rank_by_winner_rule(ruled, tolerance);
}

}  // namespace tune::detail
