// 64-bit integer atomics (SPIR-V Int64Atomics): reflection finds where a module's atomics act
// (buffers, shared memory), a device lacking the feature for that place refuses the module
// naming it (snapshots), and on the default device (lavapipe) both kinds run and add up to the
// CPU's sums, or are refused naming the feature the device lacks (float atomics:
// vulkan_float_atomics_test.cpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <shaderc/shaderc.hpp>
#include <string>
#include <vector>

#include "compute_pipeline.hpp"
#include "device_facts.hpp"
#include "device_snapshots.hpp"
#include "spirv_capabilities.hpp"
#include "spirv_modules.hpp"
#include "spirv_reflect.hpp"
#include "tune/tune.hpp"
#include "tune/vulkan.hpp"
#include "vulkan_test_device.hpp"

namespace {

using namespace tune;

// Each invocation adds its element into one 64-bit total in a buffer.
const char* kBufferSum = R"(#version 450
#extension GL_ARB_gpu_shader_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer V { uint64_t v[]; };
layout(std430, binding = 1) buffer T { uint64_t total[]; };
layout(push_constant) uniform P { uint n; };
void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i < n) atomicAdd(total[0], v[i]);
}
)";

// Each workgroup sums its elements in shared memory and stores the sum (no buffer atomics).
const char* kSharedSum = R"(#version 450
#extension GL_ARB_gpu_shader_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer V { uint64_t v[]; };
layout(std430, binding = 1) writeonly buffer T { uint64_t part[]; };
layout(push_constant) uniform P { uint n; };
shared uint64_t acc;
void main() {
  if (gl_LocalInvocationIndex == 0u) acc = 0ul;
  barrier();
  const uint i = gl_GlobalInvocationID.x;
  if (i < n) atomicAdd(acc, v[i]);
  barrier();
  if (gl_LocalInvocationIndex == 0u) part[gl_WorkGroupID.x] = acc;
}
)";

// Compare-exchange in shared memory, exchange, load and store on a buffer (the other operand
// layouts: OpAtomicStore's pointer comes first).
const char* kOtherAtomics = R"(#version 450
#extension GL_ARB_gpu_shader_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer V { uint64_t v[]; };
shared uint64_t slot;
void main() {
  atomicCompSwap(slot, 0ul, v[0]);
  atomicExchange(v[1], 7ul);
  atomicStore(v[2], atomicLoad(v[3], gl_ScopeDevice, 0, 0), gl_ScopeDevice, 0, 0);
}
)";

// 64-bit integers without 64-bit atomics, and 32-bit atomics beside them.
const char* kNoWideAtomics = R"(#version 450
#extension GL_ARB_gpu_shader_int64 : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer V { uint count; uint64_t v[]; };
shared uint seen;
void main() {
  v[gl_GlobalInvocationID.x] += 1ul;
  atomicAdd(seen, 1u);
  atomicAdd(count, 1u);
}
)";

using testing::bare_module;
using testing::precompiled;
using testing::to_spirv;

// Elements above 2^32, so that a sum kept in 32 bits is wrong.
std::vector<std::uint64_t> random_values(std::size_t n) {
  std::mt19937_64 rng(20261207);
  std::uniform_int_distribution<std::uint64_t> u(1ull << 33, 1ull << 40);
  std::vector<std::uint64_t> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

}  // namespace

TEST_CASE("vulkan atomics: int64: reflection tells buffer atomics from shared-memory ones") {
  auto buffer = vk::reflect_spirv(to_spirv(kBufferSum));
  REQUIRE_MESSAGE(buffer.ok(), buffer.status().to_string());
  CHECK(buffer->int64_atomics_buffer);
  CHECK_FALSE(buffer->int64_atomics_shared);

  auto shared = vk::reflect_spirv(to_spirv(kSharedSum));
  REQUIRE_MESSAGE(shared.ok(), shared.status().to_string());
  CHECK(shared->int64_atomics_shared);
  CHECK_FALSE(shared->int64_atomics_buffer);

  auto none = vk::reflect_spirv(to_spirv(kNoWideAtomics));
  REQUIRE_MESSAGE(none.ok(), none.status().to_string());
  CHECK_FALSE(none->int64_atomics_buffer);
  CHECK_FALSE(none->int64_atomics_shared);

  auto both = vk::reflect_spirv(to_spirv(kOtherAtomics));
  REQUIRE_MESSAGE(both.ok(), both.status().to_string());
  CHECK(both->int64_atomics_buffer);
  CHECK(both->int64_atomics_shared);

  // Vulkan 1.0's SPIR-V: the buffer is a Uniform-class BufferBlock.
  auto uniform = vk::reflect_spirv(to_spirv(kBufferSum, shaderc_env_version_vulkan_1_0));
  REQUIRE_MESSAGE(uniform.ok(), uniform.status().to_string());
  CHECK(uniform->int64_atomics_buffer);
  CHECK_FALSE(uniform->int64_atomics_shared);
}

TEST_CASE("vulkan atomics: int64: what reflection cannot trace asks for the buffer feature") {
  const std::uint32_t kCapability = (2u << 16) | 17u, kShader = 1, kInt64Atomics = 12;
  // Declared, with no atomic instruction.
  auto declared =
      vk::reflect_spirv(bare_module({kCapability, kShader, kCapability, kInt64Atomics}));
  REQUIRE_MESSAGE(declared.ok(), declared.status().to_string());
  CHECK(declared->int64_atomics_buffer);
  CHECK_FALSE(declared->int64_atomics_shared);
  // OpAtomicIAdd (234) on a pointer no instruction defines.
  const std::uint32_t kAtomicIAdd = (7u << 16) | 234u;
  auto untraced = vk::reflect_spirv(bare_module(
      {kCapability, kShader, kCapability, kInt64Atomics, kAtomicIAdd, 10, 11, 12, 13, 14, 15}));
  REQUIRE_MESSAGE(untraced.ok(), untraced.status().to_string());
  CHECK(untraced->int64_atomics_buffer);
  // The same instruction without the capability: nothing asked (32-bit atomics need nothing).
  auto narrow =
      vk::reflect_spirv(bare_module({kCapability, kShader, kAtomicIAdd, 10, 11, 12, 13, 14, 15}));
  REQUIRE_MESSAGE(narrow.ok(), narrow.status().to_string());
  CHECK_FALSE(narrow->int64_atomics_buffer);
  CHECK_FALSE(narrow->int64_atomics_shared);
}

TEST_CASE("vulkan atomics: int64: a device without the feature for where they act refuses") {
  using vk::snapshots::h200;
  vk::SpirvInfo si;
  si.capabilities = {1, vk::spv_cap::kInt64, vk::spv_cap::kInt64Atomics};
  si.local_size[0] = 64;
  si.local_size[1] = si.local_size[2] = 1;
  struct Case {
    bool module_buffer, module_shared, device_buffer, device_shared;
    const char* refusal;  // nullptr: accepted
  };
  for (const Case& k : {
           Case{true, false, true, false, nullptr},
           Case{true, false, false, true,
                "64-bit integer atomics on buffers, which needs "
                "shaderBufferInt64Atomics: NVIDIA H200 does not "
                "support it"},
           Case{false, true, true, false,
                "64-bit integer atomics on shared memory, which needs "
                "shaderSharedInt64Atomics: NVIDIA H200 does not "
                "support it"},
           Case{false, true, false, true, nullptr},
           Case{true, true, true, true, nullptr},
           Case{true, true, true, false, "shaderSharedInt64Atomics"},
           Case{true, false, false, false,
                "needs SPIR-V capability Int64Atomics, which NVIDIA "
                "H200 does not support"},
       }) {
    CAPTURE(k.module_buffer);
    CAPTURE(k.module_shared);
    CAPTURE(k.device_buffer);
    CAPTURE(k.device_shared);
    si.int64_atomics_buffer = k.module_buffer;
    si.int64_atomics_shared = k.module_shared;
    vk::DeviceCaps c = h200(true);
    c.int64_atomics_buffer = k.device_buffer;
    c.int64_atomics_shared = k.device_shared;
    const Status s = vk::check_spirv(si, Dim3{64, 1, 1}, c, "NVIDIA H200");
    if (k.refusal == nullptr) {
      CHECK_MESSAGE(s.ok(), s.to_string());
    } else {
      CHECK(s.code() == StatusCode::unavailable);
      CHECK_MESSAGE(s.message().find(k.refusal) != std::string::npos, s.message());
    }
  }
}

TEST_CASE("vulkan atomics: int64: sums on buffers and in shared memory match the CPU's") {
  auto dev = testing::open_vulkan_or_skip();
  const std::uint32_t n = 1000, block = 64, groups = (n + block - 1) / block;
  const std::vector<std::uint64_t> v = random_values(n);
  auto bv = dev->alloc(n * 8), bt = dev->alloc(groups * 8);
  REQUIRE((bv.ok() && bt.ok()));
  REQUIRE(dev->upload(**bv, v.data(), n * 8).ok());
  Config c;
  c.launch().block = {block, 1, 1};
  for (const char* glsl : {kBufferSum, kSharedSum}) {
    const bool on_buffer = glsl == kBufferSum;
    CAPTURE(on_buffer);
    auto k = dev->compile(precompiled(to_spirv(glsl)), c);
    // lavapipe (Mesa 22.3) has both features: there the sums must run.
    if (dev->info().name.find("llvmpipe") != std::string::npos)
      REQUIRE_MESSAGE(k.ok(), k.status().to_string());
    if (!k.ok()) {  // a device without the feature: refused by name, before any launch
      CHECK(k.status().code() == StatusCode::unavailable);
      const char* feature = on_buffer ? "shaderBufferInt64Atomics" : "shaderSharedInt64Atomics";
      CHECK_MESSAGE(k.status().message().find(feature) != std::string::npos, k.status().message());
      MESSAGE("refused on " << dev->info().name << ": " << k.status().message());
      continue;
    }
    const std::vector<std::uint64_t> zeros(groups, 0);
    REQUIRE(dev->upload(**bt, zeros.data(), groups * 8).ok());
    const ArgValue args[] = {ArgValue::buf(**bv, ElemType::u64, n),
                             ArgValue::buf(**bt, ElemType::u64, groups), ArgValue(n)};
    REQUIRE(dev->launch(**k, {{groups, 1, 1}, {block, 1, 1}, 0}, args).ok());
    std::vector<std::uint64_t> got(groups);
    REQUIRE(dev->download(**bt, got.data(), groups * 8).ok());
    if (on_buffer) {
      std::uint64_t want = 0;
      for (std::uint64_t x : v) want += x;
      CHECK(got[0] == want);
    } else {
      for (std::uint32_t g = 0; g < groups; ++g) {
        std::uint64_t want = 0;
        for (std::uint32_t i = g * block; i < std::min(n, (g + 1) * block); ++i) want += v[i];
        CHECK(got[g] == want);
      }
    }
  }
}
