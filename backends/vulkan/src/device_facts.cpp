#include "device_facts.hpp"

#include <algorithm>
#include <vector>

#include "spirv_capabilities.hpp"
#include "spirv_reflect.hpp"
#include "tune/backend/last_level_cache.hpp"
#include "tune/backend/power_settle.hpp"
#include "vk_status.hpp"

namespace tune::vk {
namespace {

// Longest clock level the NVIDIA driver holds under load after idling (H200: ~200 ms steps).
constexpr double kNvidiaClockSettleMs = 300.0;

// Optional features and driver names: Vulkan 1.1 core structures, 1.2 ones where supported.
void query_features(VkPhysicalDevice pd, DeviceCaps& c) {
  auto f2 = vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
  auto s16 = vk_struct<VkPhysicalDevice16BitStorageFeatures>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES);
  auto f16 = vk_struct<VkPhysicalDeviceShaderFloat16Int8Features>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES);
  auto s8 = vk_struct<VkPhysicalDevice8BitStorageFeatures>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES);
  f2.pNext = &s16;
  if (c.props.apiVersion >= VK_API_VERSION_1_2) {
    s16.pNext = &f16;
    f16.pNext = &s8;
  }
  vkGetPhysicalDeviceFeatures2(pd, &f2);
  c.int64 = f2.features.shaderInt64;
  c.float64 = f2.features.shaderFloat64;
  c.int16 = f2.features.shaderInt16;
  c.storage16 = s16.storageBuffer16BitAccess;
  c.uniform_storage16 = s16.uniformAndStorageBuffer16BitAccess;
  c.float16 = f16.shaderFloat16;
  c.int8 = f16.shaderInt8;
  c.storage8 = s8.storageBuffer8BitAccess;
  c.uniform_storage8 = s8.uniformAndStorageBuffer8BitAccess;
  if (c.props.apiVersion >= VK_API_VERSION_1_2) {
    auto a64 = vk_struct<VkPhysicalDeviceShaderAtomicInt64Features>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES);
    auto mm = vk_struct<VkPhysicalDeviceVulkanMemoryModelFeatures>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES, &a64);
    auto only =
        vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &mm);
    vkGetPhysicalDeviceFeatures2(pd, &only);
    c.int64_atomics_buffer = a64.shaderBufferInt64Atomics;
    c.int64_atomics_shared = a64.shaderSharedInt64Atomics;
    // With the model on, Device-scope atomics (reduce_sum's) need vulkanMemoryModelDeviceScope
    // too: a device without it keeps the model off (the cooperative matrices then unavailable).
    c.memory_model = mm.vulkanMemoryModel && mm.vulkanMemoryModelDeviceScope;
  }
}

bool has_device_extension(VkPhysicalDevice pd, std::string_view name) {
  std::uint32_t n = 0;
  if (vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> exts(n);
  if (vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, exts.data()) != VK_SUCCESS)
    return false;
  for (const VkExtensionProperties& e : exts)
    if (name == e.extensionName) return true;
  return false;
}

// VK_EXT_shader_atomic_float and VK_EXT_shader_atomic_float2 (the second's features only with
// it: a structure of an absent extension may not be chained).
void query_float_atomics(VkPhysicalDevice pd, DeviceCaps& c) {
  if (!has_device_extension(pd, VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME)) return;
  auto f1 = vk_struct<VkPhysicalDeviceShaderAtomicFloatFeaturesEXT>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT);
  auto f2 = vk_struct<VkPhysicalDeviceShaderAtomicFloat2FeaturesEXT>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_2_FEATURES_EXT);
  if (has_device_extension(pd, VK_EXT_SHADER_ATOMIC_FLOAT_2_EXTENSION_NAME)) f1.pNext = &f2;
  auto all =
      vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f1);
  vkGetPhysicalDeviceFeatures2(pd, &all);
  from_vk(f1, f2, c.float_atomics_buffer, c.float_atomics_shared);
}

// shaderIntegerDotProduct: core in Vulkan 1.3, VK_KHR_shader_integer_dot_product before.
void query_integer_dot_product(VkPhysicalDevice pd, DeviceCaps& c) {
  if (c.props.apiVersion < VK_API_VERSION_1_3 &&
      !has_device_extension(pd, VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME))
    return;
  auto f = vk_struct<VkPhysicalDeviceShaderIntegerDotProductFeatures>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES);
  auto all = vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f);
  vkGetPhysicalDeviceFeatures2(pd, &all);
  c.integer_dot_product = f.shaderIntegerDotProduct == VK_TRUE;
}

// Vulkan 1.3's subgroup size control, for compute pipelines only.
void query_subgroup_control(VkPhysicalDevice pd, DeviceCaps& c) {
  if (c.props.apiVersion < VK_API_VERSION_1_3) return;
  auto f = vk_struct<VkPhysicalDeviceSubgroupSizeControlFeatures>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES);
  auto f2 = vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f);
  vkGetPhysicalDeviceFeatures2(pd, &f2);
  auto p = vk_struct<VkPhysicalDeviceSubgroupSizeControlProperties>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES);
  auto p2 =
      vk_struct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &p);
  vkGetPhysicalDeviceProperties2(pd, &p2);
  if (!f.subgroupSizeControl || (p.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT) == 0 ||
      p.minSubgroupSize == 0 || p.maxSubgroupSize < p.minSubgroupSize)
    return;
  c.subgroup_size_control = true;
  c.min_subgroup_size = p.minSubgroupSize;
  c.max_subgroup_size = p.maxSubgroupSize;
}

// VK_NV_cooperative_matrix: the feature and the subgroup-scope f16 x f16 + f32 shapes. The
// Debian 12 toolchain (glslang 12, headers 1.3.239) predates VK_KHR_cooperative_matrix, so the
// NV extension is the one libtune's shaders are written for.
void query_cooperative_matrix(VkInstance instance, VkPhysicalDevice pd, DeviceCaps& c) {
  if (instance == VK_NULL_HANDLE ||
      !has_device_extension(pd, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME))
    return;
  auto f = vk_struct<VkPhysicalDeviceCooperativeMatrixFeaturesNV>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV);
  auto f2 = vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f);
  vkGetPhysicalDeviceFeatures2(pd, &f2);
  auto list = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV>(
      vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV"));
  if (!f.cooperativeMatrix || list == nullptr) return;
  std::uint32_t n = 0;
  if (list(pd, &n, nullptr) != VK_SUCCESS) return;
  std::vector<VkCooperativeMatrixPropertiesNV> props(
      n, vk_struct<VkCooperativeMatrixPropertiesNV>(
             VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV));
  if (list(pd, &n, props.data()) != VK_SUCCESS) return;
  c.coopmat_nv = true;
  for (const VkCooperativeMatrixPropertiesNV& m : props) {
    if (m.AType != VK_COMPONENT_TYPE_FLOAT16_NV || m.BType != VK_COMPONENT_TYPE_FLOAT16_NV ||
        m.CType != VK_COMPONENT_TYPE_FLOAT32_NV || m.DType != VK_COMPONENT_TYPE_FLOAT32_NV ||
        m.scope != VK_SCOPE_SUBGROUP_NV)
      continue;
    const MatrixShape s{m.MSize, m.NSize, m.KSize};
    if (std::find(c.coopmat_shapes_f16.begin(), c.coopmat_shapes_f16.end(), s) ==
        c.coopmat_shapes_f16.end())
      c.coopmat_shapes_f16.push_back(s);
  }
}

// Vulkan 1.3's maintenance4 (LocalSizeId in precompiled SPIR-V 1.6 modules).
void query_maintenance4(VkPhysicalDevice pd, DeviceCaps& c) {
  if (c.props.apiVersion < VK_API_VERSION_1_3) return;
  auto f = vk_struct<VkPhysicalDeviceMaintenance4Features>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_FEATURES);
  auto f2 = vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f);
  vkGetPhysicalDeviceFeatures2(pd, &f2);
  c.maintenance4 = f.maintenance4 == VK_TRUE;
}

// VK_KHR_cooperative_matrix, then VK_NV_cooperative_matrix2 on top of it: features, limits and
// the flexible-dimension shapes. Both need Vulkan 1.3 here (libtune reads their shaders as
// precompiled SPIR-V 1.6 modules).
void query_cooperative_matrix2(VkInstance instance, VkPhysicalDevice pd, DeviceCaps& c) {
  if (instance == VK_NULL_HANDLE || c.props.apiVersion < VK_API_VERSION_1_3 ||
      !has_device_extension(pd, kKhrCooperativeMatrixExtension))
    return;
  auto khr = vk_struct<CoopMatFeaturesKhr>(kStructCoopMatFeaturesKhr);
  auto nv2 = vk_struct<CoopMat2FeaturesNv>(kStructCoopMat2FeaturesNv);
  const bool has_nv2 = has_device_extension(pd, kNvCooperativeMatrix2Extension);
  if (has_nv2) khr.pNext = &nv2;
  auto f2 =
      vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &khr);
  vkGetPhysicalDeviceFeatures2(pd, &f2);
  c.coopmat_khr = khr.cooperativeMatrix == VK_TRUE;
  if (!c.coopmat_khr || !has_nv2) return;
  c.coopmat2 = {nv2.cooperativeMatrixWorkgroupScope == VK_TRUE,
                nv2.cooperativeMatrixFlexibleDimensions == VK_TRUE,
                nv2.cooperativeMatrixReductions == VK_TRUE,
                nv2.cooperativeMatrixConversions == VK_TRUE,
                nv2.cooperativeMatrixPerElementOperations == VK_TRUE,
                nv2.cooperativeMatrixTensorAddressing == VK_TRUE,
                nv2.cooperativeMatrixBlockLoads == VK_TRUE};
  auto props = vk_struct<CoopMat2PropertiesNv>(kStructCoopMat2PropertiesNv);
  auto p2 = vk_struct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                                   &props);
  vkGetPhysicalDeviceProperties2(pd, &p2);
  c.coopmat2_max_workgroup = props.cooperativeMatrixWorkgroupScopeMaxWorkgroupSize;
  c.coopmat2_reserved_shared = props.cooperativeMatrixWorkgroupScopeReservedSharedMemory;
  auto list = reinterpret_cast<PfnFlexibleDimensionsNv>(vkGetInstanceProcAddr(
      instance, "vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV"));
  std::uint32_t n = 0;
  if (!c.coopmat2.flexible_dimensions || list == nullptr || list(pd, &n, nullptr) != VK_SUCCESS)
    return;
  std::vector<CoopMatFlexibleDimensionsNv> entries(
      n, vk_struct<CoopMatFlexibleDimensionsNv>(kStructCoopMatFlexibleDimensionsNv));
  if (list(pd, &n, entries.data()) != VK_SUCCESS) return;
  entries.resize(n);
  const std::uint32_t max_dimension = props.cooperativeMatrixFlexibleDimensionsMaxDimension;
  c.coopmat2_shapes_f16 =
      workgroup_shapes(entries, kCoopComponentFloat16, max_dimension, c.coopmat2_max_workgroup);
  c.coopmat2_shapes_bf16 =
      workgroup_shapes(entries, kCoopComponentBfloat16, max_dimension, c.coopmat2_max_workgroup);
}

// VK_KHR_shader_bfloat16's features (bf16 in shaders, in cooperative matrices).
void query_bfloat16(VkPhysicalDevice pd, DeviceCaps& c) {
  if (!has_device_extension(pd, kKhrShaderBfloat16Extension)) return;
  auto bf = vk_struct<ShaderBfloat16FeaturesKhr>(kStructShaderBfloat16FeaturesKhr);
  auto f2 = vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &bf);
  vkGetPhysicalDeviceFeatures2(pd, &f2);
  // bf16 cooperative matrices only with VK_KHR_cooperative_matrix (queried before).
  c.bfloat16 = {bf.shaderBFloat16Type == VK_TRUE, bf.shaderBFloat16DotProduct == VK_TRUE,
                c.coopmat_khr && bf.shaderBFloat16CooperativeMatrix == VK_TRUE};
}

void query_properties(VkPhysicalDevice pd, DeviceCaps& c) {
  auto sub = vk_struct<VkPhysicalDeviceSubgroupProperties>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES);
  auto m3 = vk_struct<VkPhysicalDeviceMaintenance3Properties>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES, &sub);
  auto drv = vk_struct<VkPhysicalDeviceDriverProperties>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES);
  auto id =
      vk_struct<VkPhysicalDeviceIDProperties>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES, &m3);
  auto p2 =
      vk_struct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &id);
  if (c.props.apiVersion >= VK_API_VERSION_1_2) sub.pNext = &drv;
  vkGetPhysicalDeviceProperties2(pd, &p2);
  c.max_allocation_bytes = m3.maxMemoryAllocationSize;
  c.uuid = format_uuid(id.deviceUUID);
  c.subgroup_size = sub.subgroupSize;
  c.subgroup_ops = sub.supportedOperations;
  c.subgroup_in_compute = (sub.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0;
  if (c.props.apiVersion >= VK_API_VERSION_1_2) {
    c.driver_name = drv.driverName;
    c.driver_info = drv.driverInfo;
  }
}

// A compute queue with timestamps; prefer one without graphics (a dedicated compute queue).
// Sets `why` when there is none.
void pick_queue(VkPhysicalDevice pd, DeviceCaps& c, std::string* why) {
  std::uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> qs(nq);
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, qs.data());
  int best = -1;
  bool compute_seen = false;
  for (std::uint32_t i = 0; i < nq; ++i) {
    if (!(qs[i].queueFlags & VK_QUEUE_COMPUTE_BIT) || qs[i].queueCount == 0) continue;
    compute_seen = true;
    if (qs[i].timestampValidBits == 0) continue;
    const bool dedicated = !(qs[i].queueFlags & VK_QUEUE_GRAPHICS_BIT);
    if (best < 0 || (dedicated && (qs[best].queueFlags & VK_QUEUE_GRAPHICS_BIT))) {
      best = static_cast<int>(i);
    }
  }
  if (best < 0) {
    *why = compute_seen ? "no compute queue family supports timestamps (timestampValidBits = 0)"
                        : "no compute queue family";
    return;
  }
  c.queue_family = static_cast<std::uint32_t>(best);
  c.timestamp_valid_bits = qs[static_cast<std::size_t>(best)].timestampValidBits;
}

std::string driver_version(const DeviceCaps& caps) {
  if (!caps.driver_name.empty() || !caps.driver_info.empty())
    return caps.driver_name + (caps.driver_info.empty() ? "" : " ") + caps.driver_info;
  const std::uint32_t v = caps.props.driverVersion;
  if (caps.props.vendorID == 0x10DE) {
    return std::to_string(v >> 22) + "." + std::to_string((v >> 14) & 0xff) + "." +
           std::to_string((v >> 6) & 0xff);
  }
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) +
         "." + std::to_string(VK_API_VERSION_PATCH(v));
}

// The subgroup operation a GroupNonUniform* capability needs; 0 for other capabilities.
VkSubgroupFeatureFlags subgroup_feature(std::uint32_t cap) {
  switch (cap) {
    case spv_cap::kGroupNonUniform:
      return VK_SUBGROUP_FEATURE_BASIC_BIT;
    case spv_cap::kGroupNonUniformVote:
      return VK_SUBGROUP_FEATURE_VOTE_BIT;
    case spv_cap::kGroupNonUniformArithmetic:
      return VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
    case spv_cap::kGroupNonUniformBallot:
      return VK_SUBGROUP_FEATURE_BALLOT_BIT;
    case spv_cap::kGroupNonUniformShuffle:
      return VK_SUBGROUP_FEATURE_SHUFFLE_BIT;
    case spv_cap::kGroupNonUniformShuffleRelative:
      return VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT;
    case spv_cap::kGroupNonUniformClustered:
      return VK_SUBGROUP_FEATURE_CLUSTERED_BIT;
    case spv_cap::kGroupNonUniformQuad:
      return VK_SUBGROUP_FEATURE_QUAD_BIT;
    default:
      return 0;
  }
}

}  // namespace

DeviceCaps query_caps(VkInstance instance, VkPhysicalDevice pd, std::string* why,
                      std::uint32_t max_api) {
  DeviceCaps c;
  vkGetPhysicalDeviceProperties(pd, &c.props);
  if (max_api != 0) c.props.apiVersion = std::min(c.props.apiVersion, max_api);
  vkGetPhysicalDeviceMemoryProperties(pd, &c.memory);
  why->clear();
  if (c.props.apiVersion < VK_API_VERSION_1_1) {
    *why = "supports only Vulkan 1.0 (1.1 needed)";
    return c;
  }
  query_properties(pd, c);
  query_features(pd, c);
  query_float_atomics(pd, c);
  query_integer_dot_product(pd, c);
  query_subgroup_control(pd, c);
  query_cooperative_matrix(instance, pd, c);
  query_maintenance4(pd, c);
  query_cooperative_matrix2(instance, pd, c);
  query_bfloat16(pd, c);
  pick_queue(pd, c, why);
  if (why->empty() && c.props.limits.timestampPeriod <= 0.0f) *why = "timestampPeriod is 0";
  return c;
}

std::vector<WorkgroupMatrixShape> workgroup_shapes(
    std::span<const CoopMatFlexibleDimensionsNv> list, std::uint32_t component,
    std::uint32_t max_dimension, std::uint32_t max_workgroup) {
  std::vector<WorkgroupMatrixShape> out;
  for (const CoopMatFlexibleDimensionsNv& e : list) {
    if (e.AType != component || e.BType != component || e.CType != kCoopComponentFloat32 ||
        e.ResultType != kCoopComponentFloat32 || e.scope != kCoopScopeWorkgroup ||
        e.saturatingAccumulation || e.workgroupInvocations == 0 ||
        e.workgroupInvocations > max_workgroup)
      continue;
    const WorkgroupMatrixShape s{
        e.workgroupInvocations, {e.MGranularity, e.NGranularity, e.KGranularity}, max_dimension};
    const bool seen = std::any_of(out.begin(), out.end(), [&](const WorkgroupMatrixShape& o) {
      return o.invocations == s.invocations;
    });
    if (!seen) out.push_back(s);
  }
  return out;
}

std::string vendor_name(std::uint32_t id) {
  switch (id) {
    case 0x10DE:
      return "NVIDIA";
    case 0x1002:
    case 0x1022:
      return "AMD";
    case 0x8086:
      return "Intel";
    case 0x13B5:
      return "ARM";
    case 0x5143:
      return "Qualcomm";
    case 0x1010:
      return "ImgTec";
    case 0x106B:
      return "Apple";
    case 0x10005:  // VK_VENDOR_ID_MESA
      return "Mesa";
    default:
      return "vendor 0x" + hex(id);
  }
}

std::string device_type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return "cpu";
    default:
      return "other";
  }
}

Result<MemoryPlan> plan_memory(const DeviceCaps& caps) {
  const auto& mem = caps.memory;
  const bool unified = caps.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ||
                       caps.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU;
  constexpr VkMemoryPropertyFlags kHost =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  int best_dev = -1, best_dev_score = -1, best_stage = -1, best_stage_score = -1;
  for (std::uint32_t i = 0; i < mem.memoryTypeCount; ++i) {
    const VkMemoryPropertyFlags f = mem.memoryTypes[i].propertyFlags;
    const bool local = (f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) != 0;
    const bool host = (f & kHost) == kHost;
    int score = local ? 2 : 0;
    if (local && unified && host) score += 1;
    if (local && !unified && !host) score += 1;
    if (score > best_dev_score) best_dev = static_cast<int>(i), best_dev_score = score;
    if (host) {
      int ss = 1 + ((f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) != 0 ? 1 : 0);
      if (ss > best_stage_score) best_stage = static_cast<int>(i), best_stage_score = ss;
    }
  }
  if (best_dev < 0 || best_stage < 0)
    return Status(StatusCode::unavailable, "no usable device or host-visible memory type");
  MemoryPlan p;
  p.device_type = static_cast<std::uint32_t>(best_dev);
  p.staging_type = static_cast<std::uint32_t>(best_stage);
  p.device_mappable = (mem.memoryTypes[p.device_type].propertyFlags & kHost) == kHost;
  const std::uint32_t heap = mem.memoryTypes[p.device_type].heapIndex;
  p.max_buffer_bytes =
      std::min<std::uint64_t>({caps.props.limits.maxStorageBufferRange, caps.max_allocation_bytes,
                               mem.memoryHeaps[heap].size});
  DeviceInfo llc;
  set_last_level_cache(llc, caps);
  p.flush_bytes = std::min(flush_bytes_for(llc), p.max_buffer_bytes / 4) & ~std::uint64_t{3};
  return p;
}

void set_last_level_cache(DeviceInfo& info, const DeviceCaps& caps) {
  // Vulkan reports no cache sizes: a default by device type, which TUNE_LLC_BYTES overrides.
  // Discrete GPUs: 32 MiB (between a consumer L2 of 4-6 MiB and a data-centre one of 50-96);
  // integrated: 8 MiB; CPU devices (lavapipe): 2 MiB, since a flush fill runs on the host
  // cores and its cost is paid before every timed launch.
  std::uint64_t mib = 2;
  switch (caps.props.deviceType) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      mib = 32;
      break;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      mib = 8;
      break;
    default:
      break;
  }
  tune::set_last_level_cache(info, 0, CacheSizeSource::default_size, mib << 20);
}

DeviceInfo device_info(const DeviceCaps& caps, std::string compiler_version) {
  const auto& p = caps.props;
  const auto& l = p.limits;
  DeviceInfo info;
  info.backend = "vulkan";
  info.vendor = vendor_name(p.vendorID);
  info.name = p.deviceName;
  info.uuid = caps.uuid;
  info.arch = "vk:" + hex(p.vendorID) + ":" + hex(p.deviceID);
  info.driver_version = driver_version(caps);
  info.compiler_version = std::move(compiler_version);
  info.compute_units = 0;  // not exposed by core Vulkan
  info.max_threads_per_block = l.maxComputeWorkGroupInvocations;
  info.max_block = {l.maxComputeWorkGroupSize[0], l.maxComputeWorkGroupSize[1],
                    l.maxComputeWorkGroupSize[2]};
  info.max_grid = {l.maxComputeWorkGroupCount[0], l.maxComputeWorkGroupCount[1],
                   l.maxComputeWorkGroupCount[2]};
  info.shared_bytes_per_block = l.maxComputeSharedMemorySize;
  info.shared_bytes_per_block_optin = l.maxComputeSharedMemorySize;
  info.registers_per_block = 0;
  info.warp_size = caps.subgroup_size;
  info.min_subgroup_size = caps.min_subgroup_size;
  info.max_subgroup_size = caps.max_subgroup_size;
  // Matrix units for f16 are offered where their shaders can run: f16 arithmetic and storage
  // and the memory model (their loads' scopes), and for the workgroup-scope ones maintenance4
  // (their SPIR-V 1.6 states its size with LocalSizeId) and three VK_NV_cooperative_matrix2
  // features. For bf16 (workgroup scope only): the same plus VK_KHR_shader_bfloat16's type and
  // cooperative-matrix features (16-bit floats in storage buffers need storageBuffer16BitAccess
  // whatever their encoding, VUID-RuntimeSpirv-storageBuffer16BitAccess-06331; glslang's bf16
  // module declares the Float16 capability too).
  const bool f16_matrices = caps.float16 && caps.storage16 && caps.memory_model;
  if (f16_matrices) info.matrix_shapes_f16 = caps.coopmat_shapes_f16;
  const bool workgroup_matrices =
      caps.memory_model && caps.maintenance4 && caps.coopmat2.workgroup_scope &&
      caps.coopmat2.flexible_dimensions && caps.coopmat2.tensor_addressing;
  if (f16_matrices && workgroup_matrices) info.workgroup_matrix_f16 = caps.coopmat2_shapes_f16;
  if (f16_matrices && workgroup_matrices && caps.bfloat16.type && caps.bfloat16.cooperative_matrix)
    info.workgroup_matrix_bf16 = caps.coopmat2_shapes_bf16;
  info.l2_bytes = 0;  // unknown in Vulkan
  set_last_level_cache(info, caps);
  std::uint64_t local = 0;
  for (std::uint32_t i = 0; i < caps.memory.memoryHeapCount; ++i)
    if (caps.memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      local = std::max<std::uint64_t>(local, caps.memory.memoryHeaps[i].size);
  info.global_memory_bytes = local;
  info.timer_resolution_ns = static_cast<double>(l.timestampPeriod);
  // NVIDIA's driver lowers the SM clock after ~2 s without Vulkan work or under bursty work
  // (H200: 345 MHz instead of 1980) and raises it in steps about 200 ms apart under sustained
  // load; timing settles the clock over a window longer than one step (bench/RESULTS.md,
  // clock_study). Other vendors' drivers are unmeasured here.
  info.clock_settle_ms = p.vendorID == 0x10DE ? kNvidiaClockSettleMs : 0.0;
  // A GPU's power limit (measured on the H200 through CUDA: the same silicon and firmware);
  // a CPU implementation (lavapipe) has no power state that follows one kernel.
  info.power_settle_ms = p.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? 0.0 : kGpuPowerSettleMs;
  return info;
}

namespace {

// Whether the device has the feature behind `cap` itself (not the capabilities it implies).
bool has_own_capability(const DeviceCaps& c, std::uint32_t cap) {
  // Float atomics: one feature in either place suffices (Vulkan's registry); where a module's
  // atomics act is checked per module.
  if (const FloatAtomicFeature* f = feature_of_capability(cap))
    return c.float_atomics_buffer.*f->member || c.float_atomics_shared.*f->member;
  switch (cap) {
    case spv_cap::kFloat16:
      return c.float16;
    case spv_cap::kFloat64:
      return c.float64;
    case spv_cap::kInt64:
      return c.int64;
    case spv_cap::kInt64Atomics:  // where the atomics act is checked per module
      return c.int64_atomics_buffer || c.int64_atomics_shared;
    case spv_cap::kDotProductInputAllKHR:
    case spv_cap::kDotProductInput4x8BitKHR:
    case spv_cap::kDotProductInput4x8BitPackedKHR:
    case spv_cap::kDotProductKHR:
      return c.integer_dot_product;
    case spv_cap::kInt16:
      return c.int16;
    case spv_cap::kInt8:
      return c.int8;
    case spv_cap::kStorageBuffer16BitAccess:
      return c.storage16;
    case spv_cap::kUniformAndStorageBuffer16BitAccess:
      return c.uniform_storage16;
    case spv_cap::kStorageBuffer8BitAccess:
      return c.storage8;
    case spv_cap::kUniformAndStorageBuffer8BitAccess:
      return c.uniform_storage8;
    case spv_cap::kVulkanMemoryModel:
    case spv_cap::kVulkanMemoryModelDeviceScope:  // enabled with the model (query_features)
      return c.memory_model;
    case spv_cap::kCooperativeMatrixNV:
      return c.coopmat_nv;
    case spv_cap::kCooperativeMatrixKHR:
      return c.coopmat_khr;
    case spv_cap::kCooperativeMatrixReductionsNV:
      return c.coopmat2.reductions;
    case spv_cap::kCooperativeMatrixConversionsNV:
      return c.coopmat2.conversions;
    case spv_cap::kCooperativeMatrixPerElementOperationsNV:
      return c.coopmat2.per_element_operations;
    case spv_cap::kCooperativeMatrixTensorAddressingNV:
    case spv_cap::kTensorAddressingNV:
      return c.coopmat2.tensor_addressing;
    case spv_cap::kCooperativeMatrixBlockLoadsNV:
      return c.coopmat2.block_loads;
    case spv_cap::kBFloat16TypeKHR:
      return c.bfloat16.type;
    case spv_cap::kBFloat16DotProductKHR:
      return c.bfloat16.dot_product;
    case spv_cap::kBFloat16CooperativeMatrixKHR:
      return c.bfloat16.cooperative_matrix;
    default:
      break;
  }
  if (const VkSubgroupFeatureFlags need = subgroup_feature(cap); need != 0)
    return c.subgroup_in_compute && (c.subgroup_ops & need) != 0;
  // Core from its Vulkan version on; anything else libtune neither enables nor checks.
  const spv_cap::CoreCapability* core = spv_cap::find_core(cap);
  return core != nullptr && VK_API_VERSION_MINOR(c.props.apiVersion) >= core->minor;
}

}  // namespace

std::optional<std::uint32_t> missing_capability(const DeviceCaps& c, std::uint32_t cap) {
  if (!has_own_capability(c, cap)) return cap;
  for (std::uint32_t implied : spv_cap::implied(cap))
    if (auto missing = missing_capability(c, implied)) return missing;
  return std::nullopt;
}

bool supports_capability(const DeviceCaps& c, std::uint32_t cap) {
  return !missing_capability(c, cap).has_value();
}

}  // namespace tune::vk
