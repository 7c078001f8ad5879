// Integer dot products (SPIR-V DotProduct*, Vulkan 1.3's shaderIntegerDotProduct): a module
// with packed 4 x 8-bit signed dot products (SPIR-V assembly: Debian 12's glslang has no GLSL
// for them) declares its capabilities, a device without the feature refuses it naming the
// capability (snapshots; the unpacked form also needs Int8), and on the default device
// (lavapipe has the feature) it runs and matches the CPU on random bytes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
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

// c[i] = the signed dot product of a[i] and b[i], each four packed signed bytes, for i < n.
const char* kPackedDot = R"(
OpCapability Shader
OpCapability DotProductInput4x8BitPackedKHR
OpCapability DotProductKHR
OpExtension "SPV_KHR_integer_dot_product"
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main" %gid %a %b %c %n
OpExecutionMode %main LocalSize 64 1 1
OpDecorate %gid BuiltIn GlobalInvocationId
OpDecorate %arr ArrayStride 4
OpMemberDecorate %blk 0 Offset 0
OpDecorate %blk Block
OpDecorate %a DescriptorSet 0
OpDecorate %a Binding 0
OpDecorate %b DescriptorSet 0
OpDecorate %b Binding 1
OpDecorate %c DescriptorSet 0
OpDecorate %c Binding 2
OpMemberDecorate %pcb 0 Offset 0
OpDecorate %pcb Block
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%int = OpTypeInt 32 1
%bool = OpTypeBool
%v3 = OpTypeVector %uint 3
%pv3 = OpTypePointer Input %v3
%gid = OpVariable %pv3 Input
%arr = OpTypeRuntimeArray %uint
%blk = OpTypeStruct %arr
%pblk = OpTypePointer StorageBuffer %blk
%a = OpVariable %pblk StorageBuffer
%b = OpVariable %pblk StorageBuffer
%c = OpVariable %pblk StorageBuffer
%puint = OpTypePointer StorageBuffer %uint
%pcb = OpTypeStruct %uint
%ppcb = OpTypePointer PushConstant %pcb
%n = OpVariable %ppcb PushConstant
%ppcu = OpTypePointer PushConstant %uint
%int0 = OpConstant %int 0
%main = OpFunction %void None %fn
%entry = OpLabel
%g = OpLoad %v3 %gid
%i = OpCompositeExtract %uint %g 0
%np = OpAccessChain %ppcu %n %int0
%nv = OpLoad %uint %np
%in = OpULessThan %bool %i %nv
OpSelectionMerge %end None
OpBranchConditional %in %body %end
%body = OpLabel
%pa = OpAccessChain %puint %a %int0 %i
%va = OpLoad %uint %pa
%pb = OpAccessChain %puint %b %int0 %i
%vb = OpLoad %uint %pb
%d = OpSDotKHR %int %va %vb PackedVectorFormat4x8BitKHR
%du = OpBitcast %uint %d
%pc = OpAccessChain %puint %c %int0 %i
OpStore %pc %du
OpBranch %end
%end = OpLabel
OpReturn
OpFunctionEnd
)";

// The signed dot product of two words of four packed signed bytes.
std::int32_t packed_dot(std::uint32_t a, std::uint32_t b) {
  std::int32_t sum = 0;
  for (int byte = 0; byte < 4; ++byte)
    sum += static_cast<std::int8_t>(a >> (8 * byte)) * static_cast<std::int8_t>(b >> (8 * byte));
  return sum;
}

}  // namespace

TEST_CASE("vulkan dot product: the module declares the capabilities; a device without refuses") {
  auto info = vk::reflect_spirv(testing::assemble(kPackedDot));
  REQUIRE_MESSAGE(info.ok(), info.status().to_string());
  const auto& caps = info->capabilities;
  CHECK(std::find(caps.begin(), caps.end(), vk::spv_cap::kDotProductKHR) != caps.end());
  CHECK(std::find(caps.begin(), caps.end(), vk::spv_cap::kDotProductInput4x8BitPackedKHR) !=
        caps.end());

  vk::DeviceCaps with = vk::snapshots::lavapipe();
  CHECK_MESSAGE(vk::check_spirv(*info, Dim3{64, 1, 1}, with, "llvmpipe").ok(),
                vk::check_spirv(*info, Dim3{64, 1, 1}, with, "llvmpipe").to_string());
  vk::DeviceCaps without = with;
  without.integer_dot_product = false;
  const Status s = vk::check_spirv(*info, Dim3{64, 1, 1}, without, "llvmpipe");
  CHECK(s.code() == StatusCode::unavailable);
  CHECK_MESSAGE(s.message().find("needs SPIR-V capability DotProductInput4x8BitPackedKHR "
                                 "(VK_KHR_shader_integer_dot_product), which llvmpipe does "
                                 "not support") != std::string::npos,
                s.message());

  // The unpacked form (vectors of four 8-bit integers) also needs Int8.
  vk::SpirvInfo unpacked;
  unpacked.capabilities = {1, vk::spv_cap::kDotProductInput4x8BitKHR, vk::spv_cap::kDotProductKHR};
  unpacked.local_size[0] = 64;
  unpacked.local_size[1] = unpacked.local_size[2] = 1;
  vk::DeviceCaps no_int8 = with;
  no_int8.int8 = false;
  const Status u = vk::check_spirv(unpacked, Dim3{64, 1, 1}, no_int8, "llvmpipe");
  CHECK_MESSAGE(u.message().find("needs SPIR-V capability Int8, which llvmpipe does not support "
                                 "(the shader declares capability DotProductInput4x8BitKHR "
                                 "(VK_KHR_shader_integer_dot_product), which implies it)") !=
                    std::string::npos,
                u.message());
}

TEST_CASE("vulkan dot product: packed signed 4 x 8-bit dot products match the CPU") {
  auto dev = testing::open_validated_if_possible();  // an unenabled feature is an error there
  const std::uint32_t n = 1000, block = 64, groups = (n + block - 1) / block;
  std::mt19937 rng(20261207);
  std::vector<std::uint32_t> a(n), b(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    a[i] = rng();
    b[i] = rng();
  }
  a[0] = b[0] = 0x80808080u;  // -128 four times: the largest product sum, 65536
  auto k = dev->compile(testing::precompiled(testing::assemble(kPackedDot)), Config{});
  if (dev->info().name.find("llvmpipe") != std::string::npos)
    REQUIRE_MESSAGE(k.ok(), k.status().to_string());  // lavapipe (Mesa 22.3) has the feature
  if (!k.ok()) {
    CHECK(k.status().code() == StatusCode::unavailable);
    CHECK_MESSAGE(k.status().message().find("DotProduct") != std::string::npos,
                  k.status().message());
    MESSAGE("refused on " << dev->info().name << ": " << k.status().message());
    return;
  }
  auto ba = dev->alloc(n * 4), bb = dev->alloc(n * 4), bc = dev->alloc(n * 4);
  REQUIRE((ba.ok() && bb.ok() && bc.ok()));
  REQUIRE(dev->upload(**ba, a.data(), n * 4).ok());
  REQUIRE(dev->upload(**bb, b.data(), n * 4).ok());
  const ArgValue args[] = {ArgValue::buf(**ba, ElemType::u32, n),
                           ArgValue::buf(**bb, ElemType::u32, n),
                           ArgValue::buf(**bc, ElemType::i32, n), ArgValue(n)};
  REQUIRE(dev->launch(**k, {{groups, 1, 1}, {block, 1, 1}, 0}, args).ok());
  std::vector<std::int32_t> got(n);
  REQUIRE(dev->download(**bc, got.data(), n * 4).ok());
  int wrong = 0;
  for (std::uint32_t i = 0; i < n; ++i) wrong += got[i] != packed_dot(a[i], b[i]);
  CHECK(wrong == 0);
  CHECK(got[0] == 65536);
  testing::check_no_validation_error(*dev);
}
