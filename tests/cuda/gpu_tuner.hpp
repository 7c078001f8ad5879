// What the CUDA GPU tests share: the device, opened or skipped with the reason, and the
// Autotuner they tune bundled kernels with: short timings (a few ms per configuration),
// nothing persisted, so a test's tuning is quick and leaves no store behind.
#pragma once

#include <doctest/doctest.h>

#include <memory>

#include "skip.hpp"
#include "tune/tune.hpp"

namespace tune::testing {

// Skips without a driver or device; any other failure (a device_lost primary context left by an
// earlier case in this process, say) fails the case instead of hiding it as a skip.
inline std::unique_ptr<Device> open_cuda_or_skip() {
  auto dev = open_device("cuda");
  skip_if_unavailable(dev.status(), "no CUDA device");
  REQUIRE_MESSAGE(dev.ok(), dev.status().to_string());
  return std::move(*dev);
}

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
