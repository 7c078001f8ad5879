// Autotuner options for tests and tools on the simulated device: tiny timing budgets (a few
// tens of repetitions per config, negligible wall time), nothing persisted, nothing printed.
#pragma once

#include "tune/autotuner.hpp"

namespace tune::testing {

// SimDevice time is simulated: these budgets give a few tens of repetitions per config.
inline BenchOptions tiny_bench() {
  BenchOptions b;
  b.warmup_ms = 0.01;
  b.rep_ms = 0.05;
  b.expert.estimate_runs = 2;
  b.expert.min_reps = 3;
  b.expert.max_reps = 20;
  b.expert.settle_batch_ms = 0.005;  // a few repetitions per settling batch
  return b;
}

// Memory-only, silent options: nothing persists, nothing prints.
inline AutotunerOptions quiet_options() {
  AutotunerOptions o;
  o.bench = tiny_bench();
  o.persistent = false;
  o.print = false;
  return o;
}

}  // namespace tune::testing
