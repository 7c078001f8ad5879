// Tuning an imported T1 problem on a device and reading back the winner's output, for the run
// tests (space_run_vulkan_test.cpp on lavapipe, space_run_cuda_test.cpp on a CUDA GPU).
#pragma once

#include <doctest/doctest.h>

#include <cstring>
#include <limits>
#include <vector>

#include "space/space_args.hpp"
#include "space/space_kernel.hpp"
#include "tune/tune.hpp"

namespace tune::testing {

// The arguments' buffers after tuning `space` on `dev` and one launch of the chosen
// configuration (Autotuner::run) with the output buffer `poisoned` first set to NaN: every
// buffer argument's contents as floats, in argument order. `chosen` receives the winner.
inline std::vector<std::vector<float>> tune_and_read(const tune::cli::SpaceFile& space,
                                                     tune::Device& dev, std::size_t poisoned,
                                                     tune::Config* chosen) {
  auto def = tune::cli::kernel_def_from_space(space);
  REQUIRE_MESSAGE(def.ok(), def.status().to_string());
  auto args = tune::cli::make_space_args(space, dev);
  REQUIRE_MESSAGE(args.ok(), args.status().to_string());
  tune::AutotunerOptions opts;
  opts.persistent = false;
  opts.bench.warmup_ms = 2;
  opts.bench.rep_ms = 10;
  auto tuner = tune::Autotuner::make(*def, opts);
  REQUIRE_MESSAGE(tuner.ok(), tuner.status().to_string());
  auto best = (*tuner)->tune(dev, args->list());
  REQUIRE_MESSAGE(best.ok(), best.status().to_string());
  *chosen = *best;
  const ArgValue& out = args->values[poisoned];
  REQUIRE(out.kind == ArgKind::buffer);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::uint32_t nan_bits = 0;
  std::memcpy(&nan_bits, &nan, sizeof nan);
  REQUIRE(dev.fill(*out.buffer, nan_bits, out.count * 4, 0).ok());
  const Status ran = (*tuner)->run(dev, args->list());
  REQUIRE_MESSAGE(ran.ok(), ran.to_string());
  std::vector<std::vector<float>> host;
  for (const ArgValue& a : args->values) {
    if (a.kind != ArgKind::buffer) continue;
    REQUIRE(a.type == ElemType::f32);
    host.emplace_back(a.count);
    REQUIRE(dev.download(*a.buffer, host.back().data(), a.count * 4, 0).ok());
  }
  (*tuner).reset();  // before the buffers
  return host;
}

}  // namespace tune::testing
