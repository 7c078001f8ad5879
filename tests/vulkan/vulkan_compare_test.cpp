// VulkanDevice::compare: the GLSL comparison kernel (backends/vulkan/src/comparison_shader.hpp)
// against the CPU computation of the same metrics, on lavapipe by default.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "comparison_cases.hpp"
#include "tune/tune.hpp"
#include "vulkan_test_device.hpp"

TEST_CASE("Vulkan compare: the comparison kernel agrees with compare_host") {
  auto dev = tune::testing::open_vulkan_or_skip();
  tune::testing::check_device_compare(*dev);
}

namespace {

// y = 2 * x; WRONG=1 variants also spoil y[17] (whichever is faster, it must never win).
const char* kScaleShader = R"(#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P { uint n; };
void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i >= n) return;
  y[i] = 2.0 * x[i] + ((WRONG == 1 && i == 17u) ? 1.0 : 0.0);
}
)";

}  // namespace

TEST_CASE("Vulkan compare: tuning with a reference configuration never picks a wrong output") {
  using namespace tune;
  auto dev = tune::testing::open_vulkan_or_skip();
  constexpr std::uint32_t n = 1u << 16;
  KernelDef def;
  def.name = "scale_wrong";
  KernelSource src;
  src.language = Language::glsl;
  src.entry = "main";
  src.text = kScaleShader;
  def.sources = {src};
  def.signature.buffer("x", ElemType::f32).buffer("y", ElemType::f32).scalar("n", ElemType::u32);
  def.space.param(std::string(kBlockX), {64, 128, 256}).param("WRONG", {0, 1});
  def.key = {KeySpec::exact("n")};
  def.dims = [](const Config& c, ArgList) {
    return LaunchDims{{n / c.launch().block.x, 1, 1}, c.launch().block, 0};
  };
  ReferenceOutput out;
  out.arg = "y";
  def.reference.outputs = {out};
  def.reference.config = Config().set("WRONG", 0).set(std::string(kBlockX), 64);
  AutotunerOptions opts;
  opts.persistent = false;
  opts.print = false;
  auto tuner = Autotuner::make(std::move(def), opts);
  REQUIRE_MESSAGE(tuner.ok(), tuner.status().to_string());
  std::vector<float> host(n);
  for (std::uint32_t i = 0; i < n; ++i) host[i] = static_cast<float>(i % 97) - 40.0f;
  auto x = dev->alloc(n * 4);
  auto y = dev->alloc(n * 4);
  REQUIRE(x.ok());
  REQUIRE(y.ok());
  REQUIRE(dev->upload(**x, host.data(), n * 4).ok());
  const std::vector<ArgValue> args = {ArgValue::buf(**x, ElemType::f32, n),
                                      ArgValue::buf(**y, ElemType::f32, n), ArgValue(n)};
  REQUIRE((*tuner)->run(*dev, args).ok());
  auto report = (*tuner)->last_report(*dev, args);
  REQUIRE(report.has_value());
  CHECK(report->winner.get_int("WRONG") == 0);
  for (const auto& r : report->results) {
    CAPTURE(r.config.to_string());
    if (r.config.get_int("WRONG") == 0) {
      CHECK(r.status.ok());
    } else if (!r.status.ok()) {
      CHECK(r.status.code() == StatusCode::wrong_output);
      CHECK(r.status.message().find("1 of 65536 elements") != std::string::npos);
      CHECK(r.status.message().find("first at index 17") != std::string::npos);
    }
  }
  std::vector<float> got(n);
  REQUIRE(dev->download(**y, got.data(), n * 4).ok());
  std::uint32_t wrong = 0;  // run()'s own launch was the winner's
  for (std::uint32_t i = 0; i < n; ++i) wrong += got[i] != 2.0f * host[i] ? 1 : 0;
  CHECK(wrong == 0);
}
