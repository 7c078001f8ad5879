#include "expected_improvement.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tune::detail {

double expected_improvement(double mean, double sd, double target) {
  constexpr double kInvSqrt2 = 0.70710678118654752440, kInvSqrt2Pi = 0.39894228040143267794;
  const double z = (target - mean) / sd;
  const double cdf = 0.5 * std::erfc(-z * kInvSqrt2);
  const double pdf = kInvSqrt2Pi * std::exp(-0.5 * z * z);
  return sd * (z * cdf + pdf);
}

namespace {

// Conditions the variances of `p` on a pseudo-observation at candidate `j`: with kj the
// posterior covariance of every candidate with j, var -= kj^2 / var_j, and kj / sqrt(var_j)
// becomes a new row of p.v (so later covariances account for this pick too).
void condition_on(const GaussianProcess& gp, Posterior& p, std::size_t j, std::vector<double>& kj) {
  gp.covariance_with(p, j, kj);
  const std::size_t m = p.count, rows = p.v.size() / std::max<std::size_t>(1, m);
  for (std::size_t r = 0; r < rows; ++r) {
    const double* vr = &p.v[r * m];
    const double f = vr[j];
    for (std::size_t c = 0; c < m; ++c) kj[c] -= f * vr[c];
  }
  const double vj = std::max(p.var[j], GaussianProcess::kMinVariance);
  const double inv = 1.0 / std::sqrt(vj);
  for (std::size_t c = 0; c < m; ++c) {
    p.var[c] = std::max(GaussianProcess::kMinVariance, p.var[c] - kj[c] * kj[c] / vj);
    p.v.push_back(kj[c] * inv);
  }
}

}  // namespace

std::vector<std::size_t> pick_by_expected_improvement(const GaussianProcess& gp, Posterior& p,
                                                      std::size_t count, double xi) {
  std::vector<std::size_t> picks;
  std::vector<char> taken(p.count, 0);
  std::vector<double> kj;
  const double target = gp.best() - xi;
  count = std::min(count, p.count);
  p.v.reserve(p.v.size() + count * p.count);
  while (picks.size() < count) {
    std::size_t best = p.count;
    double best_ei = -std::numeric_limits<double>::infinity();
    for (std::size_t c = 0; c < p.count; ++c) {
      if (taken[c]) continue;
      const double ei = expected_improvement(p.mean[c], std::sqrt(p.var[c]), target);
      if (ei > best_ei || best == p.count) best = c, best_ei = ei;
    }
    picks.push_back(best);
    taken[best] = 1;
    if (picks.size() < count) condition_on(gp, p, best, kj);
  }
  return picks;
}

}  // namespace tune::detail
