// A search's convergence: the best median found so far against the number of configurations
// evaluated, read from a TuningReport whose results are in evaluation order (a search's:
// TuningReport::strategy is set). `tune run-space` and `tune demo` print it; the HTML report
// draws it. Pure functions; safe from any thread.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tune/autotuner.hpp"

namespace tune::cli {

// The best so far improved at evaluation `evaluation` (1-based; failed configurations and
// rows read from the store count as evaluations, as the search made them).
struct ConvergenceStep {
  std::size_t evaluation = 0;
  double best_ns = 0;
  std::string config;
};

// Each improvement of the best so far, in evaluation order; empty without a strategy or
// when nothing succeeded.
std::vector<ConvergenceStep> convergence_steps(const TuningReport& r);

// One line: "search annealing, 30 evaluations; best so far: #1 2.10 ms, #4 1.50 ms, #17
// 1.20 ms" (at most the last kShownSteps improvements, earlier ones counted); empty without
// a strategy.
inline constexpr std::size_t kShownSteps = 8;
std::string convergence_text(const TuningReport& r);

}  // namespace tune::cli
