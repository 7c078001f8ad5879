// Batch selection by expected improvement over a Gaussian process's posterior
// (gaussian_process.hpp), for the model search (search_model.cpp).
#pragma once

#include <cstddef>
#include <vector>

#include "gaussian_process.hpp"

namespace tune::detail {

// Expected improvement of a point with posterior mean `mean` and standard deviation `sd` below
// `target` (all in the same units; a minimisation): sd (z Phi(z) + phi(z)), z = (target -
// mean) / sd.
double expected_improvement(double mean, double sd, double target);

// Up to `count` distinct candidates of `p` (indices into it), picked greedily: each the one of
// highest expected improvement over (gp.best() - xi), after which every candidate's variance
// is that of the posterior conditioned on a pseudo-observation at the pick whose value is its
// own mean (the "kriging believer": the means stay, the variance near the pick shrinks, so the
// next picks spread out). Ties go to the lowest index. Updates p.var and appends rows to p.v.
std::vector<std::size_t> pick_by_expected_improvement(const GaussianProcess& gp, Posterior& p,
                                                      std::size_t count, double xi);

}  // namespace tune::detail
