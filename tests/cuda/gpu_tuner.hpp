// What the CUDA GPU tests share: the device, opened or skipped with the reason, and the
// Autotuner they tune bundled kernels with: short timings (a few ms per configuration),
// nothing persisted, so a test's tuning is quick and leaves no store behind.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "skip.hpp"
#include "tune/kernels/bundled.hpp"
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

// Tunes bundled kernel `k` at `size` with gpu_test_tuner, prints the report, then checks that
// the tuned call (a hit, on poisoned outputs) computes what the CPU reference does. Never
// asserts which configuration wins.
inline void check_tuned_winner(Device& dev, const kernels::BundledKernel& k,
                               const std::vector<std::int64_t>& size) {
  auto tuner = gpu_test_tuner(k.def);
  auto w = k.workload(size);
  REQUIRE(w->setup(dev, 99).ok());
  const Status s = tuner->run(dev, w->args());
  REQUIRE_MESSAGE(s.ok(), s.to_string());
  auto report = tuner->last_report(dev, w->args());
  REQUIRE(report.has_value());
  MESSAGE(report->to_string());
  REQUIRE(w->poison_outputs(dev).ok());
  REQUIRE(tuner->run(dev, w->args()).ok());
  const Status v = w->check(dev);
  CHECK_MESSAGE(v.ok(), w->size_text() << ": " << v.to_string());
}

}  // namespace tune::testing
