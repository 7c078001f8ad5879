// VK_KHR_cooperative_matrix's feature structure, VK_NV_cooperative_matrix2's structures and
// query, and VK_KHR_shader_bfloat16's features (bf16 matrices), as the Vulkan registry defines
// them (1.4.309; VK_KHR_shader_bfloat16 checked against 1.4.363). Debian 12's headers (1.3.239)
// predate these extensions, so the backend declares the few it uses here, under its own names:
// the layouts and structure-type values are the registry's, and newer headers change nothing.
// VK_NV_cooperative_matrix2 needs VK_KHR_cooperative_matrix enabled beside it.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>

namespace tune::vk {

inline constexpr const char* kKhrCooperativeMatrixExtension = "VK_KHR_cooperative_matrix";
inline constexpr const char* kNvCooperativeMatrix2Extension = "VK_NV_cooperative_matrix2";

inline constexpr auto kStructCoopMatFeaturesKhr = static_cast<VkStructureType>(1000506000);
inline constexpr auto kStructCoopMat2FeaturesNv = static_cast<VkStructureType>(1000593000);
inline constexpr auto kStructCoopMatFlexibleDimensionsNv = static_cast<VkStructureType>(1000593001);
inline constexpr auto kStructCoopMat2PropertiesNv = static_cast<VkStructureType>(1000593002);
inline constexpr const char* kKhrShaderBfloat16Extension = "VK_KHR_shader_bfloat16";
inline constexpr auto kStructShaderBfloat16FeaturesKhr = static_cast<VkStructureType>(1000141000);

// VkComponentTypeKHR and VkScopeKHR share the values of VK_NV_cooperative_matrix's enums.
inline constexpr std::uint32_t kCoopComponentFloat16 = 0;
inline constexpr std::uint32_t kCoopComponentFloat32 = 1;
inline constexpr std::uint32_t kCoopComponentBfloat16 = 1000141000;  // VK_KHR_shader_bfloat16
inline constexpr std::uint32_t kCoopScopeWorkgroup = 2;

// VkPhysicalDeviceCooperativeMatrixFeaturesKHR
struct CoopMatFeaturesKhr {
  VkStructureType sType;
  void* pNext;
  VkBool32 cooperativeMatrix;
  VkBool32 cooperativeMatrixRobustBufferAccess;
};

// VkPhysicalDeviceCooperativeMatrix2FeaturesNV
struct CoopMat2FeaturesNv {
  VkStructureType sType;
  void* pNext;
  VkBool32 cooperativeMatrixWorkgroupScope;
  VkBool32 cooperativeMatrixFlexibleDimensions;
  VkBool32 cooperativeMatrixReductions;
  VkBool32 cooperativeMatrixConversions;
  VkBool32 cooperativeMatrixPerElementOperations;
  VkBool32 cooperativeMatrixTensorAddressing;
  VkBool32 cooperativeMatrixBlockLoads;
};

// VkPhysicalDeviceShaderBfloat16FeaturesKHR
struct ShaderBfloat16FeaturesKhr {
  VkStructureType sType;
  void* pNext;
  VkBool32 shaderBFloat16Type;
  VkBool32 shaderBFloat16DotProduct;
  VkBool32 shaderBFloat16CooperativeMatrix;
};

// VkPhysicalDeviceCooperativeMatrix2PropertiesNV
struct CoopMat2PropertiesNv {
  VkStructureType sType;
  void* pNext;
  std::uint32_t cooperativeMatrixWorkgroupScopeMaxWorkgroupSize;
  std::uint32_t cooperativeMatrixFlexibleDimensionsMaxDimension;
  std::uint32_t cooperativeMatrixWorkgroupScopeReservedSharedMemory;
};

// VkCooperativeMatrixFlexibleDimensionsPropertiesNV (the enums as their 32-bit values)
struct CoopMatFlexibleDimensionsNv {
  VkStructureType sType;
  void* pNext;
  std::uint32_t MGranularity;
  std::uint32_t NGranularity;
  std::uint32_t KGranularity;
  std::uint32_t AType;
  std::uint32_t BType;
  std::uint32_t CType;
  std::uint32_t ResultType;
  VkBool32 saturatingAccumulation;
  std::uint32_t scope;
  std::uint32_t workgroupInvocations;
};

// vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV
using PfnFlexibleDimensionsNv = VkResult(VKAPI_PTR*)(VkPhysicalDevice, std::uint32_t*,
                                                     CoopMatFlexibleDimensionsNv*);

}  // namespace tune::vk
