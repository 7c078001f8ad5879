// The machinery every search strategy shares (search.hpp's promises kept in one place): index
// arithmetic over the space's grid of value indices, constraint filtering (a rejected point
// costs nothing), memoised evaluation (a point is never evaluated twice), the budget, and the
// result's history. Points are evaluated one at a time (eval) or as a batch (eval_batch: one
// call of the batch objective, so that a caller can compile the batch while timing it).
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "elapsed.hpp"
#include "tune/search.hpp"

namespace tune::detail {

// Points of a product space small enough to list the accepted ones up front.
inline constexpr std::uint64_t kListLimit = 1u << 20;
// Consecutive proposals that cost no evaluation before a strategy gives up or restarts.
inline constexpr int kStaleLimit = 2000;
// Consecutive proposals rejected or seen before a local search jumps to a random point.
inline constexpr int kJumpAfter = 64;

// The `n` points of `history` with the lowest finite times, best first (ties: the earlier).
inline std::vector<std::uint64_t> best_points(
    const std::vector<std::pair<std::uint64_t, double>>& history, std::size_t n) {
  std::vector<std::pair<double, std::uint64_t>> ok;
  for (const auto& [i, v] : history)
    if (std::isfinite(v)) ok.emplace_back(v, i);
  std::stable_sort(ok.begin(), ok.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::uint64_t> out;
  for (std::size_t k = 0; k < ok.size() && k < n; ++k) out.push_back(ok[k].second);
  return out;
}

// `f` as a batch objective: one call per configuration.
inline BatchObjective one_by_one(const Objective& f) {
  return [&f](const std::vector<Config>& batch) {
    std::vector<double> out;
    out.reserve(batch.size());
    for (const Config& c : batch) out.push_back(f(c));
    return out;
  };
}

// `f`'s values for `batch`; throws std::length_error when it does not answer one value per
// configuration.
inline std::vector<double> ask_batch(const BatchObjective& f, const std::vector<Config>& batch) {
  std::vector<double> values = f(batch);
  if (values.size() != batch.size())
    throw std::length_error("search: the batch objective answered " +
                            std::to_string(values.size()) + " values for " +
                            std::to_string(batch.size()) + " configurations");
  return values;
}

class Explorer {
 public:
  Explorer(const ConfigSpace& space, const DeviceInfo& dev, BatchObjective f,
           const SearchBudget& budget, std::uint64_t seed)
      : space_(space),
        dev_(dev),
        f_(std::move(f)),
        budget_(budget),
        rng_(seed),
        t0_(std::chrono::steady_clock::now()) {
    if (space.is_list()) {
      radix_.push_back(space.raw_size());
    } else {
      for (const auto& d : space.dimensions()) radix_.push_back(d.values.size());
    }
    raw_ = space.raw_size();
    if (raw_ <= kListLimit) {
      for (std::uint64_t i = 0; i < raw_; ++i)
        if (space.accepts(space.at(i), dev)) accepted_.push_back(i);
      known_accepted_ = true;
    }
  }

  Status check() const {
    if (raw_ == 0) return Status(StatusCode::invalid_argument, "search over an empty config space");
    if (known_accepted_ && accepted_.empty())
      return Status(StatusCode::invalid_argument,
                    "search: no configuration of the space passes the constraints");
    return {};
  }

  bool out_of_budget() const {
    if (known_accepted_ && result_.evaluations >= accepted_.size()) return true;
    if (budget_.max_evaluations != 0 && result_.evaluations >= budget_.max_evaluations) return true;
    if (budget_.max_ms > 0 && ms_since(t0_) >= budget_.max_ms) return true;
    return false;
  }
  // Evaluations the budget still allows (unbounded: the accepted points left, or a large number).
  std::uint64_t evaluations_left() const {
    std::uint64_t left = std::numeric_limits<std::uint64_t>::max();
    if (known_accepted_) left = accepted_.size() - result_.evaluations;
    if (budget_.max_evaluations != 0)
      left = std::min(left, budget_.max_evaluations > result_.evaluations
                                ? budget_.max_evaluations - result_.evaluations
                                : 0);
    return left;
  }

  // Value of point `index`: memoised; nullopt when the constraints reject it or the budget
  // is spent. `fresh` tells whether this call spent an evaluation.
  std::optional<double> eval(std::uint64_t index, bool* fresh = nullptr) {
    if (fresh) *fresh = false;
    if (auto it = memo_.find(index); it != memo_.end()) {
      if (std::isnan(it->second)) return std::nullopt;  // rejected earlier
      return it->second;
    }
    if (!admit(index) || out_of_budget()) return std::nullopt;
    eval_admitted({index});
    if (fresh) *fresh = true;
    return memo_.at(index);
  }

  // Evaluates, in one call of the objective, the points of `indices` that the constraints
  // accept and that were not evaluated yet (in order, duplicates once, as many as the budget's
  // evaluations allow). Returns the points evaluated.
  std::vector<std::uint64_t> eval_batch(const std::vector<std::uint64_t>& indices) {
    std::vector<std::uint64_t> todo;
    for (std::uint64_t i : indices) {
      if (out_of_budget() || todo.size() >= evaluations_left()) break;
      if (visited(i) || !admit(i)) continue;
      if (std::find(todo.begin(), todo.end(), i) == todo.end()) todo.push_back(i);
    }
    if (!todo.empty()) eval_admitted(todo);
    return todo;
  }

  bool visited(std::uint64_t index) const { return memo_.count(index) != 0; }
  // Whether the constraints accept point `index` (a listed space: a binary search of the
  // accepted points; else the constraints, a rejection remembered so the point counts as
  // visited from then on).
  bool accepts(std::uint64_t index) {
    if (known_accepted_) return std::binary_search(accepted_.begin(), accepted_.end(), index);
    return admit(index);
  }
  bool evaluated(std::uint64_t index) const {
    auto it = memo_.find(index);
    return it != memo_.end() && !std::isnan(it->second);
  }
  // The value of an evaluated point.
  double value(std::uint64_t index) const { return memo_.at(index); }
  std::uint64_t best_index() const { return best_index_; }
  double best_value() const { return result_.evaluations == 0 ? kInf : result_.best_value; }
  const SearchResult& so_far() const { return result_; }

  struct Individual {
    std::uint64_t index;
    double value;
  };
  // Up to `n` random accepted points, evaluated: a population-based strategy's first
  // generation (fewer when the space or the budget runs out).
  std::vector<Individual> random_population(int n) {
    std::vector<Individual> pop;
    for (int i = 0; i < n && !out_of_budget(); ++i) {
      auto r = random_unvisited();
      if (!r) break;
      if (auto v = eval(*r)) pop.push_back({*r, *v});
    }
    return pop;
  }

  // Up to `n` distinct random accepted points not evaluated yet and not in `taken` (fewer
  // when they are hard to find).
  std::vector<std::uint64_t> random_unvisited(std::size_t n,
                                              const std::vector<std::uint64_t>& taken) {
    std::vector<std::uint64_t> out;
    for (std::size_t tries = 0; out.size() < n && tries < 4 * n + 16; ++tries) {
      auto r = random_unvisited();
      if (!r) break;
      if (std::find(out.begin(), out.end(), *r) == out.end() &&
          std::find(taken.begin(), taken.end(), *r) == taken.end())
        out.push_back(*r);
    }
    return out;
  }

  // A random accepted point not evaluated yet; nullopt when none can be found.
  std::optional<std::uint64_t> random_unvisited() {
    if (known_accepted_) {
      if (result_.evaluations >= accepted_.size()) return std::nullopt;
      for (int tries = 0; tries < 64; ++tries) {
        std::uint64_t i = accepted_[uniform(accepted_.size())];
        if (!visited(i)) return i;
      }
      for (std::uint64_t i : accepted_)  // dense fallback when most points are visited
        if (!visited(i)) return i;
      return std::nullopt;
    }
    for (int tries = 0; tries < 10000; ++tries) {
      std::uint64_t i = uniform(raw_);
      if (visited(i)) continue;
      if (admit(i)) return i;
    }
    return std::nullopt;
  }

  std::vector<std::uint64_t> digits(std::uint64_t index) const {
    std::vector<std::uint64_t> d(radix_.size());
    for (std::size_t k = radix_.size(); k-- > 0;) {
      d[k] = index % radix_[k];
      index /= radix_[k];
    }
    return d;
  }
  std::uint64_t index_of(const std::vector<std::uint64_t>& d) const {
    std::uint64_t i = 0;
    for (std::size_t k = 0; k < radix_.size(); ++k) i = i * radix_[k] + d[k];
    return i;
  }
  // One dimension moved by one step (reflected at the ends), or to any value for a list.
  std::uint64_t neighbour(std::uint64_t index) {
    auto d = digits(index);
    std::vector<std::size_t> movable;
    for (std::size_t k = 0; k < radix_.size(); ++k)
      if (radix_[k] > 1) movable.push_back(k);
    if (movable.empty()) return index;
    std::size_t k = movable[uniform(movable.size())];
    if (space_.is_list()) {
      d[k] = uniform(radix_[k]);
    } else if (d[k] == 0) {
      d[k] = 1;
    } else if (d[k] + 1 == radix_[k]) {
      d[k] -= 1;
    } else {
      d[k] = uniform(2) == 0 ? d[k] - 1 : d[k] + 1;
    }
    return index_of(d);
  }

  std::uint64_t uniform(std::uint64_t n) { return n <= 1 ? 0 : rng_() % n; }
  double unit() { return std::uniform_real_distribution<double>(0.0, 1.0)(rng_); }
  std::mt19937_64& rng() { return rng_; }
  const SearchBudget& budget() const noexcept { return budget_; }
  const std::vector<std::uint64_t>& radix() const { return radix_; }
  bool exhausted() const { return out_of_budget(); }

  SearchResult finish() {
    result_.accepted_points = known_accepted_ ? accepted_.size() : 0;
    if (result_.evaluations == 0) result_.best_value = kInf;
    return std::move(result_);
  }
  const std::vector<std::uint64_t>& accepted() const { return accepted_; }
  bool known_accepted() const { return known_accepted_; }
  std::uint64_t raw() const { return raw_; }
  const ConfigSpace& space() const { return space_; }

 private:
  // Whether the constraints accept point `index`; a rejection is remembered.
  bool admit(std::uint64_t index) {
    if (auto it = memo_.find(index); it != memo_.end()) return !std::isnan(it->second);
    if (space_.accepts(space_.at(index), dev_)) return true;
    memo_[index] = std::numeric_limits<double>::quiet_NaN();
    return false;
  }

  // Evaluates admitted, unvisited points in one objective call and records them.
  void eval_admitted(const std::vector<std::uint64_t>& indices) {
    std::vector<Config> configs;
    configs.reserve(indices.size());
    for (std::uint64_t i : indices) configs.push_back(space_.at(i));
    std::vector<double> values = ask_batch(f_, configs);
    for (std::size_t k = 0; k < indices.size(); ++k) {
      double v = std::isnan(values[k]) ? kInf : values[k];
      memo_[indices[k]] = v;
      ++result_.evaluations;
      result_.history.emplace_back(indices[k], v);
      if (result_.evaluations == 1 || v < result_.best_value) {
        result_.best_value = v;
        result_.best = std::move(configs[k]);
        best_index_ = indices[k];
      }
    }
  }

  const ConfigSpace& space_;
  const DeviceInfo& dev_;
  BatchObjective f_;
  SearchBudget budget_;
  std::mt19937_64 rng_;
  std::chrono::steady_clock::time_point t0_;
  std::vector<std::uint64_t> radix_;
  std::uint64_t raw_ = 0;
  bool known_accepted_ = false;
  std::vector<std::uint64_t> accepted_;
  std::unordered_map<std::uint64_t, double> memo_;  // NaN marks a rejected point
  SearchResult result_;
  std::uint64_t best_index_ = 0;
};

// A strategy that asks for one point at a time: search() makes the Explorer over the objective
// and checks the space (invalid_argument for an empty one), explore() walks it. The base's
// search_batches() serves batches one point at a time.
class ExplorerStrategy : public SearchStrategy {
 public:
  Result<SearchResult> search(const ConfigSpace& space, const DeviceInfo& dev, const Objective& f,
                              const SearchBudget& budget, std::uint64_t seed) const final {
    Explorer x(space, dev, one_by_one(f), budget, seed);
    TUNE_RETURN_IF_ERROR(x.check());
    return explore(x, seed);
  }

 protected:
  virtual Result<SearchResult> explore(Explorer& x, std::uint64_t seed) const = 0;
};

}  // namespace tune::detail
