// What a variant sees on Vulkan: every definition of tune::definitions (parameters and launch
// options) as a macro, in the SPIR-V cache key, and variants whose macros compile out a buffer
// or every scalar argument still launch and compute the right thing. On lavapipe by default.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "scoped_env.hpp"
#include "skip.hpp"
#include "tune/tune.hpp"
#include "tune/vulkan.hpp"
#include "vulkan_test_device.hpp"

namespace {

using namespace tune;
using tune::testing::check_no_validation_error;
using tune::testing::open_validated_if_possible;
using tune::testing::open_vulkan_or_skip;
using tune::testing::ScopedEnv;

KernelSource glsl(std::string text) {
  KernelSource s;
  s.language = Language::glsl;
  s.entry = "main";
  s.text = std::move(text);
  return s;
}

// Writes what each definition holds (0xffffffff when it is not defined) to o[].
const char* kSeeShader = R"(#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, binding = 0) buffer O { uint o[]; };
#ifndef TUNE_NUM_WARPS
#define TUNE_NUM_WARPS 0xffffffffu
#endif
#ifndef TUNE_NUM_STAGES
#define TUNE_NUM_STAGES 0xffffffffu
#endif
#ifndef TUNE_MAX_REGISTERS
#define TUNE_MAX_REGISTERS 0xffffffffu
#endif
#ifndef TUNE_SHARED_BYTES
#define TUNE_SHARED_BYTES 0xffffffffu
#endif
void main() {
  if (gl_GlobalInvocationID != uvec3(0)) return;
  o[0] = uint(TUNE_BLOCK_X);
  o[1] = uint(TUNE_BLOCK_Y);
  o[2] = uint(TUNE_BLOCK_Z);
  o[3] = uint(TUNE_NUM_WARPS);
  o[4] = uint(TUNE_NUM_STAGES);
  o[5] = uint(TUNE_MAX_REGISTERS);
  o[6] = uint(TUNE_SHARED_BYTES);
  o[7] = uint(TILE);
#if FLAG
  o[8] = 1u;
#else
  o[8] = 0u;
#endif
  o[9] = uint(EXPR);
  o[10] = gl_WorkGroupSize.x * 10000u + gl_WorkGroupSize.y * 100u + gl_WorkGroupSize.z;
}
)";

std::vector<std::uint32_t> run_see(Device& dev, const Config& c) {
  auto k = dev.compile(glsl(kSeeShader), c);
  REQUIRE_MESSAGE(k.ok(), c.to_string() << ": " << k.status().to_string());
  auto o = dev.alloc(16 * 4);
  REQUIRE(o.ok());
  REQUIRE(dev.fill(**o, 0xdeadbeefu, 16 * 4).ok());
  const ArgValue args[] = {ArgValue::buf(**o, ElemType::u32, 16)};
  REQUIRE(dev.launch(**k, {{1, 1, 1}, c.launch().block, 0}, args).ok());
  std::vector<std::uint32_t> out(16);
  REQUIRE(dev.download(**o, out.data(), 16 * 4).ok());
  return out;
}

// c[i] = (a[i] (+ b[i])) (* alpha), each part compiled in or out by the variant's macros.
// USE_N guards with the push constant n; without it the launch covers exactly the elements.
const char* kOptionalArgsShader = R"(#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform P { uint n; float alpha; };
void main() {
  uint i = gl_GlobalInvocationID.x;
#if USE_N
  if (i >= n) return;
#endif
  float v = a[i];
#if USE_B
  v += b[i];
#endif
#if USE_ALPHA
  v *= alpha;
#endif
  c[i] = v;
}
)";

}  // namespace

TEST_CASE("vulkan: the shader sees every definition, launch options included") {
  auto dev = open_vulkan_or_skip();
  std::mt19937 rng(20261130);
  for (int round = 0; round < 4; ++round) {
    const auto pick = [&](std::uint32_t lo, std::uint32_t hi) {
      return std::uniform_int_distribution<std::uint32_t>(lo, hi)(rng);
    };
    Config c;
    const std::uint32_t bx = pick(1, 16), by = pick(1, 4), bz = pick(1, 2);
    c.set("TILE", static_cast<int>(pick(1, 1000)));
    c.set("FLAG", Value{round % 2 == 0});
    c.set("EXPR", "(TILE * 2u + 1u)");  // a string is source text, expanded where it is used
    c.set(kBlockX, static_cast<int>(bx)).set(kBlockY, static_cast<int>(by));
    c.set(kBlockZ, static_cast<int>(bz));
    const std::uint32_t warps = round == 3 ? 0 : pick(1, 32);
    const std::uint32_t stages = pick(1, 8), regs = pick(16, 255);
    c.set(kNumWarps, static_cast<int>(warps)).set(kNumStages, static_cast<int>(stages));
    c.set(kMaxRegisters, static_cast<int>(regs));
    CAPTURE(c.to_string());
    const auto out = run_see(*dev, c);
    CHECK(out[0] == bx);
    CHECK(out[1] == by);
    CHECK(out[2] == bz);
    CHECK(out[3] == (warps == 0 ? 0xffffffffu : warps));  // 0: not set, not defined
    CHECK(out[4] == stages);
    CHECK(out[5] == regs);
    CHECK(out[6] == 0xffffffffu);  // shared_bytes unset; Vulkan refuses a config that sets it
    CHECK(out[7] == static_cast<std::uint32_t>(c.get_int("TILE")));
    CHECK(out[8] == (round % 2 == 0 ? 1u : 0u));
    CHECK(out[9] == static_cast<std::uint32_t>(c.get_int("TILE") * 2 + 1));
    CHECK(out[10] == bx * 10000u + by * 100u + bz);  // the specialization constants agree
  }
}

TEST_CASE("vulkan: configs that differ only in a launch option are compiled apart") {
  // Every definition is in the SPIR-V cache key: a variant never gets another's TUNE_ values.
  ScopedEnv no_disk("TUNE_CACHE", "off");
  auto dev = open_vulkan_or_skip();
  Config base{{"TILE", 3}, {"FLAG", Value{true}}, {"EXPR", "1u"}};
  base.set(kBlockX, 4);
  const auto before = vulkan::diagnostics(*dev)->shaderc_compiles;
  Config warps4 = base, warps8 = base, stages2 = base;
  warps4.set(kNumWarps, 4);
  warps8.set(kNumWarps, 8);
  stages2.set(kNumStages, 2);
  CHECK(run_see(*dev, warps4)[3] == 4u);
  CHECK(run_see(*dev, warps8)[3] == 8u);
  const auto s = run_see(*dev, stages2);
  CHECK(s[3] == 0xffffffffu);
  CHECK(s[4] == 2u);
  CHECK(vulkan::diagnostics(*dev)->shaderc_compiles == before + 3);
}

TEST_CASE("vulkan: a variant that compiles out a buffer or its scalars launches correctly") {
  auto dev = open_validated_if_possible();
  constexpr std::uint32_t kBlock = 64;
  constexpr std::uint32_t kGroups = 37;
  constexpr std::uint32_t kAll = kBlock * kGroups;  // what a launch covers
  std::mt19937 rng(1130);
  std::uniform_real_distribution<float> uni(-4.0f, 4.0f);
  std::vector<float> a(kAll), b(kAll);
  for (auto& v : a) v = uni(rng);
  for (auto& v : b) v = uni(rng);
  const float alpha = uni(rng);
  auto da = dev->alloc(kAll * 4), db = dev->alloc(kAll * 4), dc = dev->alloc(kAll * 4);
  REQUIRE(da.ok());
  REQUIRE(db.ok());
  REQUIRE(dc.ok());
  REQUIRE(dev->upload(**da, a.data(), kAll * 4).ok());
  REQUIRE(dev->upload(**db, b.data(), kAll * 4).ok());

  struct Variant {
    const char* what;
    bool use_n, use_b, use_alpha;
  };
  const Variant variants[] = {
      {"every argument used", true, true, true},
      {"buffer b unused (binding 1 optimised away)", true, false, true},
      {"scalar alpha unused (the push-constant block keeps it)", true, true, false},
      {"every scalar unused (no push-constant block)", false, true, false},
      {"buffer b and every scalar unused", false, false, false},
  };
  for (const Variant& v : variants) {
    CAPTURE(v.what);
    Config c{
        {"USE_N", Value{v.use_n}}, {"USE_B", Value{v.use_b}}, {"USE_ALPHA", Value{v.use_alpha}}};
    c.set(kBlockX, static_cast<int>(kBlock));
    auto k = dev->compile(glsl(kOptionalArgsShader), c);
    REQUIRE_MESSAGE(k.ok(), k.status().to_string());
    // Without n the kernel covers the whole launch; with it, n stops short of the last group.
    const std::uint32_t n = v.use_n ? kAll - 45 : kAll;
    REQUIRE(dev->fill(**dc, 0x7fc00001u, kAll * 4).ok());  // a NaN no result can equal
    const std::vector<ArgValue> args = {ArgValue::buf(**da, ElemType::f32, kAll),
                                        ArgValue::buf(**db, ElemType::f32, kAll),
                                        ArgValue::buf(**dc, ElemType::f32, kAll), n, alpha};
    Status s = dev->launch(**k, {{kGroups, 1, 1}, {kBlock, 1, 1}, 0}, args);
    REQUIRE_MESSAGE(s.ok(), s.to_string());
    std::vector<float> got(kAll);
    REQUIRE(dev->download(**dc, got.data(), kAll * 4).ok());
    std::size_t wrong = 0;
    for (std::uint32_t i = 0; i < kAll; ++i) {
      float want = a[i];
      if (v.use_b) want += b[i];
      if (v.use_alpha) want *= alpha;
      if (i >= n) {
        std::uint32_t bits = 0;
        std::memcpy(&bits, &got[i], 4);
        if (bits != 0x7fc00001u) ++wrong;  // past n: untouched
      } else if (!(std::fabs(got[i] - want) <= 1e-5f * (1.0f + std::fabs(want)))) {
        if (wrong++ < 3) MESSAGE("c[" << i << "] = " << got[i] << ", want " << want);
      }
    }
    CHECK(wrong == 0);

    // What the variant does declare is still checked against the call.
    const std::vector<ArgValue> short_call = {ArgValue::buf(**da, ElemType::f32, kAll),
                                              ArgValue::buf(**db, ElemType::f32, kAll), n, alpha};
    Status missing = dev->launch(**k, {{kGroups, 1, 1}, {kBlock, 1, 1}, 0}, short_call);
    CHECK(missing.code() == StatusCode::invalid_argument);
    CHECK(missing.message().find("storage buffer 2") != std::string::npos);
  }
  REQUIRE(dev->synchronize().ok());
  check_no_validation_error(*dev);
}

TEST_CASE("vulkan: the autotuner tunes over variants that drop an argument") {
  // The same through Autotuner, over variants that all leave out every scalar and some the
  // buffer b: tuning succeeds, and the winner's output matches the CPU reference.
  auto dev = open_validated_if_possible();
  constexpr std::uint32_t kN = 64 * 29;
  KernelDef def;
  def.name = "optional_args";
  def.sources = {glsl(kOptionalArgsShader)};
  def.signature.buffer("a", ElemType::f32)
      .buffer("b", ElemType::f32)
      .buffer("c", ElemType::f32)
      .scalar("n", ElemType::u32)
      .scalar("alpha", ElemType::f32);
  def.space.param(std::string(kBlockX), {32, 64})
      .param("USE_N", std::vector<Value>{false})
      .param("USE_B", std::vector<Value>{false, true})
      .param("USE_ALPHA", std::vector<Value>{false});
  def.dims = [](const Config& c, ArgList args) {
    const std::uint32_t bx = c.launch().block.x;
    const auto n = static_cast<std::uint32_t>(args[3].as_int());
    return LaunchDims{{(n + bx - 1) / bx, 1, 1}, c.launch().block, 0};
  };
  AutotunerOptions ao;
  ao.persistent = false;
  ao.bench.warmup_ms = 1;
  ao.bench.rep_ms = 2;
  ao.bench.expert.max_reps = 5;
  ao.bench.expert.settle_window_ms = 0;
  auto tuner = Autotuner::make(def, ao);
  REQUIRE_MESSAGE(tuner.ok(), tuner.status().to_string());

  std::mt19937 rng(29);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  std::vector<float> a(kN), b(kN);
  for (auto& v : a) v = uni(rng);
  for (auto& v : b) v = uni(rng);
  auto da = dev->alloc(kN * 4), db = dev->alloc(kN * 4), dc = dev->alloc(kN * 4);
  REQUIRE(da.ok());
  REQUIRE(db.ok());
  REQUIRE(dc.ok());
  REQUIRE(dev->upload(**da, a.data(), kN * 4).ok());
  REQUIRE(dev->upload(**db, b.data(), kN * 4).ok());
  const std::vector<ArgValue> args = {ArgValue::buf(**da, ElemType::f32, kN),
                                      ArgValue::buf(**db, ElemType::f32, kN),
                                      ArgValue::buf(**dc, ElemType::f32, kN), kN, 2.0f};
  auto best = (*tuner)->tune(*dev, args);
  REQUIRE_MESSAGE(best.ok(), best.status().to_string());
  REQUIRE(dev->fill(**dc, 0, kN * 4).ok());
  REQUIRE((*tuner)->run(*dev, args).ok());
  std::vector<float> got(kN);
  REQUIRE(dev->download(**dc, got.data(), kN * 4).ok());
  const bool use_b = best->get_bool("USE_B");
  std::size_t wrong = 0;
  for (std::uint32_t i = 0; i < kN; ++i)
    if (got[i] != (use_b ? a[i] + b[i] : a[i])) ++wrong;
  CHECK(wrong == 0);
  check_no_validation_error(*dev);
}
