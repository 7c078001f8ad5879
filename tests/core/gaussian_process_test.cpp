// The model search's Gaussian process (gaussian_process.hpp), its linear algebra
// (cholesky.hpp) and its batch selection (expected_improvement.hpp), on data whose answers are
// known.
#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <random>
#include <vector>

#include "cholesky.hpp"
#include "expected_improvement.hpp"
#include "gaussian_process.hpp"

using namespace tune::detail;

namespace {

// n points of one feature, evenly spread over [0, 1], and sin(6 x) at them.
void sine_data(std::size_t n, std::vector<double>& x, std::vector<double>& y) {
  x.clear();
  y.clear();
  for (std::size_t i = 0; i < n; ++i) {
    x.push_back(static_cast<double>(i) / static_cast<double>(n - 1));
    y.push_back(std::sin(6 * x.back()));
  }
}

// A draw of the process's prior with lengthscale `ls` (Matern 5/2, unit variance) at `x` (one
// feature per point): L z for the Cholesky factor L of the kernel matrix, z standard normal.
std::vector<double> prior_draw(const std::vector<double>& x, double ls, std::uint64_t seed) {
  const std::size_t n = x.size();
  std::vector<double> k(n * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const double s = std::sqrt(5.0) * std::fabs(x[i] - x[j]) / ls;
      k[i * n + j] = (1 + s + s * s / 3) * std::exp(-s) + (i == j ? 1e-6 : 0.0);
    }
  REQUIRE(cholesky(k, n));
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> z(n), y(n, 0.0);
  for (double& v : z) v = normal(rng);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j) y[i] += k[i * n + j] * z[j];
  return y;
}

}  // namespace

TEST_CASE("cholesky: factors a positive definite matrix and solves with it") {
  std::vector<double> a = {4, 2, 2, 2, 5, 1, 2, 1, 6};
  const std::vector<double> orig = a;
  REQUIRE(cholesky(a, 3));
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j) {
      double s = 0;
      for (std::size_t k = 0; k < 3; ++k) s += a[i * 3 + k] * a[j * 3 + k];
      CHECK(s == doctest::Approx(orig[i * 3 + j]));
      if (j > i) CHECK(a[i * 3 + j] == 0.0);
    }
  // A x = b through L (L^T x) = b.
  std::vector<double> b = {1, 2, 3};
  solve_lower(a, 3, b.data());
  solve_lower_transposed(a, 3, b.data());
  for (std::size_t i = 0; i < 3; ++i) {
    double s = 0;
    for (std::size_t k = 0; k < 3; ++k) s += orig[i * 3 + k] * b[k];
    CHECK(s == doctest::Approx(static_cast<double>(i + 1)));
  }
  // Two right-hand sides at once (columns of a 3 x 2 matrix), as one at a time.
  std::vector<double> m = {1, 4, 2, 5, 3, 6}, c0 = {1, 2, 3}, c1 = {4, 5, 6};
  solve_lower_columns(a, 3, m.data(), 2);
  solve_lower(a, 3, c0.data());
  solve_lower(a, 3, c1.data());
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(m[i * 2] == doctest::Approx(c0[i]));
    CHECK(m[i * 2 + 1] == doctest::Approx(c1[i]));
  }
}

TEST_CASE("cholesky: many right-hand sides at once (whole column blocks and a ragged rest)") {
  // Widths around the solver's blocks of 32 (none, under one, exactly one and two, ragged
  // rests); each column must equal its own solve.
  const std::size_t n = 40;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> g(n * n), a(n * n, 0.0);
  for (double& v : g) v = u(rng);
  for (std::size_t i = 0; i < n; ++i)  // a = G G^T + n I: positive definite
    for (std::size_t j = 0; j < n; ++j) {
      for (std::size_t k = 0; k < n; ++k) a[i * n + j] += g[i * n + k] * g[j * n + k];
      if (i == j) a[i * n + j] += static_cast<double>(n);
    }
  REQUIRE(cholesky(a, n));
  for (std::size_t m : {0u, 1u, 31u, 32u, 33u, 64u, 75u}) {
    CAPTURE(m);
    std::vector<double> b(n * m);
    for (double& v : b) v = u(rng);
    std::vector<double> x = b;
    solve_lower_columns(a, n, x.data(), m);
    for (std::size_t c = 0; c < m; ++c) {
      CAPTURE(c);
      std::vector<double> col(n);
      for (std::size_t i = 0; i < n; ++i) col[i] = b[i * m + c];
      solve_lower(a, n, col.data());
      for (std::size_t i = 0; i < n; ++i)
        CHECK(x[i * m + c] == doctest::Approx(col[i]).epsilon(1e-12));
    }
  }
}

TEST_CASE("cholesky: a matrix that is not positive definite is reported, not factored") {
  std::vector<double> indefinite = {1, 2, 2, 1};
  CHECK_FALSE(cholesky(indefinite, 2));
  std::vector<double> singular = {1, 1, 1, 1};  // semi-definite: the second pivot is 0
  CHECK_FALSE(cholesky(singular, 2));
  std::vector<double> nan = {std::nan(""), 0, 0, 1};
  CHECK_FALSE(cholesky(nan, 2));
}

TEST_CASE("gaussian process: interpolates its training points, unsure far from them") {
  std::vector<double> x, y;
  sine_data(12, x, y);
  GaussianProcess gp;
  REQUIRE(gp.fit(x, 1, y, {0.2}));
  Posterior p;
  gp.predict(x, p);
  REQUIRE(p.count == x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    CAPTURE(i);
    CHECK(p.mean[i] == doctest::Approx(gp.standardised(y[i])).epsilon(0.02));
    CHECK(p.var[i] < 2e-3);  // about the noise
  }
  // Between training points: close to the function, still fairly sure.
  gp.predict({0.5 / 11}, p);
  CHECK(p.mean[0] == doctest::Approx(gp.standardised(std::sin(6 * 0.5 / 11))).epsilon(0.05));
  CHECK(p.var[0] < 0.1);
  // Far away: the prior (mean 0, variance 1).
  gp.predict({40.0}, p);
  CHECK(p.mean[0] == doctest::Approx(0.0).epsilon(1e-6));
  CHECK(p.var[0] == doctest::Approx(1.0).epsilon(1e-6));
}

TEST_CASE("gaussian process: the marginal likelihood prefers the lengthscale of the data") {
  std::vector<double> x;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int i = 0; i < 80; ++i) x.push_back(unit(rng));
  const std::vector<double> y = prior_draw(x, 0.2, 9);
  auto nll = [&](double ls) {
    GaussianProcess gp;
    REQUIRE(gp.fit(x, 1, y, {ls}));
    return gp.nll();
  };
  CHECK(nll(0.2) < nll(0.05));
  CHECK(nll(0.2) < nll(1.0));
  // The fitted lengthscale lands near the truth (the search moves by factors of 2).
  auto fitted = fit_gaussian_process(x, 1, y, nullptr);
  REQUIRE(fitted);
  CHECK(fitted->lengthscales()[0] >= 0.1);
  CHECK(fitted->lengthscales()[0] <= 0.4);
}

TEST_CASE("gaussian process: a feature the targets ignore gets a long lengthscale") {
  // y = sin(6 x0), x1 noise: the fit finds x1 irrelevant.
  std::vector<double> x, y;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int i = 0; i < 60; ++i) {
    const double a = unit(rng), b = unit(rng);
    x.push_back(a);
    x.push_back(b);
    y.push_back(std::sin(6 * a));
  }
  auto gp = fit_gaussian_process(x, 2, y, nullptr);
  REQUIRE(gp);
  // Two sweeps double a lengthscale at most twice: x1 ends 4 times x0.
  CHECK(gp->lengthscales()[1] >= 4 * gp->lengthscales()[0]);
}

TEST_CASE("gaussian process: duplicate training points fit (the noise keeps K definite)") {
  const std::vector<double> x = {0.3, 0.3, 0.3, 0.7};
  const std::vector<double> y = {1.0, 1.1, 0.9, 2.0};
  auto gp = gaussian_process_with(x, 1, y, {0.5});
  REQUIRE(gp);
  CHECK(std::isfinite(gp->nll()));
}

TEST_CASE("expected improvement: larger for a lower mean and, below the target, a wider sd") {
  CHECK(expected_improvement(-1, 0.1, 0) == doctest::Approx(1.0).epsilon(1e-6));
  CHECK(expected_improvement(-1, 0.1, 0) > expected_improvement(-0.5, 0.1, 0));
  CHECK(expected_improvement(1, 1, 0) > expected_improvement(1, 0.1, 0));
  CHECK(expected_improvement(0, 1, 0) == doctest::Approx(0.3989422804));
}

TEST_CASE("expected improvement: a batch's picks spread out (kriging believer)") {
  // Training points along [0, 1] with the minimum at 0.5; candidates: 0.5 twice, 0.52, and
  // 0.9. The first pick is a copy of 0.5 (the lowest mean): after it, the other copy has no
  // variance left and so no improvement to expect; 0.52 and 0.9 come next.
  std::vector<double> x, y;
  for (int i = 0; i <= 10; ++i) {
    x.push_back(i / 10.0);
    const double d = x.back() - 0.45;
    y.push_back(d * d);
  }
  GaussianProcess gp;
  REQUIRE(gp.fit(x, 1, y, {0.3}));
  Posterior p;
  gp.predict({0.47, 0.47, 0.49, 0.9}, p);
  const auto picks = pick_by_expected_improvement(gp, p, 3, 0.1);
  REQUIRE(picks.size() == 3);
  CHECK(picks[0] == 0);
  CHECK(picks[1] != 1);
  CHECK(p.var[1] < 1e-9);
  // More picks than candidates: each candidate once.
  Posterior q;
  gp.predict({0.47, 0.9}, q);
  CHECK(pick_by_expected_improvement(gp, q, 5, 0.1).size() == 2);
}

TEST_CASE("gaussian process: a Posterior reused after a batch of picks equals a fresh one") {
  // The model search keeps one Posterior across rounds; picking a batch appends rows to its v
  // (kriging believer). The next predict, with fewer candidates and another process, must
  // leave nothing of the last round behind: every field equals a fresh Posterior's.
  std::vector<double> x, y;
  for (int i = 0; i <= 10; ++i) {
    x.push_back(i / 10.0);
    y.push_back(std::sin(6 * x.back()));
  }
  GaussianProcess first, second;
  REQUIRE(first.fit(x, 1, y, {0.3}));
  x.push_back(0.55);
  y.push_back(std::sin(3.3));
  REQUIRE(second.fit(x, 1, y, {0.2}));
  Posterior reused;
  first.predict({0.05, 0.25, 0.45, 0.65, 0.85, 0.95}, reused);
  REQUIRE(pick_by_expected_improvement(first, reused, 3, 0.1).size() == 3);
  const std::vector<double> next = {0.15, 0.35, 0.75};
  second.predict(next, reused);
  Posterior fresh;
  second.predict(next, fresh);
  CHECK(reused.count == fresh.count);
  CHECK(reused.mean == fresh.mean);
  CHECK(reused.var == fresh.var);
  CHECK(reused.v == fresh.v);
  CHECK(reused.scaled == fresh.scaled);
  // And the picks made from it are the same.
  CHECK(pick_by_expected_improvement(second, reused, 2, 0.1) ==
        pick_by_expected_improvement(second, fresh, 2, 0.1));
}
