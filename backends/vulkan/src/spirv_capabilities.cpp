#include "spirv_capabilities.hpp"

#include <algorithm>

namespace tune::vk {

namespace spv_cap {

const CoreCapability* find_core(std::uint32_t cap) {
  auto it = std::find_if(std::begin(kCore), std::end(kCore),
                         [cap](const CoreCapability& c) { return c.cap == cap; });
  return it != std::end(kCore) ? &*it : nullptr;
}

bool known(std::uint32_t cap) {
  return std::find(std::begin(kNamed), std::end(kNamed), cap) != std::end(kNamed) ||
         find_core(cap) != nullptr;
}

std::span<const std::uint32_t> implied(std::uint32_t cap) {
  static constexpr std::uint32_t kNonUniform[] = {kGroupNonUniform};
  static constexpr std::uint32_t kInt64Only[] = {kInt64};
  static constexpr std::uint32_t kStorage16[] = {kStorageBuffer16BitAccess};
  static constexpr std::uint32_t kStorage8[] = {kStorageBuffer8BitAccess};
  static constexpr std::uint32_t kBf16Type[] = {kBFloat16TypeKHR};
  static constexpr std::uint32_t kBf16Matrix[] = {kBFloat16TypeKHR, kCooperativeMatrixKHR};
  static constexpr std::uint32_t kInt8Only[] = {kInt8};
  switch (cap) {
    case kDotProductInput4x8BitKHR:
      return kInt8Only;
    case kInt64Atomics:
      return kInt64Only;
    case kGroupNonUniformVote:
    case kGroupNonUniformArithmetic:
    case kGroupNonUniformBallot:
    case kGroupNonUniformShuffle:
    case kGroupNonUniformShuffleRelative:
    case kGroupNonUniformClustered:
    case kGroupNonUniformQuad:
      return kNonUniform;
    case kUniformAndStorageBuffer16BitAccess:
      return kStorage16;
    case kUniformAndStorageBuffer8BitAccess:
      return kStorage8;
    case kBFloat16DotProductKHR:
      return kBf16Type;
    case kBFloat16CooperativeMatrixKHR:
      return kBf16Matrix;
    default:
      return {};
  }
}

}  // namespace spv_cap

std::string capability_name(std::uint32_t cap) {
  switch (cap) {
    case spv_cap::kFloat16:
      return "Float16";
    case spv_cap::kFloat64:
      return "Float64";
    case spv_cap::kInt64:
      return "Int64";
    case spv_cap::kInt64Atomics:
      return "Int64Atomics";
    case spv_cap::kInt16:
      return "Int16";
    case spv_cap::kInt8:
      return "Int8";
    case spv_cap::kGroupNonUniform:
      return "GroupNonUniform";
    case spv_cap::kGroupNonUniformVote:
      return "GroupNonUniformVote";
    case spv_cap::kGroupNonUniformArithmetic:
      return "GroupNonUniformArithmetic";
    case spv_cap::kGroupNonUniformBallot:
      return "GroupNonUniformBallot";
    case spv_cap::kGroupNonUniformShuffle:
      return "GroupNonUniformShuffle";
    case spv_cap::kGroupNonUniformShuffleRelative:
      return "GroupNonUniformShuffleRelative";
    case spv_cap::kGroupNonUniformClustered:
      return "GroupNonUniformClustered";
    case spv_cap::kGroupNonUniformQuad:
      return "GroupNonUniformQuad";
    case spv_cap::kStorageBuffer16BitAccess:
      return "StorageBuffer16BitAccess";
    case spv_cap::kUniformAndStorageBuffer16BitAccess:
      return "UniformAndStorageBuffer16BitAccess";
    case spv_cap::kStorageBuffer8BitAccess:
      return "StorageBuffer8BitAccess";
    case spv_cap::kUniformAndStorageBuffer8BitAccess:
      return "UniformAndStorageBuffer8BitAccess";
    case spv_cap::kBFloat16TypeKHR:
      return "BFloat16TypeKHR (VK_KHR_shader_bfloat16)";
    case spv_cap::kBFloat16DotProductKHR:
      return "BFloat16DotProductKHR (VK_KHR_shader_bfloat16)";
    case spv_cap::kBFloat16CooperativeMatrixKHR:
      return "BFloat16CooperativeMatrixKHR (VK_KHR_shader_bfloat16)";
    case spv_cap::kVulkanMemoryModel:
      return "VulkanMemoryModel";
    case spv_cap::kAtomicFloat32MinMaxEXT:
      return "AtomicFloat32MinMaxEXT (VK_EXT_shader_atomic_float2)";
    case spv_cap::kAtomicFloat64MinMaxEXT:
      return "AtomicFloat64MinMaxEXT (VK_EXT_shader_atomic_float2)";
    case spv_cap::kAtomicFloat16MinMaxEXT:
      return "AtomicFloat16MinMaxEXT (VK_EXT_shader_atomic_float2)";
    case spv_cap::kDotProductInputAllKHR:
      return "DotProductInputAllKHR (VK_KHR_shader_integer_dot_product)";
    case spv_cap::kDotProductInput4x8BitKHR:
      return "DotProductInput4x8BitKHR (VK_KHR_shader_integer_dot_product)";
    case spv_cap::kDotProductInput4x8BitPackedKHR:
      return "DotProductInput4x8BitPackedKHR (VK_KHR_shader_integer_dot_product)";
    case spv_cap::kDotProductKHR:
      return "DotProductKHR (VK_KHR_shader_integer_dot_product)";
    case spv_cap::kAtomicFloat32AddEXT:
      return "AtomicFloat32AddEXT (VK_EXT_shader_atomic_float)";
    case spv_cap::kAtomicFloat64AddEXT:
      return "AtomicFloat64AddEXT (VK_EXT_shader_atomic_float)";
    case spv_cap::kAtomicFloat16AddEXT:
      return "AtomicFloat16AddEXT (VK_EXT_shader_atomic_float2)";
    case spv_cap::kCooperativeMatrixNV:
      return "CooperativeMatrixNV (VK_NV_cooperative_matrix)";
    case spv_cap::kCooperativeMatrixKHR:
      return "CooperativeMatrixKHR (VK_KHR_cooperative_matrix)";
    case spv_cap::kCooperativeMatrixReductionsNV:
      return "CooperativeMatrixReductionsNV (VK_NV_cooperative_matrix2)";
    case spv_cap::kCooperativeMatrixConversionsNV:
      return "CooperativeMatrixConversionsNV (VK_NV_cooperative_matrix2)";
    case spv_cap::kCooperativeMatrixPerElementOperationsNV:
      return "CooperativeMatrixPerElementOperationsNV (VK_NV_cooperative_matrix2)";
    case spv_cap::kCooperativeMatrixTensorAddressingNV:
      return "CooperativeMatrixTensorAddressingNV (VK_NV_cooperative_matrix2)";
    case spv_cap::kCooperativeMatrixBlockLoadsNV:
      return "CooperativeMatrixBlockLoadsNV (VK_NV_cooperative_matrix2)";
    case spv_cap::kTensorAddressingNV:
      return "TensorAddressingNV (VK_NV_cooperative_matrix2)";
    case spv_cap::kVulkanMemoryModelDeviceScope:
      return "VulkanMemoryModelDeviceScope";
    default:
      break;
  }
  if (const spv_cap::UnenabledCapability* u = spv_cap::find_unenabled(cap)) return u->name;
  return std::to_string(cap);  // a number no name is known for
}

}  // namespace tune::vk
