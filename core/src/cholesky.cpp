#include "cholesky.hpp"

#include <cmath>

namespace tune::detail {

bool cholesky(std::vector<double>& a, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j) {
    double* rj = a.data() + j * n;
    double d = rj[j];
    for (std::size_t k = 0; k < j; ++k) d -= rj[k] * rj[k];
    if (!(d > 0) || !std::isfinite(d)) return false;
    const double ljj = std::sqrt(d);
    rj[j] = ljj;
    for (std::size_t k = j + 1; k < n; ++k) rj[k] = 0;
    for (std::size_t i = j + 1; i < n; ++i) {
      double* ri = a.data() + i * n;
      double s = ri[j];
      for (std::size_t k = 0; k < j; ++k) s -= ri[k] * rj[k];
      ri[j] = s / ljj;
    }
  }
  return true;
}

void solve_lower(const std::vector<double>& l, std::size_t n, double* b) {
  for (std::size_t i = 0; i < n; ++i) {
    const double* ri = l.data() + i * n;
    double s = b[i];
    for (std::size_t k = 0; k < i; ++k) s -= ri[k] * b[k];
    b[i] = s / ri[i];
  }
}

void solve_lower_transposed(const std::vector<double>& l, std::size_t n, double* b) {
  for (std::size_t i = n; i-- > 0;) {
    double s = b[i];
    for (std::size_t k = i + 1; k < n; ++k) s -= l[k * n + i] * b[k];
    b[i] = s / l[i * n + i];
  }
}

void solve_lower_columns(const std::vector<double>& l, std::size_t n, double* b, std::size_t m) {
  for (std::size_t i = 0; i < n; ++i) {
    const double* ri = l.data() + i * n;
    double* bi = b + i * m;
    for (std::size_t k = 0; k < i; ++k) {
      const double f = ri[k];
      const double* bk = b + k * m;
      for (std::size_t c = 0; c < m; ++c) bi[c] -= f * bk[c];
    }
    const double inv = 1.0 / ri[i];
    for (std::size_t c = 0; c < m; ++c) bi[c] *= inv;
  }
}

}  // namespace tune::detail
