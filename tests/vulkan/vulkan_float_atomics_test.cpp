// Float atomics (VK_EXT_shader_atomic_float and _float2): reflection finds each atomic's width,
// operation (load, store or exchange; add; min or max) and place (buffers, shared memory); a
// device lacking the feature for one refuses the module naming it (snapshots); on the default
// device (lavapipe: 32-bit float atomics only) the 32-bit sums, maxima and exchanges run and
// match the CPU, from GLSL text and precompiled SPIR-V, and the 16- and 64-bit ones are refused
// naming what lavapipe lacks (on a device that has them they run and are checked).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <random>
#include <shaderc/shaderc.hpp>
#include <string>
#include <vector>

#include "compute_pipeline.hpp"
#include "device_facts.hpp"
#include "device_snapshots.hpp"
#include "float_atomics.hpp"
#include "spirv_capabilities.hpp"
#include "spirv_modules.hpp"
#include "spirv_reflect.hpp"
#include "tune/tune.hpp"
#include "tune/vulkan.hpp"
#include "vulkan_test_device.hpp"

namespace {

using namespace tune;
using testing::bare_module;
using testing::glsl_text;
using testing::precompiled;
using testing::to_spirv;
using vk::FloatAtomics;

// Per workgroup of `block`: every element added into one total and one maximum on a buffer,
// and into the group's sum in shared memory, which the group stores.
const char* kFloat32 = R"(#version 450
#extension GL_EXT_shader_atomic_float : require
#extension GL_EXT_shader_atomic_float2 : require
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer V { float v[]; };
layout(std430, binding = 1) buffer R { float total; float most; };
layout(std430, binding = 2) writeonly buffer P { float part[]; };
layout(push_constant) uniform N { uint n; };
shared float acc;
void main() {
  if (gl_LocalInvocationIndex == 0u) acc = 0.0;
  barrier();
  const uint i = gl_GlobalInvocationID.x;
  if (i < n) {
    atomicAdd(total, v[i]);
    atomicMax(most, v[i]);
    atomicAdd(acc, v[i]);
  }
  barrier();
  if (gl_LocalInvocationIndex == 0u) part[gl_WorkGroupID.x] = acc;
}
)";

// One workgroup of 64: each invocation exchanges its element into a shared slot and a buffer
// slot (atomic stores set both first), keeping what it took out; the first then loads what is
// left. Whatever the order, the values taken out and the one left are the start and the 64.
// memoryBarrierBuffer: barrier() orders shared memory only.
const char* kExchange32 = R"(#version 450
#extension GL_EXT_shader_atomic_float : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer V { float v[]; };
layout(std430, binding = 1) buffer S { float slot_b; };
layout(std430, binding = 2) writeonly buffer O { float taken[]; };
shared float slot_s;
void main() {
  const uint i = gl_LocalInvocationIndex;
  if (i == 0u) {
    atomicStore(slot_s, -1.0, gl_ScopeWorkgroup, 0, 0);
    atomicStore(slot_b, -1.0, gl_ScopeDevice, 0, 0);
  }
  memoryBarrierBuffer();
  barrier();
  taken[i] = atomicExchange(slot_s, v[i]);
  taken[65u + i] = atomicExchange(slot_b, v[i]);
  memoryBarrierBuffer();
  barrier();
  if (i == 0u) {
    taken[64] = atomicLoad(slot_s, gl_ScopeWorkgroup, 0, 0);
    taken[129] = atomicLoad(slot_b, gl_ScopeDevice, 0, 0);
  }
}
)";

// 64-bit float add on a buffer: every invocation below n adds 1.
const char* kAdd64 = R"(#version 450
#extension GL_EXT_shader_atomic_float : require
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) buffer T { double total; };
layout(push_constant) uniform N { uint n; };
void main() { if (gl_GlobalInvocationID.x < n) atomicAdd(total, 1.0lf); }
)";

// 64-bit float exchange on a buffer (no SPIR-V capability: only the feature says it may run).
const char* kExchange64 = R"(#version 450
#extension GL_EXT_shader_atomic_float : require
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) buffer T { double v[]; };
layout(push_constant) uniform N { uint n; };
void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i < n) atomicExchange(v[i], 2.0lf);
}
)";

// 16-bit float add in shared memory (64 ones), then min with a buffer element.
const char* kFloat16 = R"(#version 450
#extension GL_EXT_shader_atomic_float2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer T { float16_t least; };
shared float16_t acc;
void main() {
  if (gl_LocalInvocationIndex == 0u) acc = float16_t(0.0);
  barrier();
  atomicAdd(acc, float16_t(1.0));
  barrier();
  if (gl_LocalInvocationIndex == 0u) atomicMin(least, acc);
}
)";

// Atomic stores of floats alone, on a buffer and in shared memory.
const char* kStore32 = R"(#version 450
#extension GL_EXT_shader_atomic_float : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer V { float v[]; };
shared float s[64];
void main() {
  const uint i = gl_LocalInvocationIndex;
  atomicStore(s[i], 1.0, gl_ScopeWorkgroup, 0, 0);
  atomicStore(v[i], 2.0, gl_ScopeDevice, 0, 0);
}
)";

// Integer atomics only.
const char* kIntegerOnly = R"(#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer V { uint count; float v[]; };
shared uint seen;
void main() {
  v[gl_GlobalInvocationID.x] += 1.0;
  atomicAdd(seen, 1u);
  atomicAdd(count, 1u);
}
)";

// `got` has exactly the features `on`.
void check_exactly(const FloatAtomics& got, std::initializer_list<bool FloatAtomics::*> on,
                   const char* place) {
  for (const vk::FloatAtomicFeature& f : vk::float_atomic_features()) {
    CAPTURE(place);
    CAPTURE(vk::feature_name(f, false));
    const bool want = std::find(on.begin(), on.end(), f.member) != on.end();
    CHECK(got.*f.member == want);
  }
}

vk::SpirvInfo reflect(const std::vector<std::uint32_t>& words) {
  auto r = vk::reflect_spirv(words);
  REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  return *r;
}

bool on_lavapipe(const Device& dev) {
  return dev.info().name.find("llvmpipe") != std::string::npos;
}

// Integer-valued floats in [-64, 64): their sums are exact in any order.
std::vector<float> random_values(std::size_t n) {
  std::mt19937 rng(20261207);
  std::uniform_int_distribution<int> u(-64, 63);
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(u(rng));
  return v;
}

}  // namespace

TEST_CASE("vulkan float atomics: reflection finds width, operation and place") {
  using F = FloatAtomics;
  const vk::SpirvInfo f32 = reflect(to_spirv(kFloat32));
  check_exactly(f32.float_atomics_buffer, {&F::float32_add, &F::float32_min_max}, "buffers");
  check_exactly(f32.float_atomics_shared, {&F::float32_add}, "shared");

  const vk::SpirvInfo x32 = reflect(to_spirv(kExchange32));
  check_exactly(x32.float_atomics_buffer, {&F::float32}, "buffers");
  check_exactly(x32.float_atomics_shared, {&F::float32}, "shared");

  const vk::SpirvInfo store = reflect(to_spirv(kStore32));
  check_exactly(store.float_atomics_buffer, {&F::float32}, "buffers");
  check_exactly(store.float_atomics_shared, {&F::float32}, "shared");

  const vk::SpirvInfo add64 = reflect(to_spirv(kAdd64));
  check_exactly(add64.float_atomics_buffer, {&F::float64_add}, "buffers");
  check_exactly(add64.float_atomics_shared, {}, "shared");

  const vk::SpirvInfo x64 = reflect(to_spirv(kExchange64));
  check_exactly(x64.float_atomics_buffer, {&F::float64}, "buffers");

  const vk::SpirvInfo f16 = reflect(to_spirv(kFloat16));
  check_exactly(f16.float_atomics_buffer, {&F::float16_min_max}, "buffers");
  check_exactly(f16.float_atomics_shared, {&F::float16_add}, "shared");

  const vk::SpirvInfo none = reflect(to_spirv(kIntegerOnly));
  check_exactly(none.float_atomics_buffer, {}, "buffers");
  check_exactly(none.float_atomics_shared, {}, "shared");

  // Vulkan 1.0's SPIR-V: the buffers are Uniform-class BufferBlocks.
  const vk::SpirvInfo uniform = reflect(to_spirv(kFloat32, shaderc_env_version_vulkan_1_0));
  check_exactly(uniform.float_atomics_buffer, {&F::float32_add, &F::float32_min_max}, "buffers");
  check_exactly(uniform.float_atomics_shared, {&F::float32_add}, "shared");
}

TEST_CASE("vulkan float atomics: an untraced pointer's atomic takes its result type, on buffers") {
  const std::uint32_t kCapability = (2u << 16) | 17u, kShader = 1;
  const std::uint32_t kTypeFloat32 = (3u << 16) | 22u, kTypeFloat16 = kTypeFloat32;
  // OpAtomicFAddEXT (6035) and OpAtomicFMaxEXT (5615) of result type %5 on pointer %12, which
  // no instruction defines.
  const std::uint32_t kFAdd = (7u << 16) | 6035u, kFMax = (7u << 16) | 5615u;
  const vk::SpirvInfo add = reflect(
      bare_module({kCapability, kShader, kTypeFloat32, 5, 32, kFAdd, 5, 11, 12, 13, 14, 15}));
  check_exactly(add.float_atomics_buffer, {&FloatAtomics::float32_add}, "buffers");
  check_exactly(add.float_atomics_shared, {}, "shared");
  const vk::SpirvInfo max = reflect(
      bare_module({kCapability, kShader, kTypeFloat16, 5, 16, kFMax, 5, 11, 12, 13, 14, 15}));
  check_exactly(max.float_atomics_buffer, {&FloatAtomics::float16_min_max}, "buffers");
  // OpAtomicIAdd (234) of an integer result: no float atomic.
  const std::uint32_t kTypeInt = (4u << 16) | 21u, kIAdd = (7u << 16) | 234u;
  const vk::SpirvInfo integer = reflect(
      bare_module({kCapability, kShader, kTypeInt, 5, 32, 0, kIAdd, 5, 11, 12, 13, 14, 15}));
  check_exactly(integer.float_atomics_buffer, {}, "buffers");
}

TEST_CASE("vulkan float atomics: a device without the feature for the place refuses, naming it") {
  using F = FloatAtomics;
  vk::SpirvInfo si;
  si.capabilities = {1};
  si.local_size[0] = 64;
  si.local_size[1] = si.local_size[2] = 1;
  struct Case {
    bool F::*module_member;
    bool module_shared;
    bool F::*device_member;
    bool device_shared;
    const char* refusal;  // nullptr: accepted
  };
  const char* tail = ": NVIDIA H200 does not support it";
  for (const Case& k : {
           Case{&F::float32_add, false, &F::float32_add, false, nullptr},
           Case{&F::float32_add, true, &F::float32_add, true, nullptr},
           Case{&F::float32_add, false, &F::float32_add, true,
                "the shader performs 32-bit float atomic add on buffers, which needs "
                "shaderBufferFloat32AtomicAdd (VK_EXT_shader_atomic_float)"},
           Case{&F::float16_min_max, true, &F::float16_min_max, false,
                "the shader performs 16-bit float atomic min or max on shared memory, which needs "
                "shaderSharedFloat16AtomicMinMax (VK_EXT_shader_atomic_float2)"},
           Case{&F::float64, false, &F::float64_add, false,
                "the shader performs 64-bit float atomic load, store or exchange on buffers, "
                "which needs shaderBufferFloat64Atomics (VK_EXT_shader_atomic_float)"},
           Case{&F::float32_min_max, false, &F::float32_add, false,
                "shaderBufferFloat32AtomicMinMax (VK_EXT_shader_atomic_float2)"},
           Case{&F::float16, true, &F::float16, true, nullptr},
       }) {
    CAPTURE(k.refusal == nullptr ? "accepted" : k.refusal);
    si.float_atomics_buffer = si.float_atomics_shared = {};
    // Through named references: GCC 12 writes `(c ? x : y).*m` into a temporary copy.
    FloatAtomics& module_place =
        k.module_shared ? si.float_atomics_shared : si.float_atomics_buffer;
    module_place.*k.module_member = true;
    vk::DeviceCaps c = vk::snapshots::h200(true);
    c.float_atomics_buffer = c.float_atomics_shared = {};
    FloatAtomics& device_place = k.device_shared ? c.float_atomics_shared : c.float_atomics_buffer;
    device_place.*k.device_member = true;
    const Status s = vk::check_spirv(si, Dim3{64, 1, 1}, c, "NVIDIA H200");
    if (k.refusal == nullptr) {
      CHECK_MESSAGE(s.ok(), s.to_string());
    } else {
      CHECK(s.code() == StatusCode::unavailable);
      CHECK_MESSAGE(s.message().find(k.refusal) != std::string::npos, s.message());
      CHECK_MESSAGE(s.message().find(tail) != std::string::npos, s.message());
    }
  }
  // The capability first: declared with neither place's feature, it is what the refusal names.
  si.float_atomics_buffer = si.float_atomics_shared = {};
  si.float_atomics_buffer.float64_add = true;
  si.capabilities = {1, vk::spv_cap::kFloat64, vk::spv_cap::kAtomicFloat64AddEXT};
  vk::DeviceCaps none = vk::snapshots::h200(true);
  none.float_atomics_buffer = none.float_atomics_shared = {};
  const Status s = vk::check_spirv(si, Dim3{64, 1, 1}, none, "NVIDIA H200");
  CHECK(s.code() == StatusCode::unavailable);
  CHECK_MESSAGE(s.message().find("needs SPIR-V capability AtomicFloat64AddEXT "
                                 "(VK_EXT_shader_atomic_float), which NVIDIA H200 does not "
                                 "support") != std::string::npos,
                s.message());
}

// NVIDIA's driver as read (the h200 snapshot: VK_EXT_shader_atomic_float without _float2):
// 32- and 64-bit adds and exchanges pass in both places; a maximum or a 16-bit atomic is
// refused naming the _float2 capability, which the driver does not offer.
TEST_CASE("vulkan float atomics: NVIDIA's driver takes 32/64-bit adds, refuses min/max and f16") {
  using F = FloatAtomics;
  const vk::DeviceCaps nvidia = vk::snapshots::h200(true);
  struct Case {
    bool F::*member;
    std::uint32_t capability;  // what the module declares beside Shader and its width's
    const char* refusal;       // nullptr: accepted
  };
  for (const bool shared : {false, true})
    for (const Case& k : {
             Case{&F::float32_add, vk::spv_cap::kAtomicFloat32AddEXT, nullptr},
             Case{&F::float64_add, vk::spv_cap::kAtomicFloat64AddEXT, nullptr},
             Case{&F::float32, 0, nullptr},
             Case{&F::float64, 0, nullptr},
             Case{&F::float32_min_max, vk::spv_cap::kAtomicFloat32MinMaxEXT,
                  "AtomicFloat32MinMaxEXT (VK_EXT_shader_atomic_float2)"},
             Case{&F::float16_add, vk::spv_cap::kAtomicFloat16AddEXT,
                  "AtomicFloat16AddEXT (VK_EXT_shader_atomic_float2)"},
         }) {
      vk::SpirvInfo si;
      si.capabilities = {1};
      if (k.capability != 0) si.capabilities.push_back(k.capability);
      if (k.member == &F::float64 || k.member == &F::float64_add)
        si.capabilities.push_back(vk::spv_cap::kFloat64);
      si.local_size[0] = 64;
      si.local_size[1] = si.local_size[2] = 1;
      FloatAtomics& place = shared ? si.float_atomics_shared : si.float_atomics_buffer;
      place.*k.member = true;  // a named reference: see the case above (GCC 12)
      CAPTURE(shared);
      CAPTURE(k.capability);
      const Status s = vk::check_spirv(si, Dim3{64, 1, 1}, nvidia, "NVIDIA H200");
      if (k.refusal == nullptr) {
        CHECK_MESSAGE(s.ok(), s.to_string());
      } else {
        CHECK(s.code() == StatusCode::unavailable);
        CHECK_MESSAGE(s.message().find(k.refusal) != std::string::npos, s.message());
      }
    }
}

// Under the validation layer where it is installed: a feature used and not enabled at device
// creation is an error there.
TEST_CASE("vulkan float atomics: 32-bit sums, maxima and exchanges match the CPU") {
  auto dev = testing::open_validated_if_possible();
  const std::uint32_t n = 1000, block = 64, groups = (n + block - 1) / block;
  const std::vector<float> v = random_values(n);
  auto bv = dev->alloc(n * 4), br = dev->alloc(8), bp = dev->alloc(groups * 4);
  REQUIRE((bv.ok() && br.ok() && bp.ok()));
  REQUIRE(dev->upload(**bv, v.data(), n * 4).ok());
  Config c;
  c.launch().block = {block, 1, 1};
  for (const KernelSource& src : {glsl_text(kFloat32), precompiled(to_spirv(kFloat32))}) {
    CAPTURE(src.spirv.empty());
    auto k = dev->compile(src, c);
    if (on_lavapipe(*dev)) REQUIRE_MESSAGE(k.ok(), k.status().to_string());
    if (!k.ok()) {  // a device without them: refused by name, before any launch
      CHECK(k.status().code() == StatusCode::unavailable);
      CHECK_MESSAGE(k.status().message().find("Float32") != std::string::npos,
                    k.status().message());
      MESSAGE("refused on " << dev->info().name << ": " << k.status().message());
      continue;
    }
    const float start[2] = {0.0f, -1e30f};
    REQUIRE(dev->upload(**br, start, 8).ok());
    const ArgValue args[] = {ArgValue::buf(**bv, ElemType::f32, n),
                             ArgValue::buf(**br, ElemType::f32, 2),
                             ArgValue::buf(**bp, ElemType::f32, groups), ArgValue(n)};
    REQUIRE(dev->launch(**k, {{groups, 1, 1}, {block, 1, 1}, 0}, args).ok());
    float got[2];
    std::vector<float> part(groups);
    REQUIRE(dev->download(**br, got, 8).ok());
    REQUIRE(dev->download(**bp, part.data(), groups * 4).ok());
    float total = 0.0f;
    for (float x : v) total += x;
    CHECK(got[0] == total);
    CHECK(got[1] == *std::max_element(v.begin(), v.end()));
    for (std::uint32_t g = 0; g < groups; ++g) {
      float want = 0.0f;
      for (std::uint32_t i = g * block; i < std::min(n, (g + 1) * block); ++i) want += v[i];
      CHECK(part[g] == want);
    }
  }

  auto x = dev->compile(precompiled(to_spirv(kExchange32)), c);
  if (on_lavapipe(*dev)) REQUIRE_MESSAGE(x.ok(), x.status().to_string());
  if (x.ok()) {
    auto bs = dev->alloc(4), bt = dev->alloc(130 * 4);
    REQUIRE((bs.ok() && bt.ok()));
    const ArgValue args[] = {ArgValue::buf(**bv, ElemType::f32, n),
                             ArgValue::buf(**bs, ElemType::f32, 1),
                             ArgValue::buf(**bt, ElemType::f32, 130)};
    REQUIRE(dev->launch(**x, {{1, 1, 1}, {64, 1, 1}, 0}, args).ok());
    std::vector<float> taken(130);
    REQUIRE(dev->download(**bt, taken.data(), 130 * 4).ok());
    std::vector<float> want(v.begin(), v.begin() + 64);
    want.push_back(-1.0f);
    std::sort(want.begin(), want.end());
    for (int place = 0; place < 2; ++place) {
      CAPTURE(place);  // 0: shared memory, 1: the buffer
      std::vector<float> got(taken.begin() + place * 65, taken.begin() + place * 65 + 65);
      std::sort(got.begin(), got.end());
      CHECK(got == want);
    }
  }
  testing::check_no_validation_error(*dev);
}

TEST_CASE("vulkan float atomics: 16- and 64-bit ones run where the device has them, else refused") {
  auto dev = testing::open_validated_if_possible();
  const std::uint32_t n = 1000, block = 64, groups = (n + block - 1) / block;
  Config c;
  c.launch().block = {block, 1, 1};
  struct Kernel {
    const char* glsl;
    const char* lavapipe_refusal;  // what the refusal names on lavapipe (Mesa 22.3)
  };
  for (const Kernel& kernel :
       {Kernel{kAdd64,
               "needs SPIR-V capability AtomicFloat64AddEXT (VK_EXT_shader_atomic_float), which "
               "llvmpipe"},
        Kernel{kExchange64,
               "64-bit float atomic load, store or exchange on buffers, which needs "
               "shaderBufferFloat64Atomics (VK_EXT_shader_atomic_float): llvmpipe"},
        Kernel{kFloat16, "needs SPIR-V capability AtomicFloat16"}}) {
    CAPTURE(kernel.lavapipe_refusal);
    auto k = dev->compile(precompiled(to_spirv(kernel.glsl)), c);
    if (on_lavapipe(*dev)) {
      REQUIRE_FALSE(k.ok());
      CHECK(k.status().code() == StatusCode::unavailable);
      CHECK_MESSAGE(k.status().message().find(kernel.lavapipe_refusal) != std::string::npos,
                    k.status().message());
      continue;
    }
    if (!k.ok()) {
      CHECK(k.status().code() == StatusCode::unavailable);
      MESSAGE("refused on " << dev->info().name << ": " << k.status().message());
      continue;
    }
    if (kernel.glsl == kFloat16) {  // 64 ones summed in shared memory, then the min with 1000
      auto b = dev->alloc(4);
      REQUIRE(b.ok());
      const std::uint16_t start[2] = {0x63D0, 0};  // 1000 in binary16
      REQUIRE(dev->upload(**b, start, 4).ok());
      const ArgValue args[] = {ArgValue::buf(**b, ElemType::f16, 2)};
      REQUIRE(dev->launch(**k, {{1, 1, 1}, {64, 1, 1}, 0}, args).ok());
      std::uint16_t got[2] = {0, 0};
      REQUIRE(dev->download(**b, got, 4).ok());
      CHECK(got[0] == 0x5400);  // 64 in binary16
      continue;
    }
    const bool add = kernel.glsl == kAdd64;
    auto b = dev->alloc(n * 8);
    REQUIRE(b.ok());
    const std::vector<double> zeros(n, 0.0);
    REQUIRE(dev->upload(**b, zeros.data(), n * 8).ok());
    const ArgValue args[] = {ArgValue::buf(**b, ElemType::f64, add ? 1 : n), ArgValue(n)};
    REQUIRE(dev->launch(**k, {{groups, 1, 1}, {block, 1, 1}, 0}, args).ok());
    std::vector<double> got(n);
    REQUIRE(dev->download(**b, got.data(), n * 8).ok());
    if (add) {
      CHECK(got[0] == static_cast<double>(n));
    } else {
      CHECK(std::all_of(got.begin(), got.end(), [](double d) { return d == 2.0; }));
    }
  }
  testing::check_no_validation_error(*dev);
}
