// Dense Cholesky factorisation and triangular solves for the model search's Gaussian process
// (gaussian_process.hpp). Written here rather than taken from a linear-algebra library: the
// matrices are small (at most a few hundred rows: the GP's capped training set), the three
// loops below are all the GP needs, and a dependency such as Eigen or LAPACK would be one more
// thing every user of libtune must install and keep in step.
//
// Matrices are dense, row-major, in std::vector<double>; the functions allocate nothing and hold
// no state (safe to call from any thread on distinct data).
#pragma once

#include <cstddef>
#include <vector>

namespace tune::detail {

// Factors the symmetric positive definite n x n matrix `a` (row-major; only its lower triangle
// is read) in place into L with a = L L^T: the lower triangle holds L, the upper triangle is
// zeroed. Returns false, `a` then unspecified, when a pivot is not positive and finite (`a` not
// positive definite, as far as rounding can tell): the caller decides what to do, nothing
// throws.
bool cholesky(std::vector<double>& a, std::size_t n);

// Solves L x = b in place (`b` becomes x); L from cholesky().
void solve_lower(const std::vector<double>& l, std::size_t n, double* b);
// Solves L^T x = b in place.
void solve_lower_transposed(const std::vector<double>& l, std::size_t n, double* b);
// Solves L X = B in place for the n x m row-major matrix B (in blocks of 32 columns: the inner
// loop runs along a block of B's rows, contiguous and in cache).
void solve_lower_columns(const std::vector<double>& l, std::size_t n, double* b, std::size_t m);

}  // namespace tune::detail
