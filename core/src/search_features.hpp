// The feature vector of a point of a search space, as the model search's Gaussian process
// (search_model.cpp) sees it: every feature in [0, 1], so that one range of lengthscales suits
// every dimension.
//
// Per dimension of a product space, or per parameter of a list space:
// - a number (integer, boolean): log2(|v| + 1), sign kept, scaled by the dimension's least
//   and greatest to [0, 1] (0 when they are equal): tile sizes and counts act by ratios;
// - anything else (strings): the value's index in its domain, scaled to [0, 1];
// - for integers of more than 2 values among which some are powers of two and some not: 1 when
//   the odd factor is above 1, else 0. GPU run times often hinge on alignment (warps,
//   wavefronts, memory segments, banks), which a smooth function of log2 does not model.
// A list space's point that lacks a parameter has -1 in each of that parameter's features
// (away from every value it could have).
//
// Thread safety: immutable after construction.
#pragma once

#include <cstdint>
#include <vector>

#include "search_explorer.hpp"

namespace tune::detail {

// A list space's parameters as a product space's dimensions: each parameter's distinct values,
// in the order they first appear, and every point's value index per parameter (kMissing where
// the point lacks the parameter). Both surrogates' features of a list space are built on it.
struct ListDomains {
  static constexpr std::uint32_t kMissing = 0xffffffffu;
  std::vector<std::vector<Value>> domains;       // per parameter
  std::vector<std::vector<std::uint32_t>> rows;  // per point, per parameter
};
ListDomains list_domains(const ConfigSpace& s);

class Features {
 public:
  explicit Features(const Explorer& x);

  // Features per point.
  std::size_t size() const { return width_; }
  // Appends the features of point `index` to `out`.
  void append(const Explorer& x, std::uint64_t index, std::vector<double>& out) const;

 private:
  struct Column {
    std::vector<double> value;  // per value index: the scaled log2 or index
    std::vector<double> odd;    // per value index: odd factor > 1; empty when not a feature
  };

  void add_column(const std::vector<Value>& values);
  void push(std::size_t k, std::uint64_t value_index, std::vector<double>& out) const;

  std::vector<Column> columns_;
  std::size_t width_ = 0;
  std::vector<std::vector<std::uint32_t>> list_rows_;  // a list space's value indices per point
};

}  // namespace tune::detail
