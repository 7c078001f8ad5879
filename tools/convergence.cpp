// See convergence.hpp.
#include "convergence.hpp"

#include <cmath>

#include "time_text.hpp"

namespace tune::cli {

std::vector<ConvergenceStep> convergence_steps(const TuningReport& r) {
  std::vector<ConvergenceStep> steps;
  if (r.strategy.empty()) return steps;
  for (std::size_t i = 0; i < r.results.size(); ++i) {
    const ConfigResult& c = r.results[i];
    const double t = c.stats.median;
    if (!c.status.ok() || !std::isfinite(t) || t <= 0) continue;
    if (!steps.empty() && t >= steps.back().best_ns) continue;
    steps.push_back({i + 1, t, c.config.to_string()});
  }
  return steps;
}

std::string convergence_text(const TuningReport& r) {
  if (r.strategy.empty()) return {};
  std::string s = "search " + r.strategy + ", " + std::to_string(r.results.size()) + " evaluation" +
                  (r.results.size() == 1 ? "" : "s") + "; best so far:";
  const std::vector<ConvergenceStep> steps = convergence_steps(r);
  if (steps.empty()) return s + " none succeeded";
  const std::size_t from = steps.size() > kShownSteps ? steps.size() - kShownSteps : 0;
  if (from > 0) s += " (" + std::to_string(from) + " earlier)";
  for (std::size_t i = from; i < steps.size(); ++i)
    s += std::string(i == from ? " " : ", ") + "#" + std::to_string(steps[i].evaluation) + " " +
         time_text(steps[i].best_ns);
  return s;
}

}  // namespace tune::cli
