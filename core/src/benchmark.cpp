#include "tune/benchmark.hpp"

#include <algorithm>
#include <cmath>

namespace tune {

Result<SampleStats> time_kernel(Device& dev, const CompiledKernel& kernel, const LaunchDims& dims,
                                ArgList args, const BenchOptions& opts,
                                const std::function<Status()>& before_each) {
  // One untimed launch first: module load and lazy pipeline JIT happen here, not in samples.
  if (before_each) TUNE_RETURN_IF_ERROR(before_each());
  TUNE_RETURN_IF_ERROR(dev.launch(kernel, dims, args));
  TUNE_RETURN_IF_ERROR(dev.synchronize());

  TimingPlan plan;
  plan.flush_l2 = opts.flush_l2;
  plan.before_each = before_each;
  plan.timeout_ms = opts.timeout_ms;
  plan.reps = std::max(1, opts.estimate_runs);
  auto est = dev.time(kernel, dims, args, plan);
  if (!est.ok()) return est.status();
  if (est->empty()) return Status(StatusCode::internal, "device returned no timing samples");
  SampleStats e = summarize(*est);
  double est_ms = std::max(e.median, 1.0) / 1e6;

  auto n_warmup = static_cast<int>(std::min(100000.0, std::floor(opts.warmup_ms / est_ms)));
  for (int i = 0; i < n_warmup; ++i) {
    if (before_each) TUNE_RETURN_IF_ERROR(before_each());
    TUNE_RETURN_IF_ERROR(dev.launch(kernel, dims, args));
  }
  if (n_warmup > 0) TUNE_RETURN_IF_ERROR(dev.synchronize());

  double reps = std::floor(opts.rep_ms / est_ms);
  plan.reps = static_cast<int>(std::clamp(reps, static_cast<double>(std::max(1, opts.min_reps)),
                                          static_cast<double>(std::max(1, opts.max_reps))));
  auto samples = dev.time(kernel, dims, args, plan);
  if (!samples.ok()) return samples.status();
  if (samples->empty()) return Status(StatusCode::internal, "device returned no timing samples");
  return summarize(*samples);
}

}  // namespace tune

