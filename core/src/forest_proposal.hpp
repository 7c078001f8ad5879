// The random forests' share of a model-search batch (search_model.cpp): a likelihood-free
// Bayesian optimisation (as PyTorch Helion's LFBO) with random forests (search_forest.hpp)
// over each value's index, log2 and, for integers, odd factor, so that a split can follow
// any: tree splits isolate a narrow optimum that a smooth model rates mediocre.
//
// Each call fits a classifier of "in the best quantile" and (when its picks are asked for) a
// regression of log2 run time to every evaluation (failures are in the worst class and slower than
// any success) and returns local picks (the regression's best-predicted unvisited neighbour of the
// best point of each niche: the whole history, and each switch's setting), picks by the
// regression's lower confidence bound, and the classifier's highest-rated points, in the
// proportions 2 : 2 : 3 of the forest-only search this was (git history: 7edde77), scaled to the
// count asked for. A count of one is the classifier's pick alone, and the regression is then not
// fitted.
//
// Thread safety: one object belongs to one search.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "search_explorer.hpp"
#include "search_forest.hpp"

namespace tune::detail {

class ForestFeatures;

class ForestProposal {
 public:
  explicit ForestProposal(const Explorer& x);
  ~ForestProposal();
  ForestProposal(const ForestProposal&) = delete;
  ForestProposal& operator=(const ForestProposal&) = delete;

  // Up to `count` unvisited accepted points not in `taken`, distinct.
  std::vector<std::uint64_t> propose(Explorer& x, std::size_t count,
                                     const std::vector<std::uint64_t>& taken);

 private:
  void fit_classifier(Explorer& x);
  void fit_times(Explorer& x);

  std::unique_ptr<const ForestFeatures> features_;
  Forest classifier_, times_;
  std::size_t turn_ = 0;  // which niche the next local pick after the first searches
};

}  // namespace tune::detail
