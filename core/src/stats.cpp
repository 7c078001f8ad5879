#include "stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
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

double probability_faster(const SampleStats& a, const SampleStats& b) noexcept {
  if (a.count == 0 || b.count == 0) return std::numeric_limits<double>::quiet_NaN();
  auto variance = [](const SampleStats& s) {
    const double sigma = (s.p80 - s.p20) / (2 * 0.8416);
    const double se = std::sqrt(std::numbers::pi / 2) * sigma / std::sqrt(double(s.count));
    return se * se;
  };
  const double spread = std::sqrt(variance(a) + variance(b));
  const double gap = b.median - a.median;
  if (!(spread > 0)) return gap > 0 ? 1.0 : gap < 0 ? 0.0 : 0.5;
  return 0.5 * std::erfc(-gap / (spread * std::numbers::sqrt2));
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

double normal_quantile(double p) {
  if (!(p >= 0 && p <= 1)) return std::numeric_limits<double>::quiet_NaN();
  if (p == 0) return -std::numeric_limits<double>::infinity();
  if (p == 1) return std::numeric_limits<double>::infinity();
  // The upper half by symmetry: 1 - p is exact there, and P(Z <= x) - p below stays free of
  // the cancellation between two numbers close to 1.
  if (p > 0.5) return -normal_quantile(1 - p);
  // Acklam's coefficients: a relative error below 1.15e-9 before the refinement.
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                 -2.759285104469687e+02, 1.383577518672690e+02,
                                 -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                 -1.556989798598866e+02, 6.680131188771972e+01,
                                 -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                 -2.400758277161838e+00, -2.549732539343734e+00,
                                 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                                 2.445134137142996e+00, 3.754408661907416e+00};
  constexpr double kLow = 0.02425;
  double x = 0;
  if (p < kLow) {
    const double q = std::sqrt(-2 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else {
    const double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  }
  // One Halley step on P(Z <= x) - p.
  const double e = 0.5 * std::erfc(-x / std::sqrt(2.0)) - p;
  const double u = e * std::sqrt(2 * std::numbers::pi) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

double student_t_quantile(double p, std::size_t dof) {
  if (dof == 0 || !(p > 0 && p < 1)) return std::numeric_limits<double>::quiet_NaN();
  if (dof == 1) return std::tan(std::numbers::pi * (p - 0.5));
  if (dof == 2) return (2 * p - 1) / std::sqrt(2 * p * (1 - p));
  // Cornish-Fisher: t = z + g1/v + g2/v^2 + g3/v^3 + g4/v^4 (Abramowitz and Stegun 26.7.5).
  const double z = normal_quantile(p), v = static_cast<double>(dof);
  const double z2 = z * z, z3 = z2 * z, z5 = z3 * z2, z7 = z5 * z2, z9 = z7 * z2;
  const double g1 = (z3 + z) / 4;
  const double g2 = (5 * z5 + 16 * z3 + 3 * z) / 96;
  const double g3 = (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / 384;
  const double g4 = (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) / 92160;
  return z + g1 / v + g2 / (v * v) + g3 / (v * v * v) + g4 / (v * v * v * v);
}

}  // namespace tune
