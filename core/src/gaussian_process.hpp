// A Gaussian process over feature vectors, the model search's surrogate (search_model.cpp):
// Matern 5/2 kernel with one lengthscale per feature (ARD), unit signal variance, a small noise
// on the diagonal, targets standardised (mean 0, sd 1). The lengthscales are chosen by the
// negative log marginal likelihood (fit_gaussian_process). Linear algebra: cholesky.hpp.
//
// A GaussianProcess is a value: fitted once, then read (predict, covariance) from any number
// of threads. A Posterior belongs to one caller.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace tune::detail {

// The model over a set of candidate points: per candidate the posterior mean and variance
// (standardised units), and the rows V = L^-1 k(training, candidates) that let a caller update
// the variances after conditioning on more points (expected_improvement.hpp).
struct Posterior {
  std::size_t count = 0;       // candidates
  std::vector<double> mean;    // per candidate
  std::vector<double> var;     // per candidate, at least kMinVariance
  std::vector<double> v;       // rows of `count` values: one per training point, then any added
  std::vector<double> scaled;  // the candidates' features divided by the lengthscales, row-major
};

class GaussianProcess {
 public:
  static constexpr double kNoise = 1e-3;         // added to the kernel's diagonal
  static constexpr double kMinVariance = 1e-12;  // floor of a posterior variance
  static constexpr double kMinSd = 1e-9;         // floor of the targets' standard deviation

  // Fits to the n points of `x` (n rows of `dims` features, row-major) and their targets `y`
  // (any units; standardised here), with the given lengthscales (one per feature) and noise.
  // Returns false when the kernel matrix is not positive definite to rounding (the process is
  // then unusable until a fit succeeds); never throws for numerical reasons.
  bool fit(const std::vector<double>& x, std::size_t dims, const std::vector<double>& y,
           const std::vector<double>& lengthscales, double noise = kNoise);

  // Negative log marginal likelihood of the standardised targets, less its constant:
  // 0.5 y' K^-1 y + sum log diag L.
  double nll() const { return nll_; }
  // The lowest standardised target.
  double best() const { return best_; }
  // `y` in the standardised units of the targets.
  double standardised(double y) const { return (y - mean_) / sd_; }
  std::size_t size() const { return n_; }
  std::size_t dims() const { return dims_; }
  const std::vector<double>& lengthscales() const { return ls_; }

  // The posterior at the candidates `c` (rows of dims() features), into `out` (its buffers
  // reused).
  void predict(const std::vector<double>& c, Posterior& out) const;
  // The prior covariance of every candidate of `p` with candidate `j`, into `out`.
  void covariance_with(const Posterior& p, std::size_t j, std::vector<double>& out) const;

 private:
  std::size_t n_ = 0, dims_ = 0;
  std::vector<double> ls_;
  std::vector<double> scaled_;  // training features / lengthscales, n x dims
  std::vector<double> l_;       // Cholesky factor of K + noise I
  std::vector<double> w_;       // L^-1 y (standardised)
  double mean_ = 0, sd_ = 1, best_ = 0, nll_ = 0;
};

// Fits a process to (x, y), its lengthscales chosen by the marginal likelihood: the lowest of
// shared lengthscales 0.1, 0.2, 0.4, 0.8 and `previous` (when given, of size dims), then two
// sweeps over the features, each lengthscale halved and doubled (within [0.03, 10]) and the
// change kept when the likelihood improves. A lengthscale setting whose kernel matrix is not
// positive definite is retried with ten times the noise, else skipped; nullopt when none fits.
std::optional<GaussianProcess> fit_gaussian_process(const std::vector<double>& x, std::size_t dims,
                                                    const std::vector<double>& y,
                                                    const std::vector<double>* previous);

// A process with the given lengthscales (no search), with the same noise fallback; nullopt
// when neither noise fits.
std::optional<GaussianProcess> gaussian_process_with(const std::vector<double>& x, std::size_t dims,
                                                     const std::vector<double>& y,
                                                     const std::vector<double>& lengthscales);

}  // namespace tune::detail
