#include "search_forest.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tune::detail {

Forest::Split Forest::best_split(const std::vector<float>& x, const std::vector<float>& y,
                                 std::vector<std::uint32_t>& idx, std::size_t lo, std::size_t hi,
                                 const Options& opt, std::mt19937_64& rng) const {
  std::vector<std::size_t> order(features_);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  const std::size_t tries = std::max<std::size_t>(1, (features_ + 2) / 3);
  const std::size_t n = hi - lo;
  double total = 0;
  for (std::size_t i = lo; i < hi; ++i) total += y[idx[i]];
  Split best;
  std::vector<std::pair<float, float>> col(n);  // (feature value, target)
  for (std::size_t t = 0; t < tries; ++t) {
    const std::size_t f = order[t];
    for (std::size_t i = 0; i < n; ++i) col[i] = {x[idx[lo + i] * features_ + f], y[idx[lo + i]]};
    std::sort(col.begin(), col.end());
    if (col.front().first == col.back().first) continue;
    // Squared error drop of a split = nL*mL^2 + nR*mR^2 - n*m^2; maximise the first two terms.
    double left = 0;
    for (std::size_t i = 0; i + 1 < n; ++i) {
      left += col[i].second;
      const std::size_t nl = i + 1, nr = n - nl;
      if (col[i].first == col[i + 1].first) continue;
      if (nl < static_cast<std::size_t>(opt.min_leaf) ||
          nr < static_cast<std::size_t>(opt.min_leaf))
        continue;
      const double right = total - left;
      const double gain = left * left / static_cast<double>(nl) +
                          right * right / static_cast<double>(nr) -
                          total * total / static_cast<double>(n);
      if (gain > best.gain + 1e-12) {
        best.gain = gain;
        best.feature = static_cast<int>(f);
        best.threshold = 0.5f * (col[i].first + col[i + 1].first);
      }
    }
  }
  return best;
}

std::vector<Forest::Node> Forest::grow(const std::vector<float>& x, const std::vector<float>& y,
                                       std::vector<std::uint32_t> idx, const Options& opt,
                                       std::mt19937_64& rng) const {
  struct Task {
    int node;
    std::size_t lo, hi;
    int depth;
  };
  std::vector<Node> nodes(1);
  std::vector<Task> stack{{0, 0, idx.size(), 0}};
  while (!stack.empty()) {
    const Task t = stack.back();
    stack.pop_back();
    double sum = 0;
    for (std::size_t i = t.lo; i < t.hi; ++i) sum += y[idx[i]];
    nodes[t.node].value = static_cast<float>(sum / static_cast<double>(t.hi - t.lo));
    if (t.depth >= opt.max_depth || t.hi - t.lo < 2 * static_cast<std::size_t>(opt.min_leaf))
      continue;
    const Split s = best_split(x, y, idx, t.lo, t.hi, opt, rng);
    if (s.feature < 0) continue;  // pure, or no feature separates these samples
    auto mid = std::partition(
        idx.begin() + static_cast<std::ptrdiff_t>(t.lo),
        idx.begin() + static_cast<std::ptrdiff_t>(t.hi), [&](std::uint32_t i) {
          return x[i * features_ + static_cast<std::size_t>(s.feature)] < s.threshold;
        });
    const std::size_t m = static_cast<std::size_t>(mid - idx.begin());
    const int l = static_cast<int>(nodes.size());
    nodes.resize(nodes.size() + 2);
    nodes[t.node].feature = s.feature;
    nodes[t.node].threshold = s.threshold;
    nodes[t.node].left = l;
    nodes[t.node].right = l + 1;
    stack.push_back({l, t.lo, m, t.depth + 1});
    stack.push_back({l + 1, m, t.hi, t.depth + 1});
  }
  return nodes;
}

void Forest::fit(const std::vector<float>& x, std::size_t features, const std::vector<float>& y,
                 const Options& opt, std::mt19937_64& rng) {
  features_ = features;
  trees_.clear();
  const std::size_t n = y.size();
  if (n == 0 || features == 0) return;
  for (int t = 0; t < opt.trees; ++t) {
    std::vector<std::uint32_t> idx(std::min(n, opt.max_samples));
    for (auto& i : idx) i = static_cast<std::uint32_t>(rng() % n);  // bootstrap
    trees_.push_back(grow(x, y, std::move(idx), opt, rng));
  }
}

float Forest::leaf_value(const std::vector<Node>& nodes, const float* row) {
  std::size_t k = 0;
  while (nodes[k].feature >= 0) {
    const Node& nd = nodes[k];
    k = static_cast<std::size_t>(row[nd.feature] < nd.threshold ? nd.left : nd.right);
  }
  return nodes[k].value;
}

float Forest::predict(const float* row) const {
  if (trees_.empty()) return 0;
  float sum = 0;
  for (const auto& nodes : trees_) sum += leaf_value(nodes, row);
  return sum / static_cast<float>(trees_.size());
}

std::pair<float, float> Forest::predict_spread(const float* row) const {
  if (trees_.empty()) return {0.0f, 0.0f};
  double sum = 0, sum2 = 0;
  for (const auto& nodes : trees_) {
    const double v = leaf_value(nodes, row);
    sum += v;
    sum2 += v * v;
  }
  const double n = static_cast<double>(trees_.size()), mean = sum / n;
  return {static_cast<float>(mean),
          static_cast<float>(std::sqrt(std::max(0.0, sum2 / n - mean * mean)))};
}

}  // namespace tune::detail
