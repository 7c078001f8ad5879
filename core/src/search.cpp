#include "tune/search.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "search_explorer.hpp"

namespace tune {
namespace {

using detail::Explorer;
using detail::kJumpAfter;
using detail::kStaleLimit;

class Exhaustive final : public detail::ExplorerStrategy {
 public:
  std::string_view name() const noexcept override { return "exhaustive"; }

 protected:
  Result<SearchResult> explore(Explorer& x, std::uint64_t /*seed*/) const override {
    for (std::uint64_t i = 0; i < x.raw() && !x.exhausted(); ++i) x.eval(i);
    return x.finish();
  }
};

class RandomSearch final : public detail::ExplorerStrategy {
 public:
  std::string_view name() const noexcept override { return "random"; }

 protected:
  Result<SearchResult> explore(Explorer& x, std::uint64_t seed) const override {
    if (x.known_accepted()) {
      std::vector<std::uint64_t> order = x.accepted();
      std::mt19937_64 rng(seed);
      std::shuffle(order.begin(), order.end(), rng);
      for (std::uint64_t i : order) {
        if (x.exhausted()) break;
        x.eval(i);
      }
    } else {
      while (!x.exhausted()) {
        auto i = x.random_unvisited();
        if (!i) break;
        x.eval(*i);
      }
    }
    return x.finish();
  }
};

class Annealing final : public detail::ExplorerStrategy {
 public:
  explicit Annealing(int patience) : patience_(std::max(1, patience)) {}
  std::string_view name() const noexcept override { return "annealing"; }

 protected:
  Result<SearchResult> explore(Explorer& x, std::uint64_t /*seed*/) const override {
    auto start = x.random_unvisited();
    if (!start) return x.finish();
    std::uint64_t cur = *start;
    auto v0 = x.eval(cur);
    if (!v0) return x.finish();
    double fcur = *v0;
    // Temperature as a relative slowdown: a move 10% worse is taken with probability
    // exp(-0.1 / T). It cools geometrically from 0.2 to 0.002 over the evaluation budget.
    const double t0 = 0.2;
    const double evals =
        x.budget().max_evaluations ? static_cast<double>(x.budget().max_evaluations) : 1000.0;
    const double decay = std::pow(0.01, 1.0 / evals);
    double temp = t0;
    int since_improvement = 0, stale = 0, restarts = 0;
    double best_seen = fcur;
    while (!x.exhausted() && stale < kStaleLimit) {
      std::uint64_t nb = x.neighbour(cur);
      bool fresh = false;
      auto v = x.eval(nb, &fresh);
      if (!fresh) ++stale;
      if (!v) {
        // Every neighbour rejected by the constraints (BM == BN, say) or spent: jump to a
        // fresh random point instead of proposing neighbours until the stale limit.
        if (stale % kJumpAfter != 0) continue;
        auto r = x.random_unvisited();
        if (!r) break;
        if (auto rv = x.eval(*r)) {
          cur = *r;
          fcur = *rv;
          since_improvement = 0;
          stale = 0;
        }
        continue;
      }
      if (fresh) {
        stale = 0;
        temp *= decay;
        if (*v < best_seen) {
          best_seen = *v;
          since_improvement = 0;
        } else {
          ++since_improvement;
        }
      }
      double rel = std::isfinite(fcur) ? (*v - fcur) / std::max(std::fabs(fcur), 1e-30) : -1.0;
      if (*v < fcur || (std::isfinite(*v) && x.unit() < std::exp(-rel / temp))) {
        cur = nb;
        fcur = *v;
      }
      if (since_improvement >= patience_ || stale >= kStaleLimit / 2) {
        // Iterated local search: alternate between a kick from the best point so far (a few
        // random steps) and a fresh random point.
        std::optional<std::uint64_t> r;
        if (++restarts % 2 == 1 && !x.exhausted()) {
          std::uint64_t kicked = x.best_index();
          for (int k = 0; k < 3; ++k) kicked = x.neighbour(kicked);
          if (!x.visited(kicked) && x.eval(kicked)) r = kicked;
        }
        if (!r) r = x.random_unvisited();
        if (!r) break;
        auto rv = x.eval(*r);
        if (!rv) continue;
        cur = *r;
        fcur = *rv;
        since_improvement = 0;
        stale = 0;
      }
    }
    return x.finish();
  }

 private:
  int patience_;
};

class Genetic final : public detail::ExplorerStrategy {
 public:
  explicit Genetic(int population) : population_(std::max(4, population)) {}
  std::string_view name() const noexcept override { return "genetic"; }

 protected:
  Result<SearchResult> explore(Explorer& x, std::uint64_t /*seed*/) const override {
    using Individual = Explorer::Individual;
    std::vector<Individual> pop = x.random_population(population_);
    if (pop.empty()) return x.finish();
    const auto& radix = x.radix();
    auto tournament = [&]() -> const Individual& {
      const Individual* best = &pop[x.uniform(pop.size())];
      for (int k = 0; k < 2; ++k) {
        const Individual& c = pop[x.uniform(pop.size())];
        if (c.value < best->value) best = &c;
      }
      return *best;
    };
    int stale = 0;
    while (!x.exhausted() && stale < kStaleLimit) {
      std::sort(pop.begin(), pop.end(),
                [](const Individual& a, const Individual& b) { return a.value < b.value; });
      std::vector<Individual> next(pop.begin(), pop.begin() + std::min<std::size_t>(2, pop.size()));
      while (static_cast<int>(next.size()) < population_ && !x.exhausted() && stale < kStaleLimit) {
        auto a = x.digits(tournament().index);
        auto b = x.digits(tournament().index);
        std::vector<std::uint64_t> child(radix.size());
        for (std::size_t k = 0; k < radix.size(); ++k) child[k] = x.uniform(2) ? a[k] : b[k];
        std::uint64_t idx = x.index_of(child);
        // Mutate: at least one neighbouring step, more while the child was seen already.
        int steps = x.uniform(radix.size() + 1) == 0 ? 0 : 1;
        for (int s = 0; s < steps || (x.visited(idx) && s < 8); ++s) idx = x.neighbour(idx);
        bool fresh = false;
        auto v = x.eval(idx, &fresh);
        if (!fresh) {
          ++stale;
          if (stale % 64 == 0) {  // the population has converged: inject a random immigrant
            if (auto r = x.random_unvisited()) {
              if (auto rv = x.eval(*r)) next.push_back({*r, *rv});
            } else {
              stale = kStaleLimit;
            }
          }
          continue;
        }
        stale = 0;
        if (v) next.push_back({idx, *v});
      }
      pop = std::move(next);
    }
    return x.finish();
  }

 private:
  int population_;
};

}  // namespace

std::unique_ptr<SearchStrategy> make_exhaustive_search() { return std::make_unique<Exhaustive>(); }
std::unique_ptr<SearchStrategy> make_random_search() { return std::make_unique<RandomSearch>(); }
std::unique_ptr<SearchStrategy> make_annealing_search(int patience) {
  return std::make_unique<Annealing>(patience);
}
std::unique_ptr<SearchStrategy> make_genetic_search(int population) {
  return std::make_unique<Genetic>(population);
}
std::unique_ptr<SearchStrategy> make_search(std::string_view name) {
  if (name == "exhaustive") return make_exhaustive_search();
  if (name == "random") return make_random_search();
  if (name == "annealing") return make_annealing_search();
  if (name == "genetic") return make_genetic_search();
  if (name == "model") return make_model_search();
  if (name == "pattern") return make_pattern_search();
  if (name == "differential_evolution") return make_differential_evolution_search();
  return nullptr;
}

std::vector<std::string_view> search_names() {
  return {
      "exhaustive", "random", "annealing", "genetic", "model", "pattern", "differential_evolution"};
}

Result<SearchResult> SearchStrategy::search_batches(const ConfigSpace& space, const DeviceInfo& dev,
                                                    const BatchObjective& objective,
                                                    const SearchBudget& budget,
                                                    std::uint64_t seed) const {
  Objective one = [&objective](const Config& c) { return detail::ask_batch(objective, {c})[0]; };
  return search(space, dev, one, budget, seed);
}

}  // namespace tune
