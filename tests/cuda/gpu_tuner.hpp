// The Autotuner the CUDA GPU tests tune bundled kernels with: short timings (a few ms per
// configuration), nothing persisted, so a test's tuning is quick and leaves no store behind.
#pragma once

#include <doctest/doctest.h>

#include <memory>

#include "tune/tune.hpp"

namespace tune::testing {

inline std::unique_ptr<Autotuner> gpu_test_tuner(const KernelDef& def) {
  AutotunerOptions opts;
  opts.persistent = false;
  opts.bench.warmup_ms = 2;
  opts.bench.rep_ms = 5;
  auto tuner = Autotuner::make(def, opts);
  REQUIRE_MESSAGE(tuner.ok(), tuner.status().to_string());
  return std::move(*tuner);
}

}  // namespace tune::testing
