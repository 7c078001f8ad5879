// Hand-built snapshots of real devices' Vulkan capabilities (DeviceCaps), as their drivers
// report them, for the backend's pure functions (device facts, feature masking): lavapipe, an
// H200, an integrated AMD GPU, and the H200 with the H100's cooperative-matrix facts. Only the
// fields those functions read are set.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "cooperative_matrix2.hpp"
#include "device_facts.hpp"

namespace tune::vk::snapshots {
inline constexpr VkMemoryPropertyFlags kLocal = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
inline constexpr VkMemoryPropertyFlags kHost =
    VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
inline constexpr VkMemoryPropertyFlags kCached = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
inline constexpr std::uint64_t kGiB = 1ull << 30;

inline void add_heap(DeviceCaps& c, std::uint64_t bytes, bool local) {
  c.memory.memoryHeaps[c.memory.memoryHeapCount++] = {
      bytes, local ? VkMemoryHeapFlags{VK_MEMORY_HEAP_DEVICE_LOCAL_BIT} : VkMemoryHeapFlags{0}};
}
inline void add_type(DeviceCaps& c, VkMemoryPropertyFlags flags, std::uint32_t heap) {
  c.memory.memoryTypes[c.memory.memoryTypeCount++] = {flags, heap};
}
// A device of `type` named `name`, its IDs and versions.
inline DeviceCaps identified(VkPhysicalDeviceType type, const char* name, std::uint32_t api,
                             std::uint32_t vendor, std::uint32_t device, std::uint32_t driver) {
  DeviceCaps c;
  c.props.deviceType = type;
  std::strncpy(c.props.deviceName, name, VK_MAX_PHYSICAL_DEVICE_NAME_SIZE - 1);
  c.props.apiVersion = api;
  c.props.vendorID = vendor;
  c.props.deviceID = device;
  c.props.driverVersion = driver;
  return c;
}
inline void compute_limits(DeviceCaps& c, std::uint32_t invocations, std::uint32_t shared) {
  auto& l = c.props.limits;
  l.maxComputeWorkGroupInvocations = invocations;
  l.maxComputeWorkGroupSize[0] = invocations;
  l.maxComputeWorkGroupSize[1] = invocations;
  l.maxComputeWorkGroupSize[2] = 64;
  l.maxComputeWorkGroupCount[0] = l.maxComputeWorkGroupCount[1] = l.maxComputeWorkGroupCount[2] =
      65535;
  l.maxComputeSharedMemorySize = shared;
  l.maxStorageBufferRange = 0xffffffffu;
  l.maxPushConstantsSize = 256;
}

// Mesa lavapipe on the CI machine (research-notes.md): a CPU device, one host heap whose one
// memory type is device-local and host-visible, Vulkan 1.3, 1 ns timestamps.
inline DeviceCaps lavapipe() {
  DeviceCaps c = identified(VK_PHYSICAL_DEVICE_TYPE_CPU, "llvmpipe (LLVM 15.0.6, 256 bits)",
                            VK_MAKE_API_VERSION(0, 1, 3, 230), 0x10005, 0, 0);
  compute_limits(c, 1024, 32768);
  c.props.limits.timestampPeriod = 1.0f;
  add_heap(c, 16 * kGiB, true);
  add_type(c, kLocal | kHost | kCached, 0);
  c.max_allocation_bytes = 2 * kGiB;
  c.subgroup_size = 8;
  c.subgroup_in_compute = true;
  c.subgroup_ops = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
  c.int64 = c.float64 = c.int16 = c.float16 = c.int8 = c.storage16 = true;
  c.int64_atomics_buffer = c.int64_atomics_shared = true;
  // VK_EXT_shader_atomic_float(2): 32-bit float atomics only, no 16- or 64-bit ones.
  for (FloatAtomics* a : {&c.float_atomics_buffer, &c.float_atomics_shared})
    a->float32 = a->float32_add = a->float32_min_max = true;
  c.integer_dot_product = true;
  c.driver_name = "llvmpipe";
  c.driver_info = "Mesa 22.3.6 (LLVM 15.0.6)";
  return c;
}

// The NVIDIA H200 (driver 580.159): a discrete GPU with a device-local heap, host heaps with
// coherent and cached types, and a small device-local host-visible (BAR) type.
inline DeviceCaps h200(bool with_driver_name) {
  DeviceCaps c =
      identified(VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, "NVIDIA H200",
                 VK_MAKE_API_VERSION(0, 1, 4, 312), 0x10DE, 0x2335, (580u << 22) | (159u << 14));
  compute_limits(c, 1024, 49152);
  c.props.limits.timestampPeriod = 1.0f;
  add_heap(c, 140 * kGiB, true);
  add_heap(c, 64 * kGiB, false);
  add_heap(c, 256ull << 20, true);
  add_type(c, 0, 1);
  add_type(c, kLocal, 0);
  add_type(c, kHost, 1);
  add_type(c, kHost | kCached, 1);
  add_type(c, kLocal | kHost, 2);
  c.max_allocation_bytes = 4 * kGiB;
  c.subgroup_size = 32;
  c.subgroup_in_compute = true;
  c.subgroup_ops = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT |
                   VK_SUBGROUP_FEATURE_SHUFFLE_BIT;
  c.int64 = c.float64 = c.int16 = c.float16 = c.int8 = c.storage16 = c.storage8 = true;
  c.int64_atomics_buffer = c.int64_atomics_shared = true;
  // VK_EXT_shader_atomic_float, no _float2 (read with vulkaninfo from the same driver on an H100,
  // 2026-12-08): 32- and 64-bit float add and load/store/exchange on buffers and in shared
  // memory; no min/max, no 16-bit. shaderIntegerDotProduct (4x8-bit packed accelerated).
  for (FloatAtomics* a : {&c.float_atomics_buffer, &c.float_atomics_shared})
    a->float32 = a->float32_add = a->float64 = a->float64_add = true;
  c.integer_dot_product = true;
  if (with_driver_name) {
    c.driver_name = "NVIDIA";
    c.driver_info = "580.159";
  }
  return c;
}

// An integrated GPU (AMD APU class): device-local memory that is also host-visible.
inline DeviceCaps integrated() {
  DeviceCaps c = identified(VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU, "AMD Radeon 680M",
                            VK_MAKE_API_VERSION(0, 1, 3, 0), 0x1002, 0x1681,
                            VK_MAKE_API_VERSION(0, 2, 0, 279));
  compute_limits(c, 1024, 65536);
  c.props.limits.timestampPeriod = 10.0f;
  add_heap(c, 2 * kGiB, true);
  add_heap(c, 30 * kGiB, false);
  add_type(c, kLocal, 0);
  add_type(c, kLocal | kHost, 0);
  add_type(c, kHost, 1);
  c.max_allocation_bytes = 2 * kGiB;
  c.subgroup_size = 64;
  return c;
}

inline CoopMatFlexibleDimensionsNv flexible(std::uint32_t invocations, std::uint32_t m,
                                            std::uint32_t n, std::uint32_t k, std::uint32_t a,
                                            std::uint32_t c, std::uint32_t scope) {
  CoopMatFlexibleDimensionsNv e{};
  e.sType = kStructCoopMatFlexibleDimensionsNv;
  e.MGranularity = m;
  e.NGranularity = n;
  e.KGranularity = k;
  e.AType = e.BType = a;
  e.CType = e.ResultType = c;
  e.scope = scope;
  e.workgroupInvocations = invocations;
  return e;
}

// VK_NV_cooperative_matrix2's flexible-dimension list as the H100's driver (580.159.04)
// reports it, the u8/s8 and fp8 rows left out but one: subgroup rows, then per workgroup size
// f16 x f16 + f16, f16 x f16 + f32, u8 and bf16 x bf16 + f32 (2026-12-06: the harness's log,
// cm2.txt, in studies/data/2026-12-06-h100-coopmat2.tar.xz).
inline std::vector<CoopMatFlexibleDimensionsNv> h100_flexible_list() {
  constexpr std::uint32_t f16 = kCoopComponentFloat16, f32 = kCoopComponentFloat32, u8 = 7;
  constexpr std::uint32_t bf16 = kCoopComponentBfloat16;
  constexpr std::uint32_t wg = kCoopScopeWorkgroup, sg = 3;
  std::vector<CoopMatFlexibleDimensionsNv> list = {flexible(0, 16, 16, 16, f16, f16, sg),
                                                   flexible(0, 16, 16, 16, f16, f32, sg),
                                                   flexible(0, 16, 16, 16, bf16, f32, sg)};
  const std::uint32_t grain[4][3] = {{16, 16, 16}, {16, 16, 16}, {32, 16, 16}, {32, 32, 16}};
  const std::uint32_t sizes[4] = {32, 64, 128, 256};
  for (int i = 0; i < 4; ++i) {
    const auto& g = grain[i];
    list.push_back(flexible(sizes[i], g[0], g[1], g[2], f16, f16, wg));
    list.push_back(flexible(sizes[i], g[0], g[1], g[2], f16, f32, wg));
    list.push_back(flexible(sizes[i], g[0], g[1], 32, u8, 9, wg));
    list.push_back(flexible(sizes[i], g[0], g[1], g[2], bf16, f32, wg));
  }
  return list;
}

// The H200 snapshot with the H100's cooperative-matrix facts (the same driver and silicon).
inline DeviceCaps h200_with_coopmat2() {
  DeviceCaps c = h200(true);
  c.memory_model = true;
  c.maintenance4 = true;
  c.coopmat_khr = true;
  c.coopmat2 = {true, true, true, true, true, true, true};
  c.coopmat2_max_workgroup = 256;
  c.coopmat2_reserved_shared = 8192;
  c.coopmat_nv = true;
  c.coopmat_shapes_f16 = {{16, 8, 16}, {16, 16, 16}};
  c.coopmat2_shapes_f16 = workgroup_shapes(h100_flexible_list(), kCoopComponentFloat16, 1024, 256);
  c.coopmat2_shapes_bf16 =
      workgroup_shapes(h100_flexible_list(), kCoopComponentBfloat16, 1024, 256);
  c.bfloat16 = {true, true, true};
  return c;
}

}  // namespace tune::vk::snapshots
