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

namespace {

// y -= f * x over kWidth elements; y and x never overlap (restrict lets the compiler use vector
// instructions at -O2).
template <std::size_t kWidth>
inline void subtract_scaled(double* __restrict y, const double* __restrict x, double f) {
  for (std::size_t c = 0; c < kWidth; ++c) y[c] -= f * x[c];
}

// Solves L X = B for `width` columns of B from column c0 (see solve_lower_columns). A
// compile-time width lets the compiler use vector instructions at -O2.
template <std::size_t kWidth>
void solve_block(const std::vector<double>& l, std::size_t n, double* b, std::size_t m,
                 std::size_t c0, std::size_t width) {
  if constexpr (kWidth != 0) width = kWidth;
  for (std::size_t i = 0; i < n; ++i) {
    const double* ri = l.data() + i * n;
    double* bi = b + i * m + c0;
    for (std::size_t k = 0; k < i; ++k) {
      const double* bk = b + k * m + c0;  // k < i: another row than bi
      if constexpr (kWidth != 0) {
        subtract_scaled<kWidth>(bi, bk, ri[k]);
      } else {
        for (std::size_t c = 0; c < width; ++c) bi[c] -= ri[k] * bk[c];
      }
    }
    const double inv = 1.0 / ri[i];
    for (std::size_t c = 0; c < width; ++c) bi[c] *= inv;
  }
}

}  // namespace

// Column blocks of kColumnBlock: a block of every row (a few hundred rows x 32 doubles) stays in
// the core's cache while all n(n-1)/2 row updates pass over it; row by row over all m columns,
// each update streamed whole rows (MBs) from memory. Each element sees the same operations in
// the same order either way: the results are identical.
void solve_lower_columns(const std::vector<double>& l, std::size_t n, double* b, std::size_t m) {
  constexpr std::size_t kColumnBlock = 32;
  std::size_t c0 = 0;
  for (; c0 + kColumnBlock <= m; c0 += kColumnBlock)
    solve_block<kColumnBlock>(l, n, b, m, c0, kColumnBlock);
  if (c0 < m) solve_block<0>(l, n, b, m, c0, m - c0);
}

}  // namespace tune::detail
