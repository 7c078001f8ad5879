#include "winner_rule.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace tune::detail {

std::vector<std::size_t> rank_by_winner_rule(const std::vector<ConfigResult>& results,
                                             double tolerance) {
  std::vector<std::size_t> order;
  std::vector<std::string> text(results.size());
  double fastest = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    if (!r.status.ok() || !std::isfinite(r.stats.median)) continue;
    if (order.empty() || r.stats.median < fastest) fastest = r.stats.median;
    order.push_back(i);
    text[i] = r.config.to_string();
  }
  // Equivalent to the fastest: compared by canonical text alone, so that noise within the
  // tolerance never decides.
  const double bound = fastest * (1.0 + std::max(tolerance, 0.0));
  const auto tied = [&](std::size_t i) { return results[i].stats.median <= bound; };
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const bool ta = tied(a), tb = tied(b);
    if (ta != tb) return ta;
    if (!ta) {
      const double ma = results[a].stats.median, mb = results[b].stats.median;
      if (ma != mb) return ma < mb;
    }
    if (text[a] != text[b]) return text[a] < text[b];
    return a < b;
  });
  return order;
}

}  // namespace tune::detail
