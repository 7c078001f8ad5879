#include "tune/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <vector>

namespace tune {
namespace {
double sorted_quantile(const std::vector<double>& v, double q) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  q = std::clamp(q, 0.0, 1.0);
  double pos = q * static_cast<double>(v.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(pos));
  std::size_t hi = std::min(lo + 1, v.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return v[lo] + (v[hi] - v[lo]) * frac;
}

std::string format_ns(double ns) {
  char buf[64];
  if (!std::isfinite(ns))
    std::snprintf(buf, sizeof buf, "inf");
  else if (ns >= 1e6)
    std::snprintf(buf, sizeof buf, "%.3f ms", ns / 1e6);
  else if (ns >= 1e3)
    std::snprintf(buf, sizeof buf, "%.2f us", ns / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.0f ns", ns);
  return buf;
}
}  // namespace

double quantile(std::span<const double> samples, double q) {
  std::vector<double> v(samples.begin(), samples.end());
  std::sort(v.begin(), v.end());
  return sorted_quantile(v, q);
}

SampleStats summarize(std::span<const double> samples) {
  SampleStats s;
  if (samples.empty()) return s;
  std::vector<double> v(samples.begin(), samples.end());
  std::sort(v.begin(), v.end());
  s.count = static_cast<std::uint32_t>(v.size());
  s.min = v.front();
  s.max = v.back();
  s.p20 = sorted_quantile(v, 0.2);
  s.median = sorted_quantile(v, 0.5);
  s.p80 = sorted_quantile(v, 0.8);
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  return s;
}

bool clearly_faster(const SampleStats& a, const SampleStats& b) noexcept {
  return a.count > 0 && b.count > 0 && a.p80 < b.p20;
}

std::string SampleStats::to_string() const {
  if (count == 0) return "no samples";
  return "median " + format_ns(median) + " [p20 " + format_ns(p20) + ", p80 " + format_ns(p80) +
         "] n=" + std::to_string(count);
}

}  // namespace tune

namespace tune {

Interval median_interval(std::span<const double> samples, double confidence) {
  std::vector<double> v(samples.begin(), samples.end());
  if (v.empty())
    return {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()};
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  const double alpha = (1.0 - confidence) / 2.0;
  // Walk the Binomial(n, 1/2) CDF in log space: P(X < k) = sum_{i<k} C(n,i) 2^-n.
  const double log_half_n = -static_cast<double>(n) * std::log(2.0);
  double cdf = 0.0;
  std::size_t k = 0;  // 0 means "no order statistic qualifies": use [min, max]
  // log C(n, i) built up term by term (std::lgamma writes the global signgam: not
  // thread-safe, and tunings of different keys run concurrently).
  double log_c = 0.0;  // log C(n, 0)
  for (std::size_t i = 0; i < n / 2; ++i) {
    if (i > 0) log_c += std::log(static_cast<double>(n - i + 1)) - std::log(static_cast<double>(i));
    cdf += std::exp(log_c + log_half_n);  // now P(X <= i) = P(X < i + 1)
    if (cdf > alpha) break;
    k = i + 1;
  }
  if (k == 0) return {v.front(), v.back()};
  return {v[k - 1], v[n - k]};
}

}  // namespace tune
