// The cold cache of timed launches on a real Vulkan device (lavapipe by default): the flush
// self-test's mechanics and a tuning with rotating input copies whose output is checked
// against the CPU (cold_cache_cases.hpp). On a CPU device the flush may show no effect, so no
// ratio is asserted.
#include <doctest/doctest.h>

#include <string>

#include "cold_cache_cases.hpp"
#include "tune/tune.hpp"
#include "vulkan_test_device.hpp"

using namespace tune;

TEST_CASE("Vulkan flush check: sizes from the device type, warm, flushed and rotating reads") {
  auto dev = tune::testing::open_vulkan_or_skip();
  CHECK(dev->info().llc_bytes > 0);
  FlushCheckOptions opts;
  opts.reps = 5;
  tune::testing::check_flush_effect(*dev, opts);
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
  KernelSource src;
  src.language = Language::glsl;
  src.entry = "main";
  src.text = kAxpbShader;
  def.sources = {src};
  def.space.param(std::string(kBlockX), {64, 128, 256});
  def.dims = [](const Config& c, ArgList) {
    return LaunchDims{{n / c.launch().block.x, 1, 1}, c.launch().block, 0};
  };
  BenchOptions bench;
  bench.warmup_ms = 1;
  bench.rep_ms = 5;
  tune::testing::check_rotating_tuning(*dev, std::move(def), n, bench);
}
