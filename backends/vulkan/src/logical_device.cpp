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

// The structures of the shader extensions' features, alive until vkCreateDevice returns.
struct ShaderExtensionFeatures {
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT float1 =
      vk_struct<VkPhysicalDeviceShaderAtomicFloatFeaturesEXT>(
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT);
  VkPhysicalDeviceShaderAtomicFloat2FeaturesEXT float2 =
      vk_struct<VkPhysicalDeviceShaderAtomicFloat2FeaturesEXT>(
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_2_FEATURES_EXT);
  VkPhysicalDeviceShaderIntegerDotProductFeatures dot =
      vk_struct<VkPhysicalDeviceShaderIntegerDotProductFeatures>(
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES);
};

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
    f.nv2.cooperativeMatrixWorkgroupScope = vk_bool(c.workgroup_scope);
    f.nv2.cooperativeMatrixFlexibleDimensions = vk_bool(c.flexible_dimensions);
    f.nv2.cooperativeMatrixReductions = vk_bool(c.reductions);
    f.nv2.cooperativeMatrixConversions = vk_bool(c.conversions);
    f.nv2.cooperativeMatrixPerElementOperations = vk_bool(c.per_element_operations);
    f.nv2.cooperativeMatrixTensorAddressing = vk_bool(c.tensor_addressing);
    f.nv2.cooperativeMatrixBlockLoads = vk_bool(c.block_loads);
    append_to_chain(tail, f.nv2);
    extensions.push_back(kNvCooperativeMatrix2Extension);
  }
  if (caps.bfloat16.any()) {
    f.bf16.shaderBFloat16Type = vk_bool(caps.bfloat16.type);
    f.bf16.shaderBFloat16DotProduct = vk_bool(caps.bfloat16.dot_product);
    f.bf16.shaderBFloat16CooperativeMatrix = vk_bool(caps.bfloat16.cooperative_matrix);
    append_to_chain(tail, f.bf16);
    extensions.push_back(kKhrShaderBfloat16Extension);
  }
}

// Appends the float atomics' features and extensions (VK_EXT_shader_atomic_float2 needs the
// first one enabled too) and the integer dot product's (an extension before Vulkan 1.3), each
// where query_caps found it.
void chain_shader_extensions(const DeviceCaps& caps, ShaderExtensionFeatures& f, void**& tail,
                             std::vector<const char*>& extensions) {
  to_vk(caps.float_atomics_buffer, caps.float_atomics_shared, f.float1, f.float2);
  auto uses = [&](FloatAtomicExtension e) {
    return uses_extension(caps.float_atomics_buffer, e) ||
           uses_extension(caps.float_atomics_shared, e);
  };
  const bool second = uses(FloatAtomicExtension::shader_atomic_float2);
  if (second || uses(FloatAtomicExtension::shader_atomic_float)) {
    append_to_chain(tail, f.float1);
    extensions.push_back(VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
  }
  if (second) {
    append_to_chain(tail, f.float2);
    extensions.push_back(VK_EXT_SHADER_ATOMIC_FLOAT_2_EXTENSION_NAME);
  }
  if (caps.integer_dot_product) {
    f.dot.shaderIntegerDotProduct = VK_TRUE;
    append_to_chain(tail, f.dot);
    if (caps.props.apiVersion < VK_API_VERSION_1_3)
      extensions.push_back(VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
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
  features.features.shaderInt64 = vk_bool(caps.int64);
  features.features.shaderFloat64 = vk_bool(caps.float64);
  features.features.shaderInt16 = vk_bool(caps.int16);
  auto s16 = vk_struct<VkPhysicalDevice16BitStorageFeatures>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES);
  s16.storageBuffer16BitAccess = vk_bool(caps.storage16);
  s16.uniformAndStorageBuffer16BitAccess = vk_bool(caps.uniform_storage16);
  features.pNext = &s16;
  auto f16 = vk_struct<VkPhysicalDeviceShaderFloat16Int8Features>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES);
  auto s8 = vk_struct<VkPhysicalDevice8BitStorageFeatures>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES);
  if (caps.props.apiVersion >= VK_API_VERSION_1_2) {
    f16.shaderFloat16 = vk_bool(caps.float16);
    f16.shaderInt8 = vk_bool(caps.int8);
    s8.storageBuffer8BitAccess = vk_bool(caps.storage8);
    s8.uniformAndStorageBuffer8BitAccess = vk_bool(caps.uniform_storage8);
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
    a64.shaderBufferInt64Atomics = vk_bool(caps.int64_atomics_buffer);
    a64.shaderSharedInt64Atomics = vk_bool(caps.int64_atomics_shared);
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
  ShaderExtensionFeatures shader;
  chain_shader_extensions(caps, shader, tail, extensions);

  auto dci = vk_struct<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);
  dci.pNext = &features;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = static_cast<std::uint32_t>(extensions.size());
  dci.ppEnabledExtensionNames = extensions.data();
  return vkCreateDevice(physical, &dci, nullptr, out);
}

}  // namespace tune::vk
