#include "gaussian_process.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "cholesky.hpp"

namespace tune::detail {
namespace {

constexpr double kSqrt5 = 2.23606797749978969640;
constexpr double kMinLengthscale = 0.03, kMaxLengthscale = 10.0;
constexpr int kSweeps = 2;

// Matern 5/2 of two points already divided by the lengthscales.
inline double matern52(const double* a, const double* b, std::size_t dims) {
  double r2 = 0;
  for (std::size_t k = 0; k < dims; ++k) {
    const double d = a[k] - b[k];
    r2 += d * d;
  }
  const double s = kSqrt5 * std::sqrt(r2);
  return (1 + s + s * s / 3) * std::exp(-s);
}

void divide_by(const std::vector<double>& x, const std::vector<double>& ls,
               std::vector<double>& out) {
  const std::size_t dims = ls.size();
  out.resize(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = x[i] / ls[i % dims];
}

}  // namespace

bool GaussianProcess::fit(const std::vector<double>& x, std::size_t dims,
                          const std::vector<double>& y, const std::vector<double>& lengthscales,
                          double noise) {
  dims_ = dims;
  n_ = y.size();
  ls_ = lengthscales;
  divide_by(x, ls_, scaled_);
  const double n = static_cast<double>(n_);
  mean_ = n_ ? std::accumulate(y.begin(), y.end(), 0.0) / n : 0.0;
  double ss = 0;
  for (double v : y) ss += (v - mean_) * (v - mean_);
  sd_ = std::max(kMinSd, n_ ? std::sqrt(ss / n) : 0.0);
  l_.assign(n_ * n_, 0.0);
  for (std::size_t i = 0; i < n_; ++i) {
    for (std::size_t j = 0; j < i; ++j)
      l_[i * n_ + j] = matern52(&scaled_[i * dims], &scaled_[j * dims], dims);
    l_[i * n_ + i] = 1 + noise;
  }
  if (!cholesky(l_, n_)) return false;
  w_.resize(n_);
  best_ = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < n_; ++i) {
    w_[i] = standardised(y[i]);
    best_ = std::min(best_, w_[i]);
  }
  solve_lower(l_, n_, w_.data());
  nll_ = 0;
  for (std::size_t i = 0; i < n_; ++i) nll_ += 0.5 * w_[i] * w_[i] + std::log(l_[i * n_ + i]);
  return true;
}

void GaussianProcess::predict(const std::vector<double>& c, Posterior& out) const {
  const std::size_t m = dims_ ? c.size() / dims_ : 0;
  out.count = m;
  divide_by(c, ls_, out.scaled);
  out.v.resize(n_ * m);
  for (std::size_t i = 0; i < n_; ++i) {
    const double* zi = &scaled_[i * dims_];
    double* vi = &out.v[i * m];
    for (std::size_t j = 0; j < m; ++j) vi[j] = matern52(zi, &out.scaled[j * dims_], dims_);
  }
  solve_lower_columns(l_, n_, out.v.data(), m);
  out.mean.assign(m, 0.0);
  out.var.assign(m, 1.0);
  for (std::size_t i = 0; i < n_; ++i) {
    const double* vi = &out.v[i * m];
    const double wi = w_[i];
    for (std::size_t j = 0; j < m; ++j) {
      out.mean[j] += wi * vi[j];
      out.var[j] -= vi[j] * vi[j];
    }
  }
  for (double& v : out.var) v = std::max(kMinVariance, v);
}

void GaussianProcess::covariance_with(const Posterior& p, std::size_t j,
                                      std::vector<double>& out) const {
  out.resize(p.count);
  const double* zj = &p.scaled[j * dims_];
  for (std::size_t i = 0; i < p.count; ++i) out[i] = matern52(&p.scaled[i * dims_], zj, dims_);
}

std::optional<GaussianProcess> gaussian_process_with(const std::vector<double>& x, std::size_t dims,
                                                     const std::vector<double>& y,
                                                     const std::vector<double>& lengthscales) {
  GaussianProcess gp;
  if (gp.fit(x, dims, y, lengthscales) ||
      gp.fit(x, dims, y, lengthscales, 10 * GaussianProcess::kNoise))
    return gp;
  return std::nullopt;
}

std::optional<GaussianProcess> fit_gaussian_process(const std::vector<double>& x, std::size_t dims,
                                                    const std::vector<double>& y,
                                                    const std::vector<double>* previous) {
  std::optional<GaussianProcess> best;
  auto consider = [&](const std::vector<double>& ls) {
    auto gp = gaussian_process_with(x, dims, y, ls);
    if (gp && (!best || gp->nll() < best->nll())) best = std::move(gp);
  };
  for (double shared : {0.1, 0.2, 0.4, 0.8}) consider(std::vector<double>(dims, shared));
  if (previous && previous->size() == dims) consider(*previous);
  if (!best) return best;
  for (int sweep = 0; sweep < kSweeps; ++sweep)
    for (std::size_t k = 0; k < dims; ++k)
      for (double factor : {0.5, 2.0}) {
        std::vector<double> ls = best->lengthscales();
        ls[k] = std::clamp(ls[k] * factor, kMinLengthscale, kMaxLengthscale);
        if (ls[k] != best->lengthscales()[k]) consider(ls);
      }
  return best;
}

}  // namespace tune::detail
