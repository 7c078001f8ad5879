// time_kernel: Triton do_bench-style timing of one compiled variant on any Device.
//
// Estimate the cost from a few timed runs, derive warmup and repetition counts from the
// budgets in milliseconds, warm up, then time each repetition with device timestamps and an
// L2 flush before it. Blocks until done.
#pragma once

#include <functional>

#include "tune/device.hpp"
#include "tune/stats.hpp"

namespace tune {

struct BenchOptions {
  double warmup_ms = 25.0;   // Triton's default budgets
  double rep_ms = 100.0;
  int estimate_runs = 5;
  int min_reps = 5;
  int max_reps = 1000;
  bool flush_l2 = true;
  double timeout_ms = 10000.0;  // per launch
};

// Median and quantiles of the timed repetitions, in nanoseconds. `before_each` (optional)
// runs before every launch (warmup, estimate and timed), outside the timed span.
Result<SampleStats> time_kernel(Device& dev, const CompiledKernel& kernel, const LaunchDims& dims,
                                ArgList args, const BenchOptions& opts,
                                const std::function<Status()>& before_each = {});

}  // namespace tune
