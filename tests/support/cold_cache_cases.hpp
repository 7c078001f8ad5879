// The cold cache of timed launches on a real device, for a backend's test suite: the flush
// self-test's mechanics (its ratios are printed for people, never asserted: a CPU device may
// show no effect) and a tuning with rotating input copies whose output is checked against the
// CPU. The CUDA and Vulkan suites call these with their own device and kernel; the core suite
// covers the same on the simulated device (tests/core/flush_rotation_test.cpp).
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "flush_check.hpp"
#include "tune/backend/last_level_cache.hpp"
#include "tune/tune.hpp"

namespace tune::testing {

// measure_flush_effect on `dev` with `opts`: the sizes come from DeviceInfo (the cache, the
// flush, half the cache read), the rotation makes at least two sets, every median is timed.
inline void check_flush_effect(Device& dev, const FlushCheckOptions& opts = {}) {
  const DeviceInfo& info = dev.info();
  auto r = measure_flush_effect(dev, opts);
  REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  std::printf("%s\n%s", info.name.c_str(), r->to_string().c_str());
  CHECK(r->llc_bytes == info.llc_bytes);
  CHECK(r->llc_source == info.llc_source);
  CHECK(r->flush_bytes == flush_bytes_for(info));
  CHECK(r->flush_bytes >= 2 * info.llc_bytes);
  CHECK(r->buffer_bytes == info.llc_bytes / 2);
  CHECK(r->rotate_sets >= 2);
  CHECK(r->warm_ns > 0);
  CHECK(r->cold_ns > 0);
  CHECK(r->rotate_ns > 0);
}

// Tunes y = 2 x over `n` random floats (exact in f32, so the CPU reference matches bit for
// bit) with BenchOptions::cache = rotate and `bench`'s budgets, then checks that the timing
// rotated (TuningReport::timing_cache) and that the caller's y holds 2 x. `def` brings the
// backend's part: sources (an entry taking x, y (f32 buffers) and n (u32), in that order),
// space and dims; the name, signature and key are set here.
inline void check_rotating_tuning(Device& dev, KernelDef def, std::uint32_t n, BenchOptions bench) {
  def.name = "axpb_rotate";
  def.signature = {};
  def.signature.buffer("x", ElemType::f32).buffer("y", ElemType::f32).scalar("n", ElemType::u32);
  def.key = {KeySpec::exact("n")};
  AutotunerOptions opts;
  opts.persistent = false;
  opts.print = false;
  opts.bench = bench;
  opts.bench.cache = TimingCache::rotate;
  auto tuner = Autotuner::make(std::move(def), opts);
  REQUIRE_MESSAGE(tuner.ok(), tuner.status().to_string());
  std::vector<float> host(n);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-10.0f, 10.0f);
  for (auto& v : host) v = u(rng);
  auto x = dev.alloc(n * sizeof(float));
  auto y = dev.alloc(n * sizeof(float));
  REQUIRE(x.ok());
  REQUIRE(y.ok());
  REQUIRE(dev.upload(**x, host.data(), n * sizeof(float)).ok());
  REQUIRE(dev.fill(**y, 0, n * sizeof(float)).ok());
  const std::vector<ArgValue> args = {ArgValue::buf(**x, ElemType::f32, n),
                                      ArgValue::buf(**y, ElemType::f32, n), ArgValue(n)};
  Status st = (*tuner)->run(dev, args);
  REQUIRE_MESSAGE(st.ok(), st.to_string());
  auto report = (*tuner)->last_report(dev, args);
  REQUIRE(report);
  CHECK(report->timing_cache == TimingCache::rotate);
  std::printf("%s", report->to_string().c_str());
  std::vector<float> got(n);
  REQUIRE(dev.download(**y, got.data(), n * sizeof(float)).ok());
  std::size_t bad = 0;
  for (std::uint32_t i = 0; i < n; ++i)
    if (got[i] != 2.0f * host[i]) ++bad;
  CHECK(bad == 0);
}

}  // namespace tune::testing
