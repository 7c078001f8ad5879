// Shared by the interop suites (core, Vulkan, CUDA): random inputs, a tolerant comparison with
// a CPU reference, and the in-place saxpy kernel definition the GPU suites tune on the
// application's buffers.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tune/autotuner.hpp"
#include "tune/kernel.hpp"

namespace tune::testing {

inline std::vector<float> random_floats(std::size_t n, std::uint32_t seed, float lo = -2.0f,
                                        float hi = 2.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& f : v) f = d(rng);
  return v;
}

// "" when every got[i] is within 1e-5 (relative) of want[i], else how many are not and the first.
inline std::string mismatches(const float* got, const std::vector<float>& want) {
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (!(std::fabs(got[i] - want[i]) <= 1e-5f * (1.0f + std::fabs(want[i])))) {
      if (bad++ == 0) first = i;
    }
  }
  if (bad == 0) return {};
  return std::to_string(bad) + " of " + std::to_string(want.size()) + " wrong, first at " +
         std::to_string(first) + ": got " + std::to_string(got[first]) + ", want " +
         std::to_string(want[first]);
}

// y = a x + y over n elements, in place (y is restore_value), key n (pow2); the space is
// block.x x {1, 2} elements per thread, named `per_thread` in the source.
inline KernelDef saxpy_def(std::string name, KernelSource source, const std::string& per_thread,
                           std::initializer_list<int> blocks) {
  KernelDef k;
  k.name = std::move(name);
  k.sources = {std::move(source)};
  k.signature.buffer("x", ElemType::f32)
      .buffer("y", ElemType::f32)
      .scalar("a", ElemType::f32)
      .scalar("n", ElemType::i32);
  k.space.param("block.x", blocks).param(per_thread, {1, 2});
  k.key = {KeySpec::pow2("n")};
  k.restore_value = {"y"};
  k.dims = [per_thread](const Config& c, ArgList args) {
    LaunchDims d;
    const auto per = static_cast<std::uint64_t>(c.launch().block.x * c.get_int(per_thread));
    const auto n = static_cast<std::uint64_t>(args[3].as_int());
    d.grid = {static_cast<std::uint32_t>((n + per - 1) / per), 1, 1};
    d.block = c.launch().block;
    return d;
  };
  return k;
}

// Memory-only, silent, short timing budgets (a few repetitions per configuration), no clock
// settling, no bucket edge checks: the interop suites check outputs and ordering, not which
// configuration wins, and an edge check re-decides a bucket on timings (on a loaded lavapipe a
// split after the decision made mpi.vulkan.share_keys's "remembered as decided" fail).
inline AutotunerOptions interop_options() {
  AutotunerOptions o;
  o.persistent = false;
  o.print = false;
  o.check_bucket_edges = false;
  o.bench.warmup_ms = 0.5;
  o.bench.rep_ms = 1;
  o.bench.expert.max_reps = 5;
  o.bench.expert.settle_window_ms = 0;
  o.bench.expert.settle_batch_ms = 0.2;
  return o;
}

}  // namespace tune::testing
