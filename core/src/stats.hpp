// Sample statistics of repeated timings, in one place for every backend (internal: not
// installed; the public result type is tune/sample_stats.hpp's SampleStats).
#pragma once

#include <cstddef>
#include <span>

#include "tune/sample_stats.hpp"

namespace tune {

// Linear-interpolated quantile (q in [0,1]) of unsorted samples; NaN for none.
double quantile(std::span<const double> samples, double q);
SampleStats summarize(std::span<const double> samples);

// Whether `a` is faster than `b` beyond noise: a.p80 < b.p20 (their central 60% bands do not
// overlap). Differences smaller than the spread are noise.
bool clearly_faster(const SampleStats& a, const SampleStats& b) noexcept;

// The probability that `a`'s true median is below `b`'s, from their summaries alone: each
// median's standard error taken as sqrt(pi/2) sigma / sqrt(count), sigma estimated from the
// p20-p80 band (0.8416 sigma either side of a normal median), the difference normal. 1 or 0
// (0.5 for equal medians) when neither has spread; NaN when either has no samples.
double probability_faster(const SampleStats& a, const SampleStats& b) noexcept;

// A distribution-free confidence interval for the median: the order statistics
// [x_(k), x_(n+1-k)] with k the largest rank such that P(Binomial(n, 1/2) < k) <= (1-conf)/2.
// With too few samples for that confidence the interval is [min, max].
struct Interval {
  double lo = 0, hi = 0;
};
Interval median_interval(std::span<const double> samples, double confidence);

// The standard normal distribution's quantile: the x with P(Z <= x) = p, for p in (0, 1)
// (Acklam's rational approximation, refined by one Halley step on the lower tail, mirrored for
// p > 1/2: about 1e-16 relative);
// -inf at 0, +inf at 1, NaN outside [0, 1].
double normal_quantile(double p);

// Student's t distribution's quantile with `dof` degrees of freedom: the x with P(T <= x) = p,
// for p in (0, 1). Exact for 1 and 2 degrees of freedom, the Cornish-Fisher expansion to the
// fourth order in 1/dof above: within 0.1% of the tables for p up to 0.95, 0.12% low at 0.975
// and 3 degrees of freedom, 0.4% low at 0.99 and 3, within 0.1% from 5.
// NaN for dof 0 or p outside (0, 1). A mean of few samples whose spread is estimated from
// those samples needs this, not the normal quantile: at p = 0.95 and one degree of freedom
// it is 6.31, not 1.645.
double student_t_quantile(double p, std::size_t dof);

}  // namespace tune
