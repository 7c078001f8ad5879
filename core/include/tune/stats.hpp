// Sample statistics of repeated timings, in one place for every backend.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace tune {

struct SampleStats {
  std::uint32_t count = 0;
  double min = 0, p20 = 0, median = 0, p80 = 0, max = 0, mean = 0;
  // Relative spread (p80 - p20) / median: the noise band of this configuration.
  double spread() const noexcept { return median > 0 ? (p80 - p20) / median : 0.0; }
  std::string to_string() const;  // "median 12.3 us [p20 12.1, p80 12.9] n=40"
};

// Linear-interpolated quantile (q in [0,1]) of unsorted samples; NaN for none.
double quantile(std::span<const double> samples, double q);
SampleStats summarize(std::span<const double> samples);

// Whether `a` is faster than `b` beyond noise: a.p80 < b.p20 (their central 60% bands do not
// overlap). Differences smaller than the spread are noise.
bool clearly_faster(const SampleStats& a, const SampleStats& b) noexcept;

// A distribution-free confidence interval for the median: the order statistics
// [x_(k), x_(n+1-k)] with k the largest rank such that P(Binomial(n, 1/2) < k) <= (1-conf)/2.
// With too few samples for that confidence the interval is [min, max].
struct Interval {
  double lo = 0, hi = 0;
};
Interval median_interval(std::span<const double> samples, double confidence);

}  // namespace tune
