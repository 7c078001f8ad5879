// See logical_device.hpp.
#include "logical_device.hpp"

#include <vector>

#include "cooperative_matrix2.hpp"
#include "vk_status.hpp"

namespace tune::vk {

VkResult create_vk_device(VkPhysicalDevice physical, const DeviceCaps& caps, VkDevice* out) {
  const float priority = 1.0f;
  auto qci = vk_struct<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
  qci.queueFamilyIndex = caps.queue_family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;

  // Enable exactly the optional features kernels may need and the device has.
  auto features =
      vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
  features.features.shaderInt64 = caps.int64 ? VK_TRUE : VK_FALSE;
  features.features.shaderFloat64 = caps.float64 ? VK_TRUE : VK_FALSE;
  features.features.shaderInt16 = caps.int16 ? VK_TRUE : VK_FALSE;
  auto s16 = vk_struct<VkPhysicalDevice16BitStorageFeatures>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES);
  s16.storageBuffer16BitAccess = caps.storage16 ? VK_TRUE : VK_FALSE;
  s16.uniformAndStorageBuffer16BitAccess = caps.uniform_storage16 ? VK_TRUE : VK_FALSE;
  features.pNext = &s16;
  auto f16 = vk_struct<VkPhysicalDeviceShaderFloat16Int8Features>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES);
  auto s8 = vk_struct<VkPhysicalDevice8BitStorageFeatures>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES);
  if (caps.props.apiVersion >= VK_API_VERSION_1_2) {
    f16.shaderFloat16 = caps.float16 ? VK_TRUE : VK_FALSE;
    f16.shaderInt8 = caps.int8 ? VK_TRUE : VK_FALSE;
    s8.storageBuffer8BitAccess = caps.storage8 ? VK_TRUE : VK_FALSE;
    s8.uniformAndStorageBuffer8BitAccess = caps.uniform_storage8 ? VK_TRUE : VK_FALSE;
    s16.pNext = &f16;
    f16.pNext = &s8;
  }

  // The matrix units and subgroup size control, each only where query_caps found it.
  void** tail = caps.props.apiVersion >= VK_API_VERSION_1_2 ? &s8.pNext : &s16.pNext;
  auto mm = vk_struct<VkPhysicalDeviceVulkanMemoryModelFeatures>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES);
  auto sgc = vk_struct<VkPhysicalDeviceSubgroupSizeControlFeatures>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES);
  auto coop = vk_struct<VkPhysicalDeviceCooperativeMatrixFeaturesNV>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV);
  auto link = [&tail](auto& s) {
    *tail = &s;
    tail = &s.pNext;
  };
  if (caps.memory_model) {
    mm.vulkanMemoryModel = VK_TRUE;
    mm.vulkanMemoryModelDeviceScope = VK_TRUE;
    link(mm);
  }
  if (caps.subgroup_size_control) {
    sgc.subgroupSizeControl = VK_TRUE;
    link(sgc);
  }
  std::vector<const char*> extensions;
  if (caps.coopmat_nv) {
    coop.cooperativeMatrix = VK_TRUE;
    link(coop);
    extensions.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  }
  auto m4 = vk_struct<VkPhysicalDeviceMaintenance4Features>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_FEATURES);
  if (caps.maintenance4) {
    m4.maintenance4 = VK_TRUE;
    link(m4);
  }
  auto khr = vk_struct<CoopMatFeaturesKhr>(kStructCoopMatFeaturesKhr);
  if (caps.coopmat_khr) {
    khr.cooperativeMatrix = VK_TRUE;
    link(khr);
    extensions.push_back(kKhrCooperativeMatrixExtension);
  }
  auto nv2 = vk_struct<CoopMat2FeaturesNv>(kStructCoopMat2FeaturesNv);
  if (caps.coopmat_khr && caps.coopmat2.any()) {
    const DeviceCaps::Coopmat2& f = caps.coopmat2;
    const auto on = [](bool b) { return b ? VK_TRUE : VK_FALSE; };
    nv2.cooperativeMatrixWorkgroupScope = on(f.workgroup_scope);
    nv2.cooperativeMatrixFlexibleDimensions = on(f.flexible_dimensions);
    nv2.cooperativeMatrixReductions = on(f.reductions);
    nv2.cooperativeMatrixConversions = on(f.conversions);
    nv2.cooperativeMatrixPerElementOperations = on(f.per_element_operations);
    nv2.cooperativeMatrixTensorAddressing = on(f.tensor_addressing);
    nv2.cooperativeMatrixBlockLoads = on(f.block_loads);
    link(nv2);
    extensions.push_back(kNvCooperativeMatrix2Extension);
  }

  auto dci = vk_struct<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);
  dci.pNext = &features;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = static_cast<std::uint32_t>(extensions.size());
  dci.ppEnabledExtensionNames = extensions.data();
  return vkCreateDevice(physical, &dci, nullptr, out);
}

}  // namespace tune::vk
