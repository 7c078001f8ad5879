#include "option_checks.hpp"

#include <cmath>
#include <string>

namespace tune::detail {

Status validate_options(const KernelDef& def, const AutotunerOptions& opts) {
  TUNE_RETURN_IF_ERROR(validate(opts.bench, opts.effort).with_context("AutotunerOptions::bench"));
  if (!std::isfinite(opts.tuning_budget_ms) || opts.tuning_budget_ms < 0) {
    return Status(StatusCode::invalid_argument,
                  "AutotunerOptions::tuning_budget_ms must be a finite number >= 0 (0: no "
                  "limit), not " +
                      std::to_string(opts.tuning_budget_ms));
  }
  if (opts.drift.sample_period != 0 &&
      (!std::isfinite(opts.drift.threshold) || opts.drift.threshold <= 1)) {
    return Status(StatusCode::invalid_argument,
                  "AutotunerOptions::drift.threshold must be a finite ratio > 1 (a sample slower "
                  "than threshold x the decided median drifts), not " +
                      std::to_string(opts.drift.threshold));
  }
  const PerfModel& pm = def.perf_model;
  if (pm) {
    if (pm.top_k < 0)
      return Status(StatusCode::invalid_argument,
                    "perf_model.top_k must be >= 1 (0: unset), not " + std::to_string(pm.top_k));
    if (!std::isfinite(pm.top_fraction) || pm.top_fraction < 0 || pm.top_fraction > 1)
      return Status(StatusCode::invalid_argument,
                    "perf_model.top_fraction must be in (0, 1] (0: unset), not " +
                        std::to_string(pm.top_fraction));
    if (pm.top_k <= 0 && pm.top_fraction <= 0)
      return Status(StatusCode::invalid_argument, "perf model set without top_k or top_fraction");
  }
  const IsolationOptions& iso = opts.isolation;
  for (double v : {iso.call_timeout_ms, iso.compile_timeout_ms}) {
    if (!std::isfinite(v) || v < 1 || v > 1e9)
      return Status(StatusCode::invalid_argument,
                    "isolation.call_timeout_ms and compile_timeout_ms must be in [1, 1e9] ms, "
                    "not " +
                        std::to_string(v));
  }
  const SearchBudget& sb = def.search.budget;
  if (!std::isfinite(sb.max_ms) || sb.max_ms < 0)
    return Status(StatusCode::invalid_argument,
                  "search.budget.max_ms must be a finite number >= 0 (0: no limit), not " +
                      std::to_string(sb.max_ms));
  return {};
}

}  // namespace tune::detail
