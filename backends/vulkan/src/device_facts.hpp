// Device facts: what the backend derives from one physical device's capabilities (DeviceCaps):
// its DeviceInfo, the memory types buffers live in, the largest buffer it can bind, the size of
// the L2-flush fill, and which SPIR-V capabilities its shaders may use.
//
// Everything here but query_caps is a pure function of its arguments (no Vulkan call), so it is
// tested on hand-built snapshots of real devices (tests/vulkan/vulkan_facts_test.cpp), as the
// core tests its pure functions on DeviceInfo snapshots (tune/testing/device_snapshots.hpp).
// Ownership: values only. Thread safety: reentrant. Blocking: query_caps asks the driver
// (quick, no device work); the rest never blocks.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cooperative_matrix2.hpp"
#include "float_atomics.hpp"
#include "tune/device_info.hpp"
#include "tune/status.hpp"
#include "tune/vulkan_interop.hpp"

namespace tune::vk {

// What the physical device supports, queried once at open.
struct DeviceCaps {
  VkPhysicalDeviceProperties props{};
  VkPhysicalDeviceMemoryProperties memory{};
  std::uint64_t max_allocation_bytes = 0;  // VkPhysicalDeviceMaintenance3Properties
  std::uint32_t queue_family = 0;
  std::uint32_t timestamp_valid_bits = 0;
  std::uint32_t subgroup_size = 0;
  VkSubgroupFeatureFlags subgroup_ops = 0;
  bool subgroup_in_compute = false;
  bool int64 = false, float64 = false, int16 = false;
  bool float16 = false, int8 = false;
  bool storage16 = false, uniform_storage16 = false, storage8 = false, uniform_storage8 = false;
  bool memory_model = false;  // vulkanMemoryModel (Vulkan 1.2): cooperative-matrix shaders use it
  // shaderBufferInt64Atomics, shaderSharedInt64Atomics (Vulkan 1.2): 64-bit integer atomics on
  // buffers, on workgroup memory.
  bool int64_atomics_buffer = false, int64_atomics_shared = false;
  // VK_EXT_shader_atomic_float's and VK_EXT_shader_atomic_float2's buffer and shared-memory
  // features (none where the extension is absent).
  FloatAtomics float_atomics_buffer, float_atomics_shared;
  // shaderIntegerDotProduct (Vulkan 1.3, or VK_KHR_shader_integer_dot_product before it).
  bool integer_dot_product = false;
  // VK_NV_cooperative_matrix is present and its cooperativeMatrix feature on; its subgroup-scope
  // shapes for f16 x f16 + f32 (what DeviceInfo::matrix_shapes_f16 reports).
  bool coopmat_nv = false;
  std::vector<MatrixShape> coopmat_shapes_f16;
  // Vulkan 1.3's maintenance4 feature: a module may state its workgroup size with LocalSizeId
  // (what SPIR-V 1.6 compilers emit for local_size_x_id).
  bool maintenance4 = false;
  // VK_KHR_cooperative_matrix with its cooperativeMatrix feature.
  bool coopmat_khr = false;
  // VK_NV_cooperative_matrix2 (with coopmat_khr): its features, each as the device reports it
  // (the structure applications report theirs in).
  using Coopmat2 = vulkan::EnabledFeatures::CooperativeMatrix2;
  Coopmat2 coopmat2;
  // Its workgroup-scope f16 x f16 + f32 and bf16 x bf16 + f32 shapes (what
  // DeviceInfo::workgroup_matrix_f16 and _bf16 report when workgroup scope, flexible dimensions
  // and tensor addressing are all on).
  std::vector<WorkgroupMatrixShape> coopmat2_shapes_f16, coopmat2_shapes_bf16;
  // VK_KHR_shader_bfloat16's features, each as the device reports it.
  using Bfloat16 = vulkan::EnabledFeatures::ShaderBfloat16;
  Bfloat16 bfloat16;
  // cooperativeMatrixWorkgroupScopeMaxWorkgroupSize: the largest workgroup a shader with
  // workgroup-scope matrices may run in.
  std::uint32_t coopmat2_max_workgroup = 0;
  // cooperativeMatrixWorkgroupScopeReservedSharedMemory: what such a shader's own shared
  // memory leaves of maxComputeSharedMemorySize.
  std::uint32_t coopmat2_reserved_shared = 0;
  // Vulkan 1.3 subgroupSizeControl with compute among requiredSubgroupSizeStages: compute
  // pipelines may require a subgroup size in [min, max] (both 0 otherwise).
  bool subgroup_size_control = false;
  std::uint32_t min_subgroup_size = 0, max_subgroup_size = 0;
  std::string driver_name, driver_info;
  std::string uuid;  // VkPhysicalDeviceIDProperties::deviceUUID (format_uuid); empty: unknown
};

// Queries what `pd` (of `instance`) supports. `why` explains why it is unusable (empty when
// usable). `max_api` (0: none) caps the API version used, and reported in props.apiVersion: an
// application's instance of a lower version may not be asked for newer structures.
DeviceCaps query_caps(VkInstance instance, VkPhysicalDevice pd, std::string* why,
                      std::uint32_t max_api = 0);

// The workgroup-scope shapes of `component` x `component` + f32 (no saturation;
// kCoopComponentFloat16 or kCoopComponentBfloat16) of VK_NV_cooperative_matrix2's
// flexible-dimension list, one per workgroup size up to `max_workgroup`
// (cooperativeMatrixWorkgroupScopeMaxWorkgroupSize), the first listed for each, each with
// `max_dimension` (cooperativeMatrixFlexibleDimensionsMaxDimension).
std::vector<WorkgroupMatrixShape> workgroup_shapes(
    std::span<const CoopMatFlexibleDimensionsNv> list, std::uint32_t component,
    std::uint32_t max_dimension, std::uint32_t max_workgroup);

// Stable names used in DeviceInfo and listings.
std::string vendor_name(std::uint32_t vendor_id);
std::string device_type_name(VkPhysicalDeviceType t);

// Where buffers live and how large they may be.
struct MemoryPlan {
  // Device buffers: device-local; on CPU and integrated devices preferably also host-visible
  // and coherent (no staging copies), on discrete GPUs preferably not (full bandwidth).
  std::uint32_t device_type = 0;
  // Staging buffers: host-visible and coherent, cached when possible.
  std::uint32_t staging_type = 0;
  bool device_mappable = false;  // device buffers can be mapped (no staging)
  // One storage-buffer descriptor binds a whole buffer: min of maxStorageBufferRange, the
  // largest allocation and the heap.
  std::uint64_t max_buffer_bytes = 0;
  // The cache-flush fill before each timed launch: flush_bytes_for() of the last-level cache
  // set_last_level_cache() records, at most a quarter of the largest buffer, a multiple of 4.
  std::uint64_t flush_bytes = 0;
};
// unavailable when no memory type suits device or staging buffers.
Result<MemoryPlan> plan_memory(const DeviceCaps& caps);

// Records the device's last-level cache in `info`: Vulkan reports none, so a default by
// device type (CacheSizeSource::default_size), or TUNE_LLC_BYTES.
void set_last_level_cache(DeviceInfo& info, const DeviceCaps& caps);

// The DeviceInfo of the device; `compiler_version` names the shader compiler and its target.
DeviceInfo device_info(const DeviceCaps& caps, std::string compiler_version);

// Whether shaders may use SPIR-V capability `cap` (spirv_capabilities.hpp's spv_cap) on the device,
// the capabilities it implies (spv_cap::implied) included: true for the core capabilities and
// those pipeline creation judges.
bool supports_capability(const DeviceCaps& caps, std::uint32_t cap);

// The first of `cap` and the capabilities it implies, recursively, that the device does not
// support (`cap` itself first); nullopt when it supports them all.
std::optional<std::uint32_t> missing_capability(const DeviceCaps& caps, std::uint32_t cap);

}  // namespace tune::vk
