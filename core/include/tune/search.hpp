// Search strategies for spaces too large to time whole.
//
// A strategy explores a ConfigSpace by calling an objective (the measured or modelled run time
// of one configuration; +inf for a failed one) at most `budget` times and returns the best it
// saw. Strategies see a product space as a grid of per-dimension value indices, in declared
// order, so "neighbouring values" means adjacent entries of a domain. Points rejected by the
// space's constraints are skipped and cost nothing. Every strategy is deterministic for a seed
// and never evaluates the same point twice.
//
// Thread safety: a strategy object holds only its parameters; search() may run concurrently
// on one object. The objective is called on the calling thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "tune/config_space.hpp"

namespace tune {

// The Autotuner enforces both limits itself, whatever the strategy does with them. Asking for
// more evaluations than the space has accepted points is not an error: every strategy stops
// once it has evaluated each accepted point (SearchResult::accepted_points) once.
struct SearchBudget {
  std::uint64_t max_evaluations = 0;  // 0: no limit
  double max_ms = 0;                  // wall time of the whole search; 0: no limit
};

// Run time of a configuration (any unit, lower is better); +inf (or NaN) when it failed.
using Objective = std::function<double(const Config&)>;

struct SearchResult {
  Config best;
  double best_value = 0;          // +inf when nothing succeeded
  std::uint64_t evaluations = 0;  // objective calls made
  std::uint64_t accepted_points =
      0;  // points of the space the strategy could have visited (0 = unknown)
  // Every evaluation in call order: (space index, value). Lets callers plot convergence.
  std::vector<std::pair<std::uint64_t, double>> history;
};

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  virtual std::string_view name() const noexcept = 0;
  // invalid_argument for an empty space, or when no point passes the constraints.
  virtual Result<SearchResult> search(const ConfigSpace& space, const DeviceInfo& dev,
                                      const Objective& objective, const SearchBudget& budget,
                                      std::uint64_t seed) const = 0;
};

// Every accepted point in index order, until the budget runs out.
std::unique_ptr<SearchStrategy> make_exhaustive_search();
// Uniform sampling without replacement.
std::unique_ptr<SearchStrategy> make_random_search();
// Simulated annealing over neighbouring values (one dimension moved by one step), with
// restarts from a random point after `patience` evaluations without improvement, and a jump
// to a random point when the constraints reject every neighbour of the current one.
std::unique_ptr<SearchStrategy> make_annealing_search(int patience = 40);
// A genetic algorithm: tournament selection, uniform crossover of value indices, mutation by
// neighbouring steps, elitism; `population` individuals per generation.
std::unique_ptr<SearchStrategy> make_genetic_search(int population = 16);
// By name: "exhaustive", "random", "annealing", "genetic"; null for an unknown name.
std::unique_ptr<SearchStrategy> make_search(std::string_view name);

}  // namespace tune
