// A small regression forest (Breiman's random forest: bootstrap samples, a random third of the
// features tried at each split, splits by the largest drop in squared error): the surrogate of
// the model-guided search (forest_proposal.cpp). On 0/1 targets its prediction is the fraction of
// trees' leaves in class 1, a classifier's probability.
//
// Written here rather than taken from a library: Debian has no mlpack; xgboost (libxgboost-dev)
// would be a dependency of every user for what is ~150 lines, and the model's inputs are tiny
// (hundreds of points, a few dozen features). Deterministic for a random engine's state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace tune::detail {

class Forest {
 public:
  struct Options {
    int trees = 32;
    int min_leaf = 1;  // samples in a leaf, at least
    int max_depth = 20;
    // Bootstrap sample per tree, at most (random forests' max_samples): bounds a fit's cost
    // once a search has evaluated many points; the smaller searches use every sample.
    std::size_t max_samples = 256;
  };

  // Fits `rows` samples of `features` features each (x row-major, rows * features) to `y`.
  void fit(const std::vector<float>& x, std::size_t features, const std::vector<float>& y,
           const Options& opt, std::mt19937_64& rng);
  // The mean over trees of the leaf value `row` (features values) falls in; 0 before fit.
  float predict(const float* row) const;
  // The mean over trees and the standard deviation of the trees' leaf values.
  std::pair<float, float> predict_spread(const float* row) const;

 private:
  struct Node {
    int feature = -1;  // -1: a leaf
    float threshold = 0;
    int left = 0, right = 0;  // children, indices into the tree's nodes
    float value = 0;          // a leaf's mean target
  };
  struct Split {
    int feature = -1;
    float threshold = 0;
    double gain = 0;
  };
  // The value of the leaf `row` falls in, in the tree of `nodes`.
  static float leaf_value(const std::vector<Node>& nodes, const float* row);
  Split best_split(const std::vector<float>& x, const std::vector<float>& y,
                   std::vector<std::uint32_t>& idx, std::size_t lo, std::size_t hi,
                   const Options& opt, std::mt19937_64& rng) const;
  std::vector<Node> grow(const std::vector<float>& x, const std::vector<float>& y,
                         std::vector<std::uint32_t> idx, const Options& opt,
                         std::mt19937_64& rng) const;

  std::size_t features_ = 0;
  std::vector<std::vector<Node>> trees_;
};

}  // namespace tune::detail
