// The Gaussian process's share of a model-search batch (search_model.cpp): Bayesian
// optimisation with a Gaussian process (gaussian_process.hpp) over the points' features
// (search_features.hpp), picks by expected improvement (expected_improvement.hpp).
//
// Each call fits the process to ln(run time) of the evaluated points (standardised), scores a
// set of unvisited candidates and returns those of highest expected improvement (greedily,
// each pick's neighbourhood's variance reduced before the next: kriging believer).
//
// Thread safety: one object belongs to one search.
#pragma once

#include <cstdint>
#include <vector>

#include "gaussian_process.hpp"
#include "search_explorer.hpp"
#include "search_features.hpp"

namespace tune::detail {

class GpProposal {
 public:
  explicit GpProposal(const Explorer& x) : features_(x) {}
  // Up to `count` unvisited accepted points not in `taken`, by expected improvement; none
  // while fewer than 2 evaluations succeeded or the process cannot be fitted.
  std::vector<std::uint64_t> propose(Explorer& x, std::size_t count,
                                     const std::vector<std::uint64_t>& taken);

 private:
  Features features_;
  std::vector<double> lengthscales_;  // the last fit's; empty before the first
  std::size_t fitted_at_ = 0;         // evaluations when the lengthscales were last fitted
  std::vector<double> rows_;          // the candidates' features: buffers kept across calls
  Posterior posterior_;
};

}  // namespace tune::detail
