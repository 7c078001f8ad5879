// The cold cache of timed launches on a real Vulkan device (lavapipe by default): the flush
// self-test's mechanics and a tuning with rotating input copies whose output is checked
// against the CPU. On a CPU device the flush may show no effect, so no ratio is asserted.
#include <doctest/doctest.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "tune/backend/last_level_cache.hpp"
#include "tune/tune.hpp"
#include "vulkan_test_device.hpp"

using namespace tune;

TEST_CASE("Vulkan flush check: sizes from the device type, warm, flushed and rotating reads") {
  auto dev = tune::testing::open_vulkan_or_skip();
  const DeviceInfo& info = dev->info();
  CHECK(info.llc_bytes > 0);
  FlushCheckOptions opts;
  opts.reps = 5;
  auto r = measure_flush_effect(*dev, opts);
  REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  std::printf("%s\n%s", info.name.c_str(), r->to_string().c_str());
  CHECK(r->llc_bytes == info.llc_bytes);
  CHECK(r->llc_source == info.llc_source);
  CHECK(r->flush_bytes == flush_bytes_for(info));
  CHECK(r->buffer_bytes == info.llc_bytes / 2);
  CHECK(r->rotate_sets >= 2);
  CHECK(r->warm_ns > 0);
  CHECK(r->cold_ns > 0);
  CHECK(r->rotate_ns > 0);
}

namespace {

// y = 2 x over n floats (exact, so the CPU reference matches bit for bit).
const char* kAxpbShader = R"(#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P { uint n; };
void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i < n) y[i] = 2.0 * x[i];
}
)";

}  // namespace

TEST_CASE("Vulkan tuning with rotating input copies: the output matches the CPU") {
  auto dev = tune::testing::open_vulkan_or_skip();
  constexpr std::uint32_t n = 1u << 18;  // 1 MiB per buffer
  KernelDef def;
  def.name = "axpb_rotate";
  KernelSource src;
  src.language = Language::glsl;
  src.entry = "main";
  src.text = kAxpbShader;
  def.sources = {src};
  def.signature.buffer("x", ElemType::f32).buffer("y", ElemType::f32).scalar("n", ElemType::u32);
  def.space.param(std::string(kBlockX), {64, 128, 256});
  def.key = {KeySpec::exact("n")};
  def.dims = [](const Config& c, ArgList) {
    return LaunchDims{{n / c.launch().block.x, 1, 1}, c.launch().block, 0};
  };
  AutotunerOptions opts;
  opts.persistent = false;
  opts.print = false;
  opts.bench.warmup_ms = 1;
  opts.bench.rep_ms = 5;
  opts.bench.cache = TimingCache::rotate;
  auto tuner = Autotuner::make(std::move(def), opts);
  REQUIRE_MESSAGE(tuner.ok(), tuner.status().to_string());
  std::vector<float> host(n);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-10.0f, 10.0f);
  for (auto& v : host) v = u(rng);
  auto x = dev->alloc(n * sizeof(float));
  auto y = dev->alloc(n * sizeof(float));
  REQUIRE(x.ok());
  REQUIRE(y.ok());
  REQUIRE(dev->upload(**x, host.data(), n * sizeof(float)).ok());
  REQUIRE(dev->fill(**y, 0, n * sizeof(float)).ok());
  const std::vector<ArgValue> args = {ArgValue::buf(**x, ElemType::f32, n),
                                      ArgValue::buf(**y, ElemType::f32, n), ArgValue(n)};
  Status st = (*tuner)->run(*dev, args);
  REQUIRE_MESSAGE(st.ok(), st.to_string());
  auto report = (*tuner)->last_report(*dev, args);
  REQUIRE(report);
  CHECK(report->timing_cache == TimingCache::rotate);
  std::vector<float> got(n);
  REQUIRE(dev->download(**y, got.data(), n * sizeof(float)).ok());
  std::size_t bad = 0;
  for (std::uint32_t i = 0; i < n; ++i)
    if (got[i] != 2.0f * host[i]) ++bad;
  CHECK(bad == 0);
}
