// Search strategies for spaces too large to time whole.
//
// A strategy explores a ConfigSpace by calling an objective (the measured or modelled run time
// of one configuration; +inf for a failed one) at most `budget` times and returns the best it
// saw. Strategies see a product space as a grid of per-dimension value indices, in declared
// order, so "neighbouring values" means adjacent entries of a domain. Points rejected by the
// space's constraints are skipped and cost nothing. Every strategy is deterministic for a seed
// and never evaluates the same point twice.
//
// Thread safety: a strategy object holds only its parameters; search() and search_batches() may
// run concurrently on one object. The objective is called on the calling thread.
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
// Run times of several configurations (one value per configuration, in order; the rules of
// Objective for each). A strategy that proposes points in batches asks for a batch in one
// call, so the caller may compile its configurations while it times them. An answer of the
// wrong length throws std::length_error out of the search.
using BatchObjective = std::function<std::vector<double>(const std::vector<Config>&)>;

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
  // The same search, its points asked for in batches. Strategies that propose one point at a
  // time (all but "model") call `objective` with one configuration; the points evaluated, the
  // result and its history are those of search() with the same seed.
  virtual Result<SearchResult> search_batches(const ConfigSpace& space, const DeviceInfo& dev,
                                              const BatchObjective& objective,
                                              const SearchBudget& budget, std::uint64_t seed) const;
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
// Model-guided search (Bayesian optimisation with two surrogates sharing one history): after
// `initial` random points, each round evaluates `batch` unvisited points in one batch. A
// Gaussian process (Matern 5/2, a lengthscale per feature) learns ln(run time) from every
// successful evaluation over each value's log2 (strings: index) and, for integers, whether its
// odd factor is above 1; random forests learn "in the best 15%" (a classifier) and log2 of the
// time (a regression; failures slower than any success) over each value's index, log2 and odd
// factor. A quarter of each batch (at least one point from a batch of 2) is the forests': in a
// batch of 4, the point the classifier rates highest; from a batch of 8, also the regression's
// best-predicted unvisited neighbour of the best point, and from 12 the points the regression
// bounds fastest (larger batches walk from the best point of each switch's setting too). The rest
// are the process's, picked greedily by expected improvement among a random sample and the
// neighbours of the best points; no point is picked twice, and failed points are never proposed
// again. Smaller batches learn from more rounds per evaluation; larger ones compile more points at
// once.
std::unique_ptr<SearchStrategy> make_model_search(int batch = 4, int initial = 20);
// Pattern search: from the best point so far, every dimension moved by +-step; the step halves
// when no move improves, and at step 1 without improvement the search restarts from a random
// point.
std::unique_ptr<SearchStrategy> make_pattern_search();
// Differential evolution (rand/1/bin over value indices, F = 0.5, CR = 0.7) with `population`
// individuals; a random immigrant replaces a trial that was already evaluated or rejected.
std::unique_ptr<SearchStrategy> make_differential_evolution_search(int population = 16);
// By name, one of search_names(); null for an unknown name.
std::unique_ptr<SearchStrategy> make_search(std::string_view name);
// Every name make_search knows: "exhaustive", "random", "annealing", "genetic", "model",
// "pattern", "differential_evolution".
std::vector<std::string_view> search_names();

}  // namespace tune
