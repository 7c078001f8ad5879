// See logical_device.hpp.
#include "logical_device.hpp"

#include <vector>

#include "cooperative_matrix2.hpp"
#include "vk_status.hpp"

namespace tune::vk {

namespace {

// The structures of the extensions newer than Debian 12's headers (cooperative_matrix2.hpp),
// alive until vkCreateDevice returns.
struct MatrixExtensionFeatures {
  CoopMatFeaturesKhr khr = vk_struct<CoopMatFeaturesKhr>(kStructCoopMatFeaturesKhr);
  CoopMat2FeaturesNv nv2 = vk_struct<CoopMat2FeaturesNv>(kStructCoopMat2FeaturesNv);
  ShaderBfloat16FeaturesKhr bf16 =
      vk_struct<ShaderBfloat16FeaturesKhr>(kStructShaderBfloat16FeaturesKhr);
};

VkBool32 on(bool b) { return b ? VK_TRUE : VK_FALSE; }

// Appends `s` to a pNext chain whose last pNext field is `*tail`; `s` must outlive the chain.
template <typename S>
void append_to_chain(void**& tail, S& s) {
  *tail = &s;
  tail = &s.pNext;
}

// Appends to the chain at `*tail` (and names in `extensions`) VK_KHR_cooperative_matrix,
// VK_NV_cooperative_matrix2 and VK_KHR_shader_bfloat16 with the features query_caps found.
void chain_matrix_extensions(const DeviceCaps& caps, MatrixExtensionFeatures& f, void**& tail,
                             std::vector<const char*>& extensions) {
  if (caps.coopmat_khr) {
    f.khr.cooperativeMatrix = VK_TRUE;
    append_to_chain(tail, f.khr);
    extensions.push_back(kKhrCooperativeMatrixExtension);
  }
  if (caps.coopmat_khr && caps.coopmat2.any()) {
    const DeviceCaps::Coopmat2& c = caps.coopmat2;
    f.nv2.cooperativeMatrixWorkgroupScope = on(c.workgroup_scope);
    f.nv2.cooperativeMatrixFlexibleDimensions = on(c.flexible_dimensions);
    f.nv2.cooperativeMatrixReductions = on(c.reductions);
    f.nv2.cooperativeMatrixConversions = on(c.conversions);
    f.nv2.cooperativeMatrixPerElementOperations = on(c.per_element_operations);
    f.nv2.cooperativeMatrixTensorAddressing = on(c.tensor_addressing);
    f.nv2.cooperativeMatrixBlockLoads = on(c.block_loads);
    append_to_chain(tail, f.nv2);
    extensions.push_back(kNvCooperativeMatrix2Extension);
  }
  if (caps.bfloat16.any()) {
    f.bf16.shaderBFloat16Type = on(caps.bfloat16.type);
    f.bf16.shaderBFloat16DotProduct = on(caps.bfloat16.dot_product);
    f.bf16.shaderBFloat16CooperativeMatrix = on(caps.bfloat16.cooperative_matrix);
    append_to_chain(tail, f.bf16);
    extensions.push_back(kKhrShaderBfloat16Extension);
  }
}

}  // namespace

VkResult create_vk_device(VkPhysicalDevice physical, const DeviceCaps& caps, VkDevice* out) {
  const float priority = 1.0f;
  auto qci = vk_struct<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
  qci.queueFamilyIndex = caps.queue_family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;

  // Enable exactly the optional features kernels may need and the device has.
  auto features =
      vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
  features.features.shaderInt64 = on(caps.int64);
  features.features.shaderFloat64 = on(caps.float64);
  features.features.shaderInt16 = on(caps.int16);
  auto s16 = vk_struct<VkPhysicalDevice16BitStorageFeatures>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES);
  s16.storageBuffer16BitAccess = on(caps.storage16);
  s16.uniformAndStorageBuffer16BitAccess = on(caps.uniform_storage16);
  features.pNext = &s16;
  auto f16 = vk_struct<VkPhysicalDeviceShaderFloat16Int8Features>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES);
  auto s8 = vk_struct<VkPhysicalDevice8BitStorageFeatures>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES);
  if (caps.props.apiVersion >= VK_API_VERSION_1_2) {
    f16.shaderFloat16 = on(caps.float16);
    f16.shaderInt8 = on(caps.int8);
    s8.storageBuffer8BitAccess = on(caps.storage8);
    s8.uniformAndStorageBuffer8BitAccess = on(caps.uniform_storage8);
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
  if (caps.memory_model) {
    mm.vulkanMemoryModel = VK_TRUE;
    mm.vulkanMemoryModelDeviceScope = VK_TRUE;
    append_to_chain(tail, mm);
  }
  auto a64 = vk_struct<VkPhysicalDeviceShaderAtomicInt64Features>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES);
  if (caps.int64_atomics_buffer || caps.int64_atomics_shared) {
    a64.shaderBufferInt64Atomics = on(caps.int64_atomics_buffer);
    a64.shaderSharedInt64Atomics = on(caps.int64_atomics_shared);
    append_to_chain(tail, a64);
  }
  if (caps.subgroup_size_control) {
    sgc.subgroupSizeControl = VK_TRUE;
    append_to_chain(tail, sgc);
  }
  std::vector<const char*> extensions;
  if (caps.coopmat_nv) {
    coop.cooperativeMatrix = VK_TRUE;
    append_to_chain(tail, coop);
    extensions.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  }
  auto m4 = vk_struct<VkPhysicalDeviceMaintenance4Features>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_FEATURES);
  if (caps.maintenance4) {
    m4.maintenance4 = VK_TRUE;
    append_to_chain(tail, m4);
  }
  MatrixExtensionFeatures matrices;
  chain_matrix_extensions(caps, matrices, tail, extensions);

  auto dci = vk_struct<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);
  dci.pNext = &features;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = static_cast<std::uint32_t>(extensions.size());
  dci.ppEnabledExtensionNames = extensions.data();
  return vkCreateDevice(physical, &dci, nullptr, out);
}

}  // namespace tune::vk
