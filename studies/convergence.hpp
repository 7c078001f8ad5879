// How fast a search converges, from its history (tune::SearchResult::history) against a known
// optimum: evaluations until the best found is within a tolerance, best / optimum after n
// evaluations, and the same figures for uniform random sampling without replacement computed
// exactly (no sampling) from the space's values. Used by search_eval; header-only.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace convergence {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// Evaluations until the best value so far is <= optimum * (1 + tol); +inf when never.
inline double evals_to_within(const std::vector<std::pair<std::uint64_t, double>>& history,
                              double optimum, double tol) {
  const double goal = optimum * (1 + tol);
  for (std::size_t n = 0; n < history.size(); ++n)
    if (history[n].second <= goal) return static_cast<double>(n + 1);
  return kInf;
}

// Best value so far / optimum after `n` evaluations (after all of them when fewer).
inline double best_ratio_after(const std::vector<std::pair<std::uint64_t, double>>& history,
                               double optimum, std::size_t n) {
  double best = kInf;
  for (std::size_t k = 0; k < history.size() && k < n; ++k)
    best = std::min(best, history[k].second);
  return best / optimum;
}

// The median (mean of the two middle values) and the 90th percentile (nearest rank) of `v`;
// +inf entries (never reached) sort last. Out of line: inlined into a caller, GCC 12 reports a
// false free-nonheap-object on the copy.
[[gnu::noinline]] inline double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size();
  return (v[(m - 1) / 2] + v[m / 2]) / 2;
}
[[gnu::noinline]] inline double p90(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const std::size_t rank = static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(v.size())));
  return v[std::max<std::size_t>(rank, 1) - 1];
}

// Uniform sampling without replacement of N points of which k are "hits": P(no hit in t draws).
inline double miss_probability(std::uint64_t n_points, std::uint64_t k_hits, std::uint64_t t) {
  if (t > n_points - k_hits) return 0;
  double log_p = 0;
  for (std::uint64_t j = 0; j < t; ++j)
    log_p +=
        std::log(static_cast<double>(n_points - k_hits - j) / static_cast<double>(n_points - j));
  return std::exp(log_p);
}

// Random sampling's draws until the first hit: its expectation (N + 1) / (k + 1), and the
// smallest t with P(no hit in t) <= 1 - q (q = 0.5: the median, 0.9: the 90th percentile).
struct RandomFigures {
  double expected = kInf, median = kInf, p90 = kInf;
};
inline RandomFigures random_draws_to_hit(std::uint64_t n_points, std::uint64_t k_hits) {
  RandomFigures r;
  if (k_hits == 0) return r;
  r.expected = static_cast<double>(n_points + 1) / static_cast<double>(k_hits + 1);
  auto quantile = [&](double q) {
    std::uint64_t lo = 1, hi = n_points - k_hits + 1;  // hi: a hit is certain
    while (lo < hi) {
      const std::uint64_t mid = lo + (hi - lo) / 2;
      if (miss_probability(n_points, k_hits, mid) <= 1 - q)
        hi = mid;
      else
        lo = mid + 1;
    }
    return static_cast<double>(lo);
  };
  r.median = quantile(0.5);
  r.p90 = quantile(0.9);
  return r;
}

// Random sampling's median best / optimum after n draws from `values` (all N points' values,
// +inf for failures): the j-th smallest value for the smallest j with P(best rank > j) <= 0.5.
inline double random_median_ratio(std::vector<double> values, std::uint64_t n, double optimum) {
  std::sort(values.begin(), values.end());
  const std::uint64_t total = values.size();
  if (n >= total) return values.front() / optimum;
  for (std::uint64_t j = 1; j <= total; ++j)
    if (miss_probability(total, j, n) <= 0.5) return values[j - 1] / optimum;
  return values.back() / optimum;
}

}  // namespace convergence
