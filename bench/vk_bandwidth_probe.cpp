// vk_bandwidth_probe: issue 3's diagnostic. On the H200 libtune's Vulkan vector add reaches
// about half of the copy ceiling that CUDA reaches; this program times, on raw Vulkan + shaderc
// (its own small code, not tune::Device), the copy and fill ceilings and the vector add with one
// difference from libtune's path at a time, and prints one markdown table row per variant.
//
//   vk_bandwidth_probe [--device N] [--n ELEMS] [--reps R] [--ref-gbps X] [--dump DIR]
//
//   --device N     physical device index (default: libtune's choice, TUNE_VULKAN_DEVICE too)
//   --n ELEMS      vector length (default 2^26 floats; copy and fill move 4 n bytes per buffer)
//   --reps R       timed repetitions per row, median reported (default 25, at least 20 advised)
//   --ref-gbps X   adds a column: GB/s / X (e.g. the CUDA copy ceiling, 4183 on the H200)
//   --dump DIR     writes each row's SPIR-V assembly and, where the driver offers them
//                  (VK_KHR_pipeline_executable_properties), its internal representations
//
// Timing replicates VulkanDevice::time(): a command buffer starting with an all-commands
// barrier; per rep an optional L2 flush (vkCmdFillBuffer of a scratch buffer sized like
// libtune's, then an all-commands barrier), a TOP_OF_PIPE timestamp, the operation, a
// BOTTOM_OF_PIPE timestamp and an all-commands barrier; a final barrier to the host stage.
// Ticks are masked with the queue family's timestampValidBits and scaled by timestampPeriod.
// Three warm-up reps first; the median of --reps reps after. Bytes: vector add 12 n (a, b read
// and c written, as kernels::Workload::bytes()), copy 2 x 4n (read + written, as bench_cuda's
// copy ceiling), fill 4n (written). "wall/op" is host time from vkQueueSubmit to the fence over
// the operations submitted (flushes included when flushing): a cross-check of the timestamps.
// Every vector-add row poisons c with NaN first and compares c with a CPU reference after
// timing (exact: IEEE addition); a mismatch prints FAIL and makes the exit status 1.
//
// Sections (row ids): A copy and fill ceilings on libtune's buffers; B libtune's shader as
// libtune compiles, binds, dispatches and times it; C the same index math without aliased views
// (restrict, all loads before stores); D 1-D grid; E timing method (no flush, start stamp at
// BOTTOM_OF_PIPE, one submission per rep like bench_vulkan, 8 dispatches per stamp pair);
// F shaderc options; G descriptor ranges, dynamic descriptors, n as a spec constant; H every
// DEVICE_LOCAL memory type and a dedicated allocation; I other device creations (no optional
// features, robustBufferAccess, maintenance4 with a Vulkan 1.3 target, bufferDeviceAddress with
// descriptor-free shaders, the graphics+compute queue family); J compiler statistics
// (VK_KHR_pipeline_executable_properties, where offered). "/ copy" divides by row A1.
// About 75 rows; 2^26 floats need ~1 GiB of device memory. On an NVIDIA GPU, sample the clocks
// beside it: nvidia-smi --query-gpu=pstate,clocks.sm,clocks.mem --format=csv -lms 100.
#include <vulkan/vulkan.h>
#include <shaderc/shaderc.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tune/kernels/bundled.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------------------------
// Options, errors, small helpers

struct Options {
  int device = -1;
  std::int64_t n = std::int64_t{1} << 26;
  int reps = 25;
  double ref_gbps = 0;
  std::string dump;
};
Options g_opt;
int g_failures = 0;

const char* result_name(VkResult r) {
  switch (r) {
    case VK_SUCCESS:
      return "VK_SUCCESS";
    case VK_TIMEOUT:
      return "VK_TIMEOUT";
    case VK_NOT_READY:
      return "VK_NOT_READY";
    case VK_INCOMPLETE:
      return "VK_INCOMPLETE";
    case VK_ERROR_OUT_OF_HOST_MEMORY:
      return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
      return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED:
      return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST:
      return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_EXTENSION_NOT_PRESENT:
      return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT:
      return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER:
      return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS:
      return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_INVALID_SHADER_NV:
      return "VK_ERROR_INVALID_SHADER_NV";
    default:
      return "VkResult(other)";
  }
}

struct VkError : std::runtime_error {
  VkError(const std::string& what, VkResult r)
      : std::runtime_error(what + ": " + result_name(r)), result(r) {}
  VkResult result;
};

void vk_check(VkResult r, const char* what) {
  if (r != VK_SUCCESS) throw VkError(what, r);
}

template <class T>
T vk_struct(VkStructureType type) {
  T v{};
  v.sType = type;
  return v;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string mib(std::uint64_t bytes) {
  return fmt("%.0f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

std::string api_text(std::uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) +
         "." + std::to_string(VK_API_VERSION_PATCH(v));
}

std::string mem_flags(VkMemoryPropertyFlags f) {
  std::string s;
  auto add = [&](VkMemoryPropertyFlags bit, const char* name) {
    if (f & bit) s += (s.empty() ? "" : "|") + std::string(name);
  };
  add(VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, "DEVICE_LOCAL");
  add(VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, "HOST_VISIBLE");
  add(VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, "HOST_COHERENT");
  add(VK_MEMORY_PROPERTY_HOST_CACHED_BIT, "HOST_CACHED");
  add(VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT, "LAZILY_ALLOCATED");
  add(VK_MEMORY_PROPERTY_PROTECTED_BIT, "PROTECTED");
  add(VK_MEMORY_PROPERTY_DEVICE_COHERENT_BIT_AMD, "DEVICE_COHERENT_AMD");
  add(VK_MEMORY_PROPERTY_DEVICE_UNCACHED_BIT_AMD, "DEVICE_UNCACHED_AMD");
  add(VK_MEMORY_PROPERTY_RDMA_CAPABLE_BIT_NV, "RDMA_CAPABLE_NV");
  return s.empty() ? "0" : s;
}

std::string queue_flags(VkQueueFlags f) {
  std::string s;
  auto add = [&](VkQueueFlags bit, const char* name) {
    if (f & bit) s += (s.empty() ? "" : "|") + std::string(name);
  };
  add(VK_QUEUE_GRAPHICS_BIT, "GRAPHICS");
  add(VK_QUEUE_COMPUTE_BIT, "COMPUTE");
  add(VK_QUEUE_TRANSFER_BIT, "TRANSFER");
  add(VK_QUEUE_SPARSE_BINDING_BIT, "SPARSE");
  add(VK_QUEUE_PROTECTED_BIT, "PROTECTED");
  return s.empty() ? "0" : s;
}

// ---------------------------------------------------------------------------------------------
// The physical device, queried and chosen like backends/vulkan/src/vulkan_backend.cpp does

struct Phys {
  VkPhysicalDevice pd = VK_NULL_HANDLE;
  int index = -1;
  VkPhysicalDeviceProperties props{};
  VkPhysicalDeviceMemoryProperties mem{};
  std::vector<VkQueueFamilyProperties> families;
  int family = -1;            // libtune's pick: compute + timestamps, no graphics preferred
  int universal_family = -1;  // the first graphics + compute family with timestamps
  std::string why;            // why libtune would find it unusable (empty: usable)
  std::string driver_name, driver_info;
  VkPhysicalDeviceFeatures features{};
  bool storage16 = false, uniform_storage16 = false, float16 = false, int8 = false;
  bool storage8 = false, uniform_storage8 = false, maintenance4 = false, exec_props = false;
  bool bda = false;
  std::uint64_t max_alloc = 0;
  std::vector<std::string> extensions;
  bool has_ext(const char* name) const {
    return std::find(extensions.begin(), extensions.end(), name) != extensions.end();
  }
};

Phys query_phys(VkPhysicalDevice pd, int index) {
  Phys p;
  p.pd = pd;
  p.index = index;
  vkGetPhysicalDeviceProperties(pd, &p.props);
  vkGetPhysicalDeviceMemoryProperties(pd, &p.mem);
  const bool v12 = p.props.apiVersion >= VK_API_VERSION_1_2;
  const bool v13 = p.props.apiVersion >= VK_API_VERSION_1_3;
  std::uint32_t ne = 0;
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &ne, nullptr);
  std::vector<VkExtensionProperties> exts(ne);
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &ne, exts.data());
  for (const auto& e : exts) p.extensions.emplace_back(e.extensionName);
  if (p.props.apiVersion < VK_API_VERSION_1_1) {
    p.why = "supports only Vulkan 1.0";
    return p;
  }
  auto drv = vk_struct<VkPhysicalDeviceDriverProperties>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES);
  auto m3 = vk_struct<VkPhysicalDeviceMaintenance3Properties>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES);
  auto p2 = vk_struct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2);
  p2.pNext = &m3;
  if (v12) m3.pNext = &drv;
  vkGetPhysicalDeviceProperties2(pd, &p2);
  p.max_alloc = m3.maxMemoryAllocationSize;
  if (v12) {
    p.driver_name = drv.driverName;
    p.driver_info = drv.driverInfo;
  }
  auto f2 = vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
  auto s16 = vk_struct<VkPhysicalDevice16BitStorageFeatures>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES);
  auto f16 = vk_struct<VkPhysicalDeviceShaderFloat16Int8Features>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES);
  auto s8 = vk_struct<VkPhysicalDevice8BitStorageFeatures>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES);
  auto m4 = vk_struct<VkPhysicalDeviceMaintenance4Features>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_FEATURES);
  auto pe = vk_struct<VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR);
  auto bda = vk_struct<VkPhysicalDeviceBufferDeviceAddressFeatures>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES);
  f2.pNext = &s16;
  void** tail = &s16.pNext;
  if (v12) {
    *tail = &f16;
    f16.pNext = &s8;
    s8.pNext = &bda;
    tail = &bda.pNext;
  }
  if (v13 || p.has_ext(VK_KHR_MAINTENANCE_4_EXTENSION_NAME)) {
    *tail = &m4;
    tail = &m4.pNext;
  }
  if (p.has_ext(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME)) *tail = &pe;
  vkGetPhysicalDeviceFeatures2(pd, &f2);
  p.features = f2.features;
  p.storage16 = s16.storageBuffer16BitAccess;
  p.uniform_storage16 = s16.uniformAndStorageBuffer16BitAccess;
  p.float16 = f16.shaderFloat16;
  p.int8 = f16.shaderInt8;
  p.storage8 = s8.storageBuffer8BitAccess;
  p.uniform_storage8 = s8.uniformAndStorageBuffer8BitAccess;
  p.maintenance4 = m4.maintenance4;
  p.exec_props = pe.pipelineExecutableInfo;
  p.bda = bda.bufferDeviceAddress;

  std::uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, nullptr);
  p.families.resize(nq);
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, p.families.data());
  for (std::uint32_t i = 0; i < nq; ++i) {
    const auto& q = p.families[i];
    if (!(q.queueFlags & VK_QUEUE_COMPUTE_BIT) || q.queueCount == 0) continue;
    if (q.timestampValidBits == 0) continue;
    const bool dedicated = !(q.queueFlags & VK_QUEUE_GRAPHICS_BIT);
    if (p.family < 0 || (dedicated && (p.families[static_cast<std::size_t>(p.family)].queueFlags &
                                       VK_QUEUE_GRAPHICS_BIT))) {
      p.family = static_cast<int>(i);
    }
    if (p.universal_family < 0 && !dedicated) p.universal_family = static_cast<int>(i);
  }
  if (p.family < 0) p.why = "no compute queue family with timestamps";
  if (p.props.limits.timestampPeriod <= 0.0f) p.why = "timestampPeriod is 0";
  return p;
}

int type_rank(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return 3;
    default:
      return 4;
  }
}

const char* type_name(VkPhysicalDeviceType t) {
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

// libtune's device-buffer memory type (VulkanDevice::init): device-local; on CPU / integrated
// devices preferably host-visible + coherent, on discrete GPUs preferably not host-visible.
std::uint32_t libtune_device_type(const Phys& p, bool staging) {
  const auto& mem = p.mem;
  const bool unified = p.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ||
                       p.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU;
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
      const int ss = 1 + ((f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) != 0 ? 1 : 0);
      if (ss > best_stage_score) best_stage = static_cast<int>(i), best_stage_score = ss;
    }
  }
  if (best_dev < 0 || best_stage < 0) throw std::runtime_error("no usable memory types");
  return static_cast<std::uint32_t>(staging ? best_stage : best_dev);
}

// ---------------------------------------------------------------------------------------------
// A logical device (one per device-creation variant)

struct DevOpts {
  std::string label;
  bool libtune_features = true;  // exactly the optional features VulkanDevice::init enables
  bool robust = false;           // + robustBufferAccess
  bool maintenance4 = false;     // + maintenance4 (needed by SPIR-V 1.6's LocalSizeId)
  bool exec_props = false;       // + VK_KHR_pipeline_executable_properties (statistics only)
  bool bda = false;              // + bufferDeviceAddress (Vulkan 1.2), buffers get addresses
  int family = -1;               // queue family; -1: libtune's pick
};

struct Buf {
  VkBuffer buf = VK_NULL_HANDLE;
  VkDeviceMemory mem = VK_NULL_HANDLE;
  std::uint64_t size = 0;
  void* mapped = nullptr;
};

void all_barrier(VkCommandBuffer cmd) {
  VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, VK_ACCESS_MEMORY_WRITE_BIT,
                    VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT};
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                       0, 1, &b, 0, nullptr, 0, nullptr);
}

constexpr std::uint64_t kStagingBytes = 64ull << 20;
constexpr VkBufferUsageFlags kUsage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                      VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                      VK_BUFFER_USAGE_TRANSFER_DST_BIT;

class Ctx {
 public:
  Ctx(const Phys& p, DevOpts o) : phys(p), opts(std::move(o)) {
    family = static_cast<std::uint32_t>(opts.family >= 0 ? opts.family : p.family);
    const auto& fam = p.families[family];
    ts_mask = fam.timestampValidBits >= 64 ? ~std::uint64_t{0}
                                           : (std::uint64_t{1} << fam.timestampValidBits) - 1;
    period = static_cast<double>(p.props.limits.timestampPeriod);
    const float prio = 1.0f;
    auto qci = vk_struct<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
    qci.queueFamilyIndex = family;
    qci.queueCount = 1;
    qci.pQueuePriorities = &prio;

    auto f2 = vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
    auto s16 = vk_struct<VkPhysicalDevice16BitStorageFeatures>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES);
    auto f16 = vk_struct<VkPhysicalDeviceShaderFloat16Int8Features>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES);
    auto s8 = vk_struct<VkPhysicalDevice8BitStorageFeatures>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES);
    auto m4 = vk_struct<VkPhysicalDeviceMaintenance4Features>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_FEATURES);
    auto pe = vk_struct<VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR);
    auto bda = vk_struct<VkPhysicalDeviceBufferDeviceAddressFeatures>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES);
    void** tail = &f2.pNext;
    auto chain = [&](void* s, void** next) {
      *tail = s;
      tail = next;
    };
    std::vector<const char*> exts;
    auto on = [&](bool b, const char* name) {
      if (b) features += (features.empty() ? "" : ", ") + std::string(name);
      return b ? VK_TRUE : VK_FALSE;
    };
    if (opts.libtune_features) {
      f2.features.shaderInt64 = on(p.features.shaderInt64, "shaderInt64");
      f2.features.shaderFloat64 = on(p.features.shaderFloat64, "shaderFloat64");
      f2.features.shaderInt16 = on(p.features.shaderInt16, "shaderInt16");
      s16.storageBuffer16BitAccess = on(p.storage16, "storageBuffer16BitAccess");
      s16.uniformAndStorageBuffer16BitAccess =
          on(p.uniform_storage16, "uniformAndStorageBuffer16BitAccess");
      chain(&s16, &s16.pNext);
      if (p.props.apiVersion >= VK_API_VERSION_1_2) {
        f16.shaderFloat16 = on(p.float16, "shaderFloat16");
        f16.shaderInt8 = on(p.int8, "shaderInt8");
        s8.storageBuffer8BitAccess = on(p.storage8, "storageBuffer8BitAccess");
        s8.uniformAndStorageBuffer8BitAccess =
            on(p.uniform_storage8, "uniformAndStorageBuffer8BitAccess");
        chain(&f16, &f16.pNext);
        chain(&s8, &s8.pNext);
      }
    }
    if (opts.robust) f2.features.robustBufferAccess = on(true, "robustBufferAccess");
    if (opts.maintenance4) {
      m4.maintenance4 = on(true, "maintenance4");
      chain(&m4, &m4.pNext);
      if (p.props.apiVersion < VK_API_VERSION_1_3) exts.push_back("VK_KHR_maintenance4");
    }
    if (opts.exec_props) {
      pe.pipelineExecutableInfo = on(true, "pipelineExecutableInfo");
      chain(&pe, &pe.pNext);
      exts.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    }
    if (opts.bda) {
      bda.bufferDeviceAddress = on(true, "bufferDeviceAddress");
      chain(&bda, &bda.pNext);
    }
    if (features.empty()) features = "(none)";
    auto dci = vk_struct<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);
    dci.pNext = &f2;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    dci.enabledExtensionCount = static_cast<std::uint32_t>(exts.size());
    dci.ppEnabledExtensionNames = exts.data();
    vk_check(vkCreateDevice(p.pd, &dci, nullptr, &dev), "vkCreateDevice");
    try {
      init_rest();
    } catch (...) {
      release();
      throw;
    }
  }
  ~Ctx() { release(); }
  Ctx(const Ctx&) = delete;
  Ctx& operator=(const Ctx&) = delete;

  void init_rest() {
    const Phys& p = phys;
    vkGetDeviceQueue(dev, family, 0, &queue);
    auto pci = vk_struct<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
    pci.flags =
        VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT | VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
    pci.queueFamilyIndex = family;
    vk_check(vkCreateCommandPool(dev, &pci, nullptr, &pool), "vkCreateCommandPool");

    device_type = libtune_device_type(p, false);
    staging_type = libtune_device_type(p, true);
    // libtune's flush size: 64 MiB discrete, 16 MiB integrated/virtual, 4 MiB CPU; at most a
    // quarter of the largest bindable buffer.
    std::uint64_t flush = 4ull << 20;
    if (p.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) flush = 64ull << 20;
    if (p.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ||
        p.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU)
      flush = 16ull << 20;
    const std::uint64_t heap = p.mem.memoryHeaps[p.mem.memoryTypes[device_type].heapIndex].size;
    const std::uint64_t max_buffer = std::min<std::uint64_t>(
        {p.props.limits.maxStorageBufferRange, p.max_alloc > 0 ? p.max_alloc : heap, heap});
    flush = std::min(flush, max_buffer / 4) & ~std::uint64_t{3};
    if (flush > 0) scratch = create(flush, device_type, false);
    staging = create(kStagingBytes, staging_type, false, true);
  }
  void release() {
    if (dev == VK_NULL_HANDLE) return;
    vkDeviceWaitIdle(dev);
    destroy(scratch);
    destroy(staging);
    if (pool != VK_NULL_HANDLE) vkDestroyCommandPool(dev, pool, nullptr);
    vkDestroyDevice(dev, nullptr);
    dev = VK_NULL_HANDLE;
  }

  // A buffer in its own allocation (libtune: VulkanDevice::create_raw), optionally dedicated.
  Buf create(std::uint64_t bytes, std::uint32_t type, bool dedicated, bool map = false) {
    Buf b;
    b.size = bytes;
    auto bci = vk_struct<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
    bci.size = bytes;
    bci.usage =
        map ? (VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT) : kUsage;
    if (opts.bda && !map) bci.usage |= VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
    bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    vk_check(vkCreateBuffer(dev, &bci, nullptr, &b.buf), "vkCreateBuffer");
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(dev, b.buf, &req);
    if ((req.memoryTypeBits & (1u << type)) == 0) {
      vkDestroyBuffer(dev, b.buf, nullptr);
      throw std::runtime_error("the buffer cannot live in memory type " + std::to_string(type));
    }
    auto mai = vk_struct<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = type;
    auto ded =
        vk_struct<VkMemoryDedicatedAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO);
    ded.buffer = b.buf;
    auto flags = vk_struct<VkMemoryAllocateFlagsInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO);
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    const void** tail = &mai.pNext;
    if (dedicated) {
      *tail = &ded;
      tail = &ded.pNext;
    }
    if (opts.bda && !map) *tail = &flags;
    VkResult r = vkAllocateMemory(dev, &mai, nullptr, &b.mem);
    if (r == VK_SUCCESS) r = vkBindBufferMemory(dev, b.buf, b.mem, 0);
    if (r == VK_SUCCESS && map) r = vkMapMemory(dev, b.mem, 0, VK_WHOLE_SIZE, 0, &b.mapped);
    if (r != VK_SUCCESS) {
      destroy(b);
      throw VkError("vkAllocateMemory/vkBindBufferMemory/vkMapMemory(" + mib(bytes) + ", type " +
                        std::to_string(type) + ")",
                    r);
    }
    return b;
  }
  void destroy(Buf& b) {
    if (b.buf != VK_NULL_HANDLE) vkDestroyBuffer(dev, b.buf, nullptr);
    if (b.mem != VK_NULL_HANDLE) vkFreeMemory(dev, b.mem, nullptr);
    b = Buf{};
  }

  // A one-time command buffer starting with libtune's all-commands barrier.
  VkCommandBuffer begin() {
    auto ai =
        vk_struct<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
    ai.commandPool = pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    vk_check(vkAllocateCommandBuffers(dev, &ai, &cmd), "vkAllocateCommandBuffers");
    auto bi = vk_struct<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vk_check(vkBeginCommandBuffer(cmd, &bi), "vkBeginCommandBuffer");
    all_barrier(cmd);
    return cmd;
  }
  // Ends (with libtune's barrier to the host stage), submits, waits; returns host ns from the
  // submission to the fence.
  double submit_wait(VkCommandBuffer cmd) {
    VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, VK_ACCESS_MEMORY_WRITE_BIT,
                      VK_ACCESS_HOST_READ_BIT};
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                         &b, 0, nullptr, 0, nullptr);
    vk_check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
    auto fci = vk_struct<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
    VkFence fence = VK_NULL_HANDLE;
    vk_check(vkCreateFence(dev, &fci, nullptr, &fence), "vkCreateFence");
    auto si = vk_struct<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    const auto t0 = Clock::now();
    VkResult r = vkQueueSubmit(queue, 1, &si, fence);
    if (r == VK_SUCCESS) r = vkWaitForFences(dev, 1, &fence, VK_TRUE, 120'000'000'000ull);
    const auto t1 = Clock::now();
    vkDestroyFence(dev, fence, nullptr);
    vkFreeCommandBuffers(dev, pool, 1, &cmd);
    vk_check(r, "vkQueueSubmit/vkWaitForFences");
    return std::chrono::duration<double, std::nano>(t1 - t0).count();
  }

  void upload(Buf& dst, const void* src, std::uint64_t bytes) {
    for (std::uint64_t done = 0; done < bytes; done += kStagingBytes) {
      const std::uint64_t n = std::min(kStagingBytes, bytes - done);
      std::memcpy(staging.mapped, static_cast<const char*>(src) + done, n);
      VkCommandBuffer cmd = begin();
      VkBufferCopy region{0, done, n};
      vkCmdCopyBuffer(cmd, staging.buf, dst.buf, 1, &region);
      submit_wait(cmd);
    }
  }
  void download(const Buf& src, void* dst, std::uint64_t bytes) {
    for (std::uint64_t done = 0; done < bytes; done += kStagingBytes) {
      const std::uint64_t n = std::min(kStagingBytes, bytes - done);
      VkCommandBuffer cmd = begin();
      VkBufferCopy region{done, 0, n};
      vkCmdCopyBuffer(cmd, src.buf, staging.buf, 1, &region);
      submit_wait(cmd);
      std::memcpy(static_cast<char*>(dst) + done, staging.mapped, n);
    }
  }
  void fill_now(Buf& dst, std::uint32_t pattern) {
    VkCommandBuffer cmd = begin();
    vkCmdFillBuffer(cmd, dst.buf, 0, dst.size, pattern);
    submit_wait(cmd);
  }

  const Phys& phys;
  DevOpts opts;
  std::string features;  // enabled optional features, for the table
  VkDevice dev = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  VkCommandPool pool = VK_NULL_HANDLE;
  std::uint32_t family = 0;
  std::uint64_t ts_mask = 0;
  double period = 1.0;
  std::uint32_t device_type = 0, staging_type = 0;
  Buf scratch, staging;
};

// ---------------------------------------------------------------------------------------------
// Timing (VulkanDevice::time's command stream)

struct TimeOpts {
  bool flush = true;        // L2-flush fill + barrier before each rep (bench_vulkan: on)
  bool per_submit = false;  // one submission per rep (bench_vulkan: Device::time, reps = 1)
  int per_span = 1;         // operations between one pair of timestamps (barriers between)
  VkPipelineStageFlagBits start_stage = VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT;
};

struct Timing {
  double median_ns = 0, min_ns = 0, wall_ns = 0;
};

using Op = std::function<void(VkCommandBuffer)>;

// One command buffer with `count` timed reps; appends ns per operation, returns host wall ns.
double run_reps(Ctx& c, const Op& op, const TimeOpts& o, int count, std::uint32_t* flush_value,
                std::vector<double>* out) {
  auto qpi = vk_struct<VkQueryPoolCreateInfo>(VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO);
  qpi.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qpi.queryCount = static_cast<std::uint32_t>(2 * count);
  VkQueryPool qp = VK_NULL_HANDLE;
  vk_check(vkCreateQueryPool(c.dev, &qpi, nullptr, &qp), "vkCreateQueryPool");
  double wall = 0;
  try {
    VkCommandBuffer cmd = c.begin();
    vkCmdResetQueryPool(cmd, qp, 0, qpi.queryCount);
    for (int i = 0; i < count; ++i) {
      if (o.flush && c.scratch.buf != VK_NULL_HANDLE) {
        vkCmdFillBuffer(cmd, c.scratch.buf, 0, c.scratch.size, ++*flush_value);
        all_barrier(cmd);
      }
      const auto q = static_cast<std::uint32_t>(2 * i);
      vkCmdWriteTimestamp(cmd, o.start_stage, qp, q);
      for (int k = 0; k < o.per_span; ++k) {
        if (k > 0) all_barrier(cmd);
        op(cmd);
      }
      vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qp, q + 1);
      all_barrier(cmd);
    }
    wall = c.submit_wait(cmd);
    std::vector<std::uint64_t> ts(static_cast<std::size_t>(2 * count));
    vk_check(vkGetQueryPoolResults(c.dev, qp, 0, qpi.queryCount, ts.size() * 8, ts.data(), 8,
                                   VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
             "vkGetQueryPoolResults");
    for (int i = 0; i < count; ++i) {
      const std::uint64_t t0 = ts[2 * static_cast<std::size_t>(i)] & c.ts_mask;
      const std::uint64_t t1 = ts[2 * static_cast<std::size_t>(i) + 1] & c.ts_mask;
      out->push_back(static_cast<double>((t1 - t0) & c.ts_mask) * c.period / o.per_span);
    }
  } catch (...) {
    vkDestroyQueryPool(c.dev, qp, nullptr);
    throw;
  }
  vkDestroyQueryPool(c.dev, qp, nullptr);
  return wall;
}

Timing time_op(Ctx& c, const Op& op, const TimeOpts& o) {
  std::uint32_t flush_value = 0;
  std::vector<double> warm, samples;
  constexpr int kWarm = 3;
  if (o.per_submit) {
    for (int i = 0; i < kWarm; ++i) run_reps(c, op, o, 1, &flush_value, &warm);
  } else {
    run_reps(c, op, o, kWarm, &flush_value, &warm);
  }
  double wall = 0;
  const int batch = o.per_submit ? 1 : 256;
  for (int done = 0; done < g_opt.reps;) {
    const int n = std::min(batch, g_opt.reps - done);
    wall += run_reps(c, op, o, n, &flush_value, &samples);
    done += n;
  }
  std::sort(samples.begin(), samples.end());
  Timing t;
  const std::size_t m = samples.size();
  t.median_ns = m % 2 ? samples[m / 2] : 0.5 * (samples[m / 2 - 1] + samples[m / 2]);
  t.min_ns = samples.front();
  t.wall_ns = wall / (static_cast<double>(g_opt.reps) * o.per_span);
  return t;
}

// ---------------------------------------------------------------------------------------------
// Host data and the table

std::vector<float> g_a, g_b, g_ref;
double g_copy_gbps = 0;  // the first copy row (the Vulkan copy ceiling on libtune's buffers)

void make_host_data(std::int64_t n) {
  g_a.resize(static_cast<std::size_t>(n));
  g_b.resize(static_cast<std::size_t>(n));
  g_ref.resize(static_cast<std::size_t>(n));
  std::uint64_t s = 0x9E3779B97F4A7C15ull;
  auto next = [&s] {  // splitmix64
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  // Odd multiples of 2^-24 in (-1, 1): never zero, and every sum is exact.
  auto value = [&](std::uint64_t r) {
    const auto k = static_cast<std::int64_t>(r >> 40);  // 24 bits
    return static_cast<float>(static_cast<double>(2 * k - 16777215) / 16777216.0);
  };
  for (std::size_t i = 0; i < g_a.size(); ++i) {
    g_a[i] = value(next());
    g_b[i] = value(next());
    g_ref[i] = g_a[i] + g_b[i];
  }
}

void print_header() {
  std::printf("\n| id | variant | shader / details | grid | median us | min us | GB/s | / copy |%s",
              g_opt.ref_gbps > 0 ? " / ref |" : "");
  std::printf(" wall/op us | check |\n|---|---|---|---|---|---|---|---|%s---|---|\n",
              g_opt.ref_gbps > 0 ? "---|" : "");
}

struct Row {
  std::string id, variant, details, grid, check;
  double bytes = 0;
  std::optional<Timing> t;
};

void print_row(const Row& r) {
  std::string cols;
  if (r.t) {
    const double gbps = r.bytes / r.t->median_ns;
    cols = fmt("%.1f", r.t->median_ns / 1e3) + " | " + fmt("%.1f", r.t->min_ns / 1e3) + " | " +
           fmt("%.0f", gbps) + " | " +
           (g_copy_gbps > 0 ? fmt("%.0f%%", 100.0 * gbps / g_copy_gbps) : std::string("-")) + " | ";
    if (g_opt.ref_gbps > 0) cols += fmt("%.0f%%", 100.0 * gbps / g_opt.ref_gbps) + " | ";
    cols += fmt("%.1f", r.t->wall_ns / 1e3) + " | ";
  } else {
    cols = std::string("- | - | - | - | ") + (g_opt.ref_gbps > 0 ? "- | " : "") + "- | ";
  }
  std::printf("| %s | %s | %s | %s | %s%s |\n", r.id.c_str(), r.variant.c_str(), r.details.c_str(),
              r.grid.c_str(), cols.c_str(), r.check.c_str());
  std::fflush(stdout);
}

// Compares a downloaded buffer with `want`; "ok" or "FAIL ...".
std::string compare(const std::vector<float>& got, const std::vector<float>& want) {
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (!(got[i] == want[i])) {
      if (bad++ == 0) first = i;
    }
  }
  if (bad == 0) return "ok";
  ++g_failures;
  char buf[160];
  std::snprintf(buf, sizeof buf, "**FAIL** %zu wrong, first [%zu] = %g, want %g", bad, first,
                static_cast<double>(got[first]), static_cast<double>(want[first]));
  return buf;
}

// ---------------------------------------------------------------------------------------------
// Shaders

// kernels/vulkan/vector_add.comp as measured in issue 3 (2026-11-29). The bundled source is
// what libtune compiles today; when it differs from this text, section B also runs this one.
const char* const kIssue3Shader = R"glsl(#version 450
// c = a + b over n floats (bundled kernel "vector_add"; exact, IEEE addition).
// Tunables (macros): EPT elements per invocation, VEC4 (1: 16-byte loads and stores, the last
// n % 4 elements done by the first invocations of workgroup 0). The workgroup size comes from
// config block.x through specialization constant 0 (TUNE_BLOCK_X holds the same value).
// Grid: enough workgroups to cover n, split over x and y (maxComputeWorkGroupCount).
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer C { float c[]; };
// The same buffers seen as vec4 arrays (aliases of bindings 0-2).
layout(std430, binding = 0) readonly buffer A4 { vec4 a4[]; };
layout(std430, binding = 1) readonly buffer B4 { vec4 b4[]; };
layout(std430, binding = 2) writeonly buffer C4 { vec4 c4[]; };

layout(push_constant) uniform Params { int n; };

void main() {
  const uint N = uint(n);
  const uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  const uint lid = gl_LocalInvocationID.x;
  const uint base = group * (TUNE_BLOCK_X * EPT) + lid;
#if VEC4
  const uint n4 = N / 4u;
  for (uint j = 0u; j < EPT; ++j) {
    const uint i = base + j * TUNE_BLOCK_X;
    if (i < n4) c4[i] = a4[i] + b4[i];
  }
  if (group == 0u && lid < (N & 3u)) {
    const uint i = n4 * 4u + lid;
    c[i] = a[i] + b[i];
  }
#else
  for (uint j = 0u; j < EPT; ++j) {
    const uint i = base + j * TUNE_BLOCK_X;
    if (i < N) c[i] = a[i] + b[i];
  }
#endif
}
)glsl";

// The same kernel without aliased views: VEC4=0 declares only float arrays, VEC4=1 only vec4
// arrays (no scalar tail: n % 4 must be 0). RESTRICT=1 adds `restrict`; N_SPEC=1 takes n from
// specialization constant 3 instead of the push constant; BATCH=1 issues all EPT loads of an
// invocation before its first store (what aliasing may stop the compiler from doing).
const char* const kSplitShader = R"glsl(#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
#if RESTRICT
#define QUAL restrict
#else
#define QUAL
#endif
#if VEC4
#define ELEM vec4
#else
#define ELEM float
#endif
layout(std430, binding = 0) QUAL readonly buffer A { ELEM a[]; };
layout(std430, binding = 1) QUAL readonly buffer B { ELEM b[]; };
layout(std430, binding = 2) QUAL writeonly buffer C { ELEM c[]; };
#if N_SPEC
layout(constant_id = 3) const int n = 1;
#else
layout(push_constant) uniform Params { int n; };
#endif

void main() {
  const uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  const uint lid = gl_LocalInvocationID.x;
  const uint base = group * (TUNE_BLOCK_X * EPT) + lid;
#if VEC4
  const uint units = uint(n) / 4u;
#else
  const uint units = uint(n);
#endif
#if BATCH
  ELEM va[EPT];
  ELEM vb[EPT];
  for (uint j = 0u; j < EPT; ++j) {
    const uint i = base + j * TUNE_BLOCK_X;
    if (i < units) {
      va[j] = a[i];
      vb[j] = b[i];
    }
  }
  for (uint j = 0u; j < EPT; ++j) {
    const uint i = base + j * TUNE_BLOCK_X;
    if (i < units) c[i] = va[j] + vb[j];
  }
#else
  for (uint j = 0u; j < EPT; ++j) {
    const uint i = base + j * TUNE_BLOCK_X;
    if (i < units) c[i] = a[i] + b[i];
  }
#endif
}
)glsl";

// The split shader with buffer device addresses in the push constants instead of descriptors
// (what many hand-written Vulkan compute paths do). Same macros as kSplitShader but N_SPEC.
const char* const kBdaShader = R"glsl(#version 450
#extension GL_EXT_buffer_reference : require
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
#if RESTRICT
#define QUAL restrict
#else
#define QUAL
#endif
#if VEC4
#define ELEM vec4
#define ALIGN 16
#else
#define ELEM float
#define ALIGN 4
#endif
layout(buffer_reference, std430, buffer_reference_align = ALIGN) QUAL readonly buffer RO {
  ELEM v[];
};
layout(buffer_reference, std430, buffer_reference_align = ALIGN) QUAL writeonly buffer WO {
  ELEM v[];
};
layout(push_constant) uniform Params {
  RO a;
  RO b;
  WO c;
  int n;
};

void main() {
  const uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  const uint lid = gl_LocalInvocationID.x;
  const uint base = group * (TUNE_BLOCK_X * EPT) + lid;
#if VEC4
  const uint units = uint(n) / 4u;
#else
  const uint units = uint(n);
#endif
#if BATCH
  ELEM va[EPT];
  ELEM vb[EPT];
  for (uint j = 0u; j < EPT; ++j) {
    const uint i = base + j * TUNE_BLOCK_X;
    if (i < units) {
      va[j] = a.v[i];
      vb[j] = b.v[i];
    }
  }
  for (uint j = 0u; j < EPT; ++j) {
    const uint i = base + j * TUNE_BLOCK_X;
    if (i < units) c.v[i] = va[j] + vb[j];
  }
#else
  for (uint j = 0u; j < EPT; ++j) {
    const uint i = base + j * TUNE_BLOCK_X;
    if (i < units) c.v[i] = a.v[i] + b.v[i];
  }
#endif
}
)glsl";

std::string g_bundled;  // kernels::glsl vector_add source (what libtune compiles)
tune::kernels::BundledKernel g_vector_add;

enum class Src { bundled, issue3, split, bda };

struct VaCase {
  std::string variant;
  Src src = Src::bundled;
  bool vec4 = false;
  int ept = 1;
  std::uint32_t block = 256;
  bool restrict_ = false, n_spec = false, batch = false;  // split source only
  bool one_d = false;        // (groups, 1, 1) instead of libtune's 2-D split
  bool dynamic = false;      // STORAGE_BUFFER_DYNAMIC descriptors, offsets 0
  bool exact_range = false;  // descriptor range 4n instead of VK_WHOLE_SIZE
  shaderc_optimization_level opt = shaderc_optimization_level_performance;
  std::optional<shaderc_env_version> env;  // default: libtune's (1.2 on 1.2+ devices, else 1.1)
  TimeOpts timing;
};

tune::Config libtune_config(const VaCase& v) {
  tune::Config c;
  c.set(tune::kBlockX, static_cast<int>(v.block))
      .set("EPT", v.ept)
      .set("VEC4", tune::Value{v.vec4});
  if (c.launch().block.y == 0) c.launch().block.y = 1;
  if (c.launch().block.z == 0) c.launch().block.z = 1;
  return c;
}

shaderc_env_version libtune_env(const Phys& p) {
  return p.props.apiVersion >= VK_API_VERSION_1_2 ? shaderc_env_version_vulkan_1_2
                                                  : shaderc_env_version_vulkan_1_1;
}

const char* env_name(shaderc_env_version e) {
  switch (e) {
    case shaderc_env_version_vulkan_1_1:
      return "vk1.1";
    case shaderc_env_version_vulkan_1_2:
      return "vk1.2";
    case shaderc_env_version_vulkan_1_3:
      return "vk1.3";
    default:
      return "vk1.0";
  }
}

struct Spirv {
  std::vector<std::uint32_t> words;
  std::string summary;  // storage-buffer variables and Restrict/Aliased decorations
};

// Compiles like VulkanDevice::compile: glsl, target env, optimisation level, the config's
// parameters as macros (ints as text, bools as 1/0) and TUNE_BLOCK_X/Y/Z.
Spirv compile(const VaCase& v, const Phys& p, const std::string& dump_name) {
  shaderc::Compiler compiler;
  shaderc::CompileOptions opts;
  opts.SetSourceLanguage(shaderc_source_language_glsl);
  const shaderc_env_version env = v.env.value_or(libtune_env(p));
  opts.SetTargetEnvironment(shaderc_target_env_vulkan, env);
  opts.SetOptimizationLevel(v.opt);
  const tune::Config config = libtune_config(v);
  for (const auto& [name, value] : config.params()) {
    std::string text;
    if (const auto* i = std::get_if<std::int64_t>(&value)) {
      text = std::to_string(*i);
    } else if (const auto* b = std::get_if<bool>(&value)) {
      text = *b ? "1" : "0";
    } else {
      text = std::get<std::string>(value);
    }
    opts.AddMacroDefinition(name, text);
  }
  const tune::Dim3 block = config.launch().block;
  opts.AddMacroDefinition("TUNE_BLOCK_X", std::to_string(block.x));
  opts.AddMacroDefinition("TUNE_BLOCK_Y", std::to_string(block.y));
  opts.AddMacroDefinition("TUNE_BLOCK_Z", std::to_string(block.z));
  if (v.src == Src::split || v.src == Src::bda) {
    opts.AddMacroDefinition("RESTRICT", v.restrict_ ? "1" : "0");
    opts.AddMacroDefinition("N_SPEC", v.n_spec ? "1" : "0");
    opts.AddMacroDefinition("BATCH", v.batch ? "1" : "0");
  }
  const std::string& text = v.src == Src::bundled  ? g_bundled
                            : v.src == Src::issue3 ? std::string(kIssue3Shader)
                            : v.src == Src::split  ? std::string(kSplitShader)
                                                   : std::string(kBdaShader);
  auto res =
      compiler.CompileGlslToSpv(text, shaderc_glsl_compute_shader, "kernel.comp", "main", opts);
  if (res.GetCompilationStatus() != shaderc_compilation_status_success)
    throw std::runtime_error("shaderc: " + res.GetErrorMessage());
  Spirv s;
  s.words.assign(res.cbegin(), res.cend());
  if (!g_opt.dump.empty()) {
    auto as = compiler.CompileGlslToSpvAssembly(text, shaderc_glsl_compute_shader, "kernel.comp",
                                                "main", opts);
    std::ofstream(g_opt.dump + "/" + dump_name + ".spvasm") << std::string(as.cbegin(), as.cend());
  }
  // Storage-buffer variables (OpVariable, StorageBuffer or Uniform class) and decorations.
  int vars = 0, restrict_ = 0, aliased = 0;
  for (std::size_t i = 5; i < s.words.size();) {
    const std::uint32_t op = s.words[i] & 0xFFFF, count = s.words[i] >> 16;
    if (count == 0) break;
    if (op == 59 && count >= 4 && (s.words[i + 3] == 12 || s.words[i + 3] == 2)) ++vars;
    if (op == 71 && count >= 3) {  // OpDecorate target decoration
      if (s.words[i + 2] == 19) ++restrict_;
      if (s.words[i + 2] == 20) ++aliased;
    }
    i += count;
  }
  s.summary = std::to_string(s.words.size() * 4) + " B SPIR-V, " + std::to_string(vars) +
              " buffer vars" + (restrict_ ? ", Restrict x" + std::to_string(restrict_) : "") +
              (aliased ? ", Aliased x" + std::to_string(aliased) : "");
  return s;
}

// ---------------------------------------------------------------------------------------------
// Pipelines and descriptor sets (VulkanDevice::compile and make_descriptor_set_locked)

struct Pipe {
  VkDevice dev = VK_NULL_HANDLE;
  VkDescriptorSetLayout dsl = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipe = VK_NULL_HANDLE;
  VkDescriptorPool dpool = VK_NULL_HANDLE;
  VkDescriptorSet set = VK_NULL_HANDLE;
  bool push = true, dynamic = false, bda = false;
  std::uint64_t addr[3] = {0, 0, 0};  // buffer device addresses of a, b, c (bda only)
  Pipe() = default;
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  ~Pipe() {
    if (dev == VK_NULL_HANDLE) return;
    if (dpool != VK_NULL_HANDLE) vkDestroyDescriptorPool(dev, dpool, nullptr);
    if (pipe != VK_NULL_HANDLE) vkDestroyPipeline(dev, pipe, nullptr);
    if (layout != VK_NULL_HANDLE) vkDestroyPipelineLayout(dev, layout, nullptr);
    if (dsl != VK_NULL_HANDLE) vkDestroyDescriptorSetLayout(dev, dsl, nullptr);
  }
};

void make_pipeline(Ctx& c, const VaCase& v, const Spirv& spirv, Pipe* p,
                   VkPipelineCreateFlags flags = 0) {
  p->dev = c.dev;
  p->push = !(v.src == Src::split && v.n_spec);
  p->dynamic = v.dynamic;
  p->bda = v.src == Src::bda;
  const VkDescriptorType type =
      v.dynamic ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
  VkDescriptorSetLayoutBinding bindings[3];
  for (std::uint32_t i = 0; i < 3; ++i)
    bindings[i] = {i, type, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  auto dli = vk_struct<VkDescriptorSetLayoutCreateInfo>(
      VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
  dli.bindingCount = 3;
  dli.pBindings = bindings;
  if (!p->bda) {
    vk_check(vkCreateDescriptorSetLayout(c.dev, &dli, nullptr, &p->dsl),
             "vkCreateDescriptorSetLayout");
  }
  // Push constants: int n; with device addresses {a, b, c, n} (8 + 8 + 8 + 4 bytes).
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, p->bda ? 28u : 4u};
  auto pli = vk_struct<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
  pli.setLayoutCount = p->bda ? 0 : 1;
  pli.pSetLayouts = &p->dsl;
  pli.pushConstantRangeCount = p->push ? 1 : 0;
  pli.pPushConstantRanges = &range;
  vk_check(vkCreatePipelineLayout(c.dev, &pli, nullptr, &p->layout), "vkCreatePipelineLayout");

  auto smi = vk_struct<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
  smi.codeSize = spirv.words.size() * 4;
  smi.pCode = spirv.words.data();
  VkShaderModule module = VK_NULL_HANDLE;
  vk_check(vkCreateShaderModule(c.dev, &smi, nullptr, &module), "vkCreateShaderModule");
  const std::uint32_t spec_data[4] = {v.block, 1, 1, static_cast<std::uint32_t>(g_opt.n)};
  const VkSpecializationMapEntry entries[4] = {{0, 0, 4}, {1, 4, 4}, {2, 8, 4}, {3, 12, 4}};
  VkSpecializationInfo spec{p->push ? 3u : 4u, entries, p->push ? 12u : 16u, spec_data};
  auto cpi = vk_struct<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
  cpi.flags = flags;
  cpi.stage = vk_struct<VkPipelineShaderStageCreateInfo>(
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO);
  cpi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cpi.stage.module = module;
  cpi.stage.pName = "main";
  cpi.stage.pSpecializationInfo = &spec;
  cpi.layout = p->layout;
  const VkResult r = vkCreateComputePipelines(c.dev, VK_NULL_HANDLE, 1, &cpi, nullptr, &p->pipe);
  vkDestroyShaderModule(c.dev, module, nullptr);
  vk_check(r, "vkCreateComputePipelines");
}

struct VaBufs {
  Buf a, b, c;
};

void make_set(Ctx& c, const VaCase& v, const VaBufs& bufs, Pipe* p) {
  if (p->bda) {
    const Buf* b[3] = {&bufs.a, &bufs.b, &bufs.c};
    for (int i = 0; i < 3; ++i) {
      auto ai = vk_struct<VkBufferDeviceAddressInfo>(VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO);
      ai.buffer = b[i]->buf;
      p->addr[i] = vkGetBufferDeviceAddress(c.dev, &ai);
    }
    return;
  }
  const VkDescriptorType type =
      v.dynamic ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
  VkDescriptorPoolSize size{type, 3};
  auto dpi = vk_struct<VkDescriptorPoolCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
  dpi.maxSets = 1;
  dpi.poolSizeCount = 1;
  dpi.pPoolSizes = &size;
  vk_check(vkCreateDescriptorPool(c.dev, &dpi, nullptr, &p->dpool), "vkCreateDescriptorPool");
  auto dai = vk_struct<VkDescriptorSetAllocateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
  dai.descriptorPool = p->dpool;
  dai.descriptorSetCount = 1;
  dai.pSetLayouts = &p->dsl;
  vk_check(vkAllocateDescriptorSets(c.dev, &dai, &p->set), "vkAllocateDescriptorSets");
  const Buf* b[3] = {&bufs.a, &bufs.b, &bufs.c};
  VkDescriptorBufferInfo infos[3];
  VkWriteDescriptorSet writes[3];
  for (std::uint32_t i = 0; i < 3; ++i) {
    infos[i] = {b[i]->buf, 0, v.exact_range ? b[i]->size : VK_WHOLE_SIZE};
    writes[i] = vk_struct<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
    writes[i].dstSet = p->set;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = type;
    writes[i].pBufferInfo = &infos[i];
  }
  vkUpdateDescriptorSets(c.dev, 3, writes, 0, nullptr);
}

void record_dispatch(VkCommandBuffer cmd, const Pipe& p, const tune::Dim3& grid) {
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipe);
  if (p.bda) {
    std::uint8_t push[28];
    const auto n = static_cast<std::int32_t>(g_opt.n);
    std::memcpy(push, p.addr, 24);
    std::memcpy(push + 24, &n, 4);
    vkCmdPushConstants(cmd, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 28, push);
    vkCmdDispatch(cmd, grid.x, grid.y, grid.z);
    return;
  }
  const std::uint32_t offsets[3] = {0, 0, 0};
  vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &p.set,
                          p.dynamic ? 3 : 0, offsets);
  if (p.push) {
    const auto n = static_cast<std::int32_t>(g_opt.n);
    vkCmdPushConstants(cmd, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &n);
  }
  vkCmdDispatch(cmd, grid.x, grid.y, grid.z);
}

// libtune's grid (the bundled kernel's dims: workgroups split over x <= 32768 and y), or 1-D.
tune::Dim3 grid_for(const VaCase& v) {
  if (!v.one_d) {
    std::vector<tune::ArgValue> args(3);
    args.emplace_back(static_cast<std::int32_t>(g_opt.n));
    return g_vector_add.def.dims(libtune_config(v), args).grid;
  }
  const auto units = static_cast<std::uint64_t>(v.vec4 ? g_opt.n / 4 : g_opt.n);
  const std::uint64_t per = std::uint64_t{v.block} * static_cast<std::uint64_t>(v.ept);
  const std::uint64_t groups = std::max<std::uint64_t>((units + per - 1) / per, 1);
  return {static_cast<std::uint32_t>(std::min<std::uint64_t>(groups, 0xFFFFFFFFu)), 1, 1};
}

std::string grid_text(const tune::Dim3& g) {
  return std::to_string(g.x) + "x" + std::to_string(g.y) + "x" + std::to_string(g.z);
}

std::string case_text(const VaCase& v, const Phys& p) {
  std::string s = v.src == Src::bundled  ? "libtune"
                  : v.src == Src::issue3 ? "issue-3"
                  : v.src == Src::split  ? "split"
                                         : "device-address";
  if (v.src != Src::bundled && v.src != Src::issue3 && v.restrict_) s += "+restrict";
  if (v.src == Src::split && v.n_spec) s += "+n-spec";
  if (v.src != Src::bundled && v.src != Src::issue3 && v.batch) s += "+batched-loads";
  s += std::string(v.vec4 ? " VEC4" : " scalar") + " EPT=" + std::to_string(v.ept) + " b" +
       std::to_string(v.block);
  const shaderc_env_version env = v.env.value_or(libtune_env(p));
  s += std::string(" ") + env_name(env) +
       (v.opt == shaderc_optimization_level_performance ? " -O"
        : v.opt == shaderc_optimization_level_size      ? " -Os"
                                                        : " -O0");
  if (v.dynamic) s += ", dynamic descriptors";
  if (v.exact_range) s += ", range 4n";
  return s;
}

std::string timing_text(const TimeOpts& o) {
  std::string s;
  if (!o.flush) s += "no flush";
  if (o.per_submit) s += std::string(s.empty() ? "" : ", ") + "1 submit/rep";
  if (o.per_span > 1)
    s += std::string(s.empty() ? "" : ", ") + std::to_string(o.per_span) + " ops/timestamp pair";
  if (o.start_stage != VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT)
    s += std::string(s.empty() ? "" : ", ") + "start ts BOTTOM_OF_PIPE";
  return s;
}

// ---------------------------------------------------------------------------------------------
// Rows

struct Section {
  char letter;
  int next = 1;
  std::string id() { return std::string(1, letter) + std::to_string(next++); }
};

// A row naming the section that follows.
void title(const Section& s, const std::string& text) {
  std::printf("| **%c** | **%s** | | | | | | |%s | |\n", s.letter, text.c_str(),
              g_opt.ref_gbps > 0 ? " |" : "");
}

bool is_lost(const std::exception& e) {
  const auto* v = dynamic_cast<const VkError*>(&e);
  return v != nullptr && v->result == VK_ERROR_DEVICE_LOST;
}

void run_va(Ctx& c, VaBufs& bufs, Section& sec, const VaCase& v) {
  Row r;
  r.id = sec.id();
  r.variant = v.variant;
  r.details = case_text(v, c.phys);
  const std::string t = timing_text(v.timing);
  if (!t.empty()) r.details += "; " + t;
  r.bytes = 12.0 * static_cast<double>(g_opt.n);
  const tune::Dim3 grid = grid_for(v);
  r.grid = grid_text(grid);
  const auto& lim = c.phys.props.limits.maxComputeWorkGroupCount;
  if (grid.x > lim[0] || grid.y > lim[1] || grid.z > lim[2]) {
    r.check = "skipped: grid exceeds maxComputeWorkGroupCount " + std::to_string(lim[0]) + "x" +
              std::to_string(lim[1]) + "x" + std::to_string(lim[2]);
    print_row(r);
    return;
  }
  if (v.vec4 && (v.src == Src::split || v.src == Src::bda) && g_opt.n % 4 != 0) {
    r.check = "skipped: the split vec4 shader needs n % 4 == 0";
    print_row(r);
    return;
  }
  if (v.dynamic && c.phys.props.limits.maxDescriptorSetStorageBuffersDynamic < 3) {
    r.check = "skipped: maxDescriptorSetStorageBuffersDynamic < 3";
    print_row(r);
    return;
  }
  try {
    const Spirv spirv = compile(v, c.phys, r.id);
    r.details += " [" + spirv.summary + "]";
    Pipe p;
    make_pipeline(c, v, spirv, &p);
    make_set(c, v, bufs, &p);
    c.fill_now(bufs.c, 0x7FC00000u);  // NaN: only this row's writes can pass the check
    r.t = time_op(
        c, [&](VkCommandBuffer cmd) { record_dispatch(cmd, p, grid); }, v.timing);
    std::vector<float> out(static_cast<std::size_t>(g_opt.n));
    c.download(bufs.c, out.data(), static_cast<std::uint64_t>(g_opt.n) * 4);
    r.check = compare(out, g_ref);
  } catch (const std::exception& e) {
    if (is_lost(e)) throw;
    ++g_failures;
    r.t.reset();
    r.check = std::string("**ERROR** ") + e.what();
  }
  print_row(r);
}

enum class Xfer { copy, fill };

void run_xfer(Ctx& c, VaBufs& bufs, Section& sec, Xfer kind, const std::string& variant,
              const TimeOpts& o) {
  Row r;
  r.id = sec.id();
  r.variant = variant;
  const std::uint64_t bytes = static_cast<std::uint64_t>(g_opt.n) * 4;
  r.details = (kind == Xfer::copy ? "vkCmdCopyBuffer a -> c, " : "vkCmdFillBuffer c, ") +
              mib(bytes) + (kind == Xfer::copy ? " each" : "");
  const std::string t = timing_text(o);
  if (!t.empty()) r.details += "; " + t;
  r.grid = "-";
  r.bytes = (kind == Xfer::copy ? 2.0 : 1.0) * static_cast<double>(bytes);
  try {
    Op op;
    if (kind == Xfer::copy) {
      op = [&](VkCommandBuffer cmd) {
        VkBufferCopy region{0, 0, bytes};
        vkCmdCopyBuffer(cmd, bufs.a.buf, bufs.c.buf, 1, &region);
      };
    } else {
      op = [&](VkCommandBuffer cmd) { vkCmdFillBuffer(cmd, bufs.c.buf, 0, bytes, 0x3F800000u); };
    }
    c.fill_now(bufs.c, 0x7FC00000u);
    r.t = time_op(c, op, o);
    std::vector<float> out(static_cast<std::size_t>(g_opt.n));
    c.download(bufs.c, out.data(), bytes);
    if (kind == Xfer::copy) {
      r.check = compare(out, g_a);
    } else {
      r.check = compare(out, std::vector<float>(out.size(), 1.0f));
    }
  } catch (const std::exception& e) {
    if (is_lost(e)) throw;
    ++g_failures;
    r.t.reset();
    r.check = std::string("**ERROR** ") + e.what();
  }
  if (g_copy_gbps == 0 && kind == Xfer::copy && r.t) g_copy_gbps = r.bytes / r.t->median_ns;
  print_row(r);
}

VaBufs make_bufs(Ctx& c, std::uint32_t type, bool dedicated) {
  const std::uint64_t bytes = static_cast<std::uint64_t>(g_opt.n) * 4;
  VaBufs v;
  try {
    v.a = c.create(bytes, type, dedicated);
    v.b = c.create(bytes, type, dedicated);
    v.c = c.create(bytes, type, dedicated);
    c.upload(v.a, g_a.data(), bytes);
    c.upload(v.b, g_b.data(), bytes);
  } catch (...) {
    c.destroy(v.a);
    c.destroy(v.b);
    c.destroy(v.c);
    throw;
  }
  return v;
}

void free_bufs(Ctx& c, VaBufs& v) {
  vkDeviceWaitIdle(c.dev);
  c.destroy(v.a);
  c.destroy(v.b);
  c.destroy(v.c);
}

// Frees a VaBufs when its scope ends (also when a row throws), before its device goes.
struct BufsGuard {
  Ctx& c;
  VaBufs& v;
  ~BufsGuard() { free_bufs(c, v); }
};

// The two configurations most rows compare: libtune's default (scalar, EPT 1, block 256) and
// the tuned winner on the H200 (VEC4, EPT 1, block 64).
VaCase scalar_case(std::string variant) {
  VaCase v;
  v.variant = std::move(variant);
  return v;
}
VaCase vec4_case(std::string variant) {
  VaCase v;
  v.variant = std::move(variant);
  v.vec4 = true;
  v.block = 64;
  return v;
}

void print_ctx_line(const Ctx& c) {
  const auto& fam = c.phys.families[c.family];
  std::printf("\nDevice `%s`: queue family %u (%s, timestampValidBits %u), enabled features: %s\n",
              c.opts.label.c_str(), c.family, queue_flags(fam.queueFlags).c_str(),
              fam.timestampValidBits, c.features.c_str());
}

// ---------------------------------------------------------------------------------------------
// Sections

void main_device(const Phys& p) {
  DevOpts exact;
  exact.label = "libtune (exact)";
  Ctx c(p, exact);
  print_ctx_line(c);
  std::printf("Buffers: 3 x %s in memory type %u (%s), one allocation each; flush scratch %s.\n",
              mib(static_cast<std::uint64_t>(g_opt.n) * 4).c_str(), c.device_type,
              mem_flags(p.mem.memoryTypes[c.device_type].propertyFlags).c_str(),
              mib(c.scratch.size).c_str());
  VaBufs bufs = make_bufs(c, c.device_type, false);
  BufsGuard guard{c, bufs};
  {
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(c.dev, bufs.a.buf, &req);
    auto dr =
        vk_struct<VkMemoryDedicatedRequirements>(VK_STRUCTURE_TYPE_MEMORY_DEDICATED_REQUIREMENTS);
    auto r2 = vk_struct<VkMemoryRequirements2>(VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2);
    r2.pNext = &dr;
    auto ri = vk_struct<VkBufferMemoryRequirementsInfo2>(
        VK_STRUCTURE_TYPE_BUFFER_MEMORY_REQUIREMENTS_INFO_2);
    ri.buffer = bufs.a.buf;
    vkGetBufferMemoryRequirements2(c.dev, &ri, &r2);
    std::printf("Buffer requirements: size %" PRIu64 ", alignment %" PRIu64
                ", memoryTypeBits 0x%x, prefersDedicated %u, requiresDedicated %u\n",
                static_cast<std::uint64_t>(req.size), static_cast<std::uint64_t>(req.alignment),
                req.memoryTypeBits, dr.prefersDedicatedAllocation, dr.requiresDedicatedAllocation);
  }
  print_header();

  Section a{'A'};
  title(a, "ceilings on libtune's buffers");
  TimeOpts noflush;
  noflush.flush = false;
  run_xfer(c, bufs, a, Xfer::copy, "**copy ceiling** (denominator of / copy)", {});
  run_xfer(c, bufs, a, Xfer::copy, "copy, no flush", noflush);
  run_xfer(c, bufs, a, Xfer::fill, "fill (write only)", {});
  run_xfer(c, bufs, a, Xfer::fill, "fill, no flush", noflush);

  // B: libtune's shader exactly as compiled and timed by bench_vulkan's path.
  Section b{'B'};
  title(b, "libtune's shader as libtune compiles, binds and times it");
  run_va(c, bufs, b, scalar_case("libtune as is: default config"));
  {
    VaCase v = scalar_case("libtune as is");
    v.ept = 4;
    run_va(c, bufs, b, v);
  }
  run_va(c, bufs, b, vec4_case("libtune as is: H200 tuned winner"));
  {
    VaCase v = vec4_case("libtune as is");
    v.block = 256;
    run_va(c, bufs, b, v);
    v.block = 128;
    v.ept = 4;
    run_va(c, bufs, b, v);
  }
  if (g_bundled != kIssue3Shader) {
    VaCase s = scalar_case("issue-3 shader text (bundled source changed since)");
    s.src = Src::issue3;
    run_va(c, bufs, b, s);
    VaCase v = vec4_case("issue-3 shader text (bundled source changed since)");
    v.src = Src::issue3;
    run_va(c, bufs, b, v);
  }

  // C: aliasing. The same index math with one view per binding.
  Section cs{'C'};
  title(cs, "aliasing and loads in flight: one view per binding (split shader)");
  auto split = [](VaCase v, bool restrict_, bool batch) {
    v.src = Src::split;
    v.restrict_ = restrict_;
    v.batch = batch;
    return v;
  };
  run_va(c, bufs, cs, split(scalar_case("no aliasing (compare B1)"), false, false));
  run_va(c, bufs, cs, split(vec4_case("no aliasing (compare B3)"), false, false));
  {
    VaCase v = vec4_case("no aliasing (compare B4)");
    v.block = 256;
    run_va(c, bufs, cs, split(v, false, false));
  }
  run_va(c, bufs, cs, split(scalar_case("no aliasing + restrict (compare B1)"), true, false));
  run_va(c, bufs, cs, split(vec4_case("no aliasing + restrict (compare B3)"), true, false));
  {
    VaCase s = scalar_case("no aliasing (compare B2)");
    s.ept = 4;
    run_va(c, bufs, cs, split(s, false, false));
    s.variant = "no aliasing, all loads before stores (compare B2)";
    run_va(c, bufs, cs, split(s, false, true));
    VaCase v = vec4_case("no aliasing (compare B5)");
    v.block = 128;
    v.ept = 4;
    run_va(c, bufs, cs, split(v, false, false));
    v.variant = "no aliasing + restrict (compare B5)";
    run_va(c, bufs, cs, split(v, true, false));
    v.variant = "no aliasing, all loads before stores (compare B5)";
    run_va(c, bufs, cs, split(v, false, true));
    v.variant = "no aliasing, all loads before stores, 8 per invocation";
    v.ept = 8;
    run_va(c, bufs, cs, split(v, false, true));
  }

  // D: grid shape.
  Section d{'D'};
  title(d, "grid: 1-D instead of libtune's 2-D split (x <= 32768, y = rest)");
  {
    VaCase s = scalar_case("1-D grid");
    s.one_d = true;
    run_va(c, bufs, d, s);
    VaCase v = vec4_case("1-D grid");
    v.one_d = true;
    run_va(c, bufs, d, v);
    VaCase ps = scalar_case("plain path: no aliasing, restrict, 1-D");
    ps.src = Src::split;
    ps.restrict_ = true;
    ps.one_d = true;
    run_va(c, bufs, d, ps);
    VaCase pv = vec4_case("plain path: no aliasing, restrict, 1-D");
    pv.src = Src::split;
    pv.restrict_ = true;
    pv.one_d = true;
    run_va(c, bufs, d, pv);
  }

  // E: how the time is taken.
  Section e{'E'};
  title(e, "how the time is taken");
  for (int which = 0; which < 4; ++which) {
    TimeOpts o;
    std::string what;
    if (which == 0) o.flush = false, what = "no L2 flush before the dispatch";
    if (which == 1)
      o.start_stage = VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, what = "start stamp at BOTTOM_OF_PIPE";
    if (which == 2) o.per_submit = true, what = "one submission per rep (bench_vulkan)";
    if (which == 3) o.flush = false, o.per_span = 8, what = "8 dispatches per stamp pair";
    VaCase s = scalar_case(what);
    s.timing = o;
    run_va(c, bufs, e, s);
    VaCase v = vec4_case(what);
    v.timing = o;
    run_va(c, bufs, e, v);
  }
  {
    TimeOpts o;
    o.per_submit = true;
    run_xfer(c, bufs, e, Xfer::copy, "copy, one submission per rep", o);
  }

  // F: shaderc options (Vulkan 1.3 targets run on the maintenance4 device, section I).
  Section f{'F'};
  title(f, "shaderc options (target env 1.3: section I)");
  for (auto opt : {shaderc_optimization_level_zero, shaderc_optimization_level_size}) {
    const std::string what =
        opt == shaderc_optimization_level_zero ? "shaderc without -O" : "shaderc -Os";
    VaCase s = scalar_case(what);
    s.opt = opt;
    run_va(c, bufs, f, s);
    VaCase v = vec4_case(what);
    v.opt = opt;
    run_va(c, bufs, f, v);
  }
  if (libtune_env(p) != shaderc_env_version_vulkan_1_1) {
    VaCase s = scalar_case("target env Vulkan 1.1");
    s.env = shaderc_env_version_vulkan_1_1;
    run_va(c, bufs, f, s);
    VaCase v = vec4_case("target env Vulkan 1.1");
    v.env = shaderc_env_version_vulkan_1_1;
    run_va(c, bufs, f, v);
  }

  // G: descriptors and constants.
  Section g{'G'};
  title(g, "descriptors and constants");
  {
    VaCase s = scalar_case("descriptor range 4n, not VK_WHOLE_SIZE");
    s.exact_range = true;
    run_va(c, bufs, g, s);
    VaCase v = vec4_case("descriptor range 4n, not VK_WHOLE_SIZE");
    v.exact_range = true;
    run_va(c, bufs, g, v);
    s = scalar_case("dynamic storage-buffer descriptors");
    s.dynamic = true;
    run_va(c, bufs, g, s);
    v = vec4_case("dynamic storage-buffer descriptors");
    v.dynamic = true;
    run_va(c, bufs, g, v);
    s = scalar_case("n as spec constant (compare C1)");
    s.src = Src::split;
    s.n_spec = true;
    run_va(c, bufs, g, s);
    v = vec4_case("n as spec constant (compare C3)");
    v.src = Src::split;
    v.n_spec = true;
    run_va(c, bufs, g, v);
  }
  free_bufs(c, bufs);

  // H: memory types and allocation.
  Section h{'H'};
  title(h, "memory types and allocation (new a, b, c per row group)");
  for (std::uint32_t t = 0; t < p.mem.memoryTypeCount; ++t) {
    const VkMemoryPropertyFlags fl = p.mem.memoryTypes[t].propertyFlags;
    if (!(fl & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)) continue;
    const std::string what = "memory type " + std::to_string(t) + " (" + mem_flags(fl) + ")" +
                             (t == c.device_type ? ", libtune's" : "");
    for (bool dedicated : {false, true}) {
      if (dedicated && t != c.device_type) continue;
      const std::string label = what + (dedicated ? ", dedicated allocation" : "");
      VaBufs mb;
      try {
        mb = make_bufs(c, t, dedicated);
      } catch (const std::exception& ex) {
        if (is_lost(ex)) throw;
        Row r;
        r.id = h.id();
        r.variant = label;
        r.details = "3 buffers of " + mib(static_cast<std::uint64_t>(g_opt.n) * 4);
        r.grid = "-";
        r.check = std::string("skipped: ") + ex.what();
        print_row(r);
        continue;
      }
      BufsGuard mguard{c, mb};
      run_xfer(c, mb, h, Xfer::copy, "copy, " + label, {});
      run_va(c, mb, h, scalar_case(label));
      run_va(c, mb, h, vec4_case(label));
      free_bufs(c, mb);
    }
  }
}

// I: other device creations (features, queue family); each with its own buffers.
void other_devices(const Phys& p) {
  Section s{'I'};
  std::vector<DevOpts> devs;
  {
    DevOpts o;
    o.label = "no optional features";
    o.libtune_features = false;
    devs.push_back(o);
  }
  if (p.features.robustBufferAccess) {
    DevOpts o;
    o.label = "libtune + robustBufferAccess";
    o.robust = true;
    devs.push_back(o);
  } else {
    std::printf("\n(robustBufferAccess unsupported: no robust device)\n");
  }
  const bool can13 = p.props.apiVersion >= VK_API_VERSION_1_3 && p.maintenance4;
  if (can13) {
    DevOpts o;
    o.label = "libtune + maintenance4 (for SPIR-V 1.6)";
    o.maintenance4 = true;
    devs.push_back(o);
  } else {
    std::printf("\n(no Vulkan 1.3 + maintenance4: no target-env 1.3 rows)\n");
  }
  if (p.bda) {
    DevOpts o;
    o.label = "libtune + bufferDeviceAddress";
    o.bda = true;
    devs.push_back(o);
  } else {
    std::printf("\n(bufferDeviceAddress unsupported: no device-address rows)\n");
  }
  if (p.universal_family >= 0 && p.universal_family != p.family) {
    DevOpts o;
    o.label = "libtune features, graphics+compute queue family";
    o.family = p.universal_family;
    devs.push_back(o);
  } else {
    std::printf("\n(no graphics+compute family other than libtune's: no queue-family rows)\n");
  }
  for (const DevOpts& o : devs) {
    try {
      Ctx c(p, o);
      print_ctx_line(c);
      print_header();
      VaBufs bufs = make_bufs(c, c.device_type, false);
      BufsGuard guard{c, bufs};
      run_xfer(c, bufs, s, Xfer::copy, "copy, device: " + o.label, {});
      run_va(c, bufs, s, scalar_case("device: " + o.label));
      run_va(c, bufs, s, vec4_case("device: " + o.label));
      if (o.maintenance4) {
        for (auto opt : {shaderc_optimization_level_performance, shaderc_optimization_level_zero}) {
          VaCase sc = scalar_case("target env Vulkan 1.3");
          sc.env = shaderc_env_version_vulkan_1_3;
          sc.opt = opt;
          run_va(c, bufs, s, sc);
          VaCase vc = vec4_case("target env Vulkan 1.3");
          vc.env = shaderc_env_version_vulkan_1_3;
          vc.opt = opt;
          run_va(c, bufs, s, vc);
        }
      }
      if (o.bda) {
        auto bda = [](VaCase v, bool restrict_, bool batch) {
          v.src = Src::bda;
          v.restrict_ = restrict_;
          v.batch = batch;
          return v;
        };
        run_va(c, bufs, s,
               bda(scalar_case("device addresses, no descriptors (compare B1)"), false, false));
        run_va(c, bufs, s,
               bda(vec4_case("device addresses, no descriptors (compare B3)"), false, false));
        run_va(c, bufs, s, bda(vec4_case("device addresses + restrict (compare B3)"), true, false));
        VaCase v = vec4_case("device addresses, all loads before stores (compare C10)");
        v.block = 128;
        v.ept = 4;
        run_va(c, bufs, s, bda(v, false, true));
        v.variant = "device addresses + restrict, loads before stores, 1-D";
        v.one_d = true;
        run_va(c, bufs, s, bda(v, true, true));
      }
    } catch (const std::exception& e) {
      ++g_failures;
      std::printf("\n**ERROR** device `%s`: %s\n", o.label.c_str(), e.what());
      if (is_lost(e)) return;
    }
  }
}

// J: compiler statistics of the main pipelines (VK_KHR_pipeline_executable_properties).
void pipeline_statistics(const Phys& p) {
  if (!p.exec_props) {
    std::printf("\n(VK_KHR_pipeline_executable_properties unavailable: no pipeline statistics)\n");
    return;
  }
  DevOpts o;
  o.label = "libtune + pipelineExecutableInfo (statistics only, not timed)";
  o.exec_props = true;
  Ctx c(p, o);
  print_ctx_line(c);
  auto get_props = reinterpret_cast<PFN_vkGetPipelineExecutablePropertiesKHR>(
      vkGetDeviceProcAddr(c.dev, "vkGetPipelineExecutablePropertiesKHR"));
  auto get_stats = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(
      vkGetDeviceProcAddr(c.dev, "vkGetPipelineExecutableStatisticsKHR"));
  auto get_ir = reinterpret_cast<PFN_vkGetPipelineExecutableInternalRepresentationsKHR>(
      vkGetDeviceProcAddr(c.dev, "vkGetPipelineExecutableInternalRepresentationsKHR"));
  if (get_props == nullptr || get_stats == nullptr) {
    std::printf("(entry points missing)\n");
    return;
  }
  std::vector<std::pair<std::string, VaCase>> cases;
  cases.emplace_back("J1", scalar_case("libtune scalar"));
  cases.emplace_back("J2", vec4_case("libtune VEC4"));
  {
    VaCase v = scalar_case("no aliasing scalar");
    v.src = Src::split;
    cases.emplace_back("J3", v);
    v = vec4_case("no aliasing vec4");
    v.src = Src::split;
    cases.emplace_back("J4", v);
    v.restrict_ = true;
    v.variant = "no aliasing vec4 + restrict";
    cases.emplace_back("J5", v);
    v = scalar_case("libtune scalar, shaderc without -O");
    v.opt = shaderc_optimization_level_zero;
    cases.emplace_back("J6", v);
  }
  std::printf("\n| id | pipeline | executable | statistics |\n|---|---|---|---|\n");
  for (const auto& [id, v] : cases) {
    try {
      const Spirv spirv = compile(v, p, id);
      Pipe pipe;
      make_pipeline(
          c, v, spirv, &pipe,
          VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR |
              (g_opt.dump.empty() ? 0
                                  : VK_PIPELINE_CREATE_CAPTURE_INTERNAL_REPRESENTATIONS_BIT_KHR));
      auto pi = vk_struct<VkPipelineInfoKHR>(VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR);
      pi.pipeline = pipe.pipe;
      std::uint32_t ne = 0;
      vk_check(get_props(c.dev, &pi, &ne, nullptr), "vkGetPipelineExecutablePropertiesKHR");
      std::vector<VkPipelineExecutablePropertiesKHR> props(
          ne, vk_struct<VkPipelineExecutablePropertiesKHR>(
                  VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR));
      vk_check(get_props(c.dev, &pi, &ne, props.data()), "vkGetPipelineExecutablePropertiesKHR");
      for (std::uint32_t e = 0; e < ne; ++e) {
        auto ei =
            vk_struct<VkPipelineExecutableInfoKHR>(VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR);
        ei.pipeline = pipe.pipe;
        ei.executableIndex = e;
        std::uint32_t ns = 0;
        vk_check(get_stats(c.dev, &ei, &ns, nullptr), "vkGetPipelineExecutableStatisticsKHR");
        std::vector<VkPipelineExecutableStatisticKHR> st(
            ns, vk_struct<VkPipelineExecutableStatisticKHR>(
                    VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR));
        vk_check(get_stats(c.dev, &ei, &ns, st.data()), "vkGetPipelineExecutableStatisticsKHR");
        std::string text = "subgroup " + std::to_string(props[e].subgroupSize);
        for (const auto& s : st) {
          text += std::string("; ") + s.name + " = ";
          switch (s.format) {
            case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
              text += s.value.b32 ? "true" : "false";
              break;
            case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
              text += std::to_string(s.value.i64);
              break;
            case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
              text += std::to_string(s.value.u64);
              break;
            default:
              text += fmt("%g", s.value.f64);
              break;
          }
        }
        std::printf("| %s | %s | %s | %s |\n", id.c_str(), case_text(v, p).c_str(), props[e].name,
                    text.c_str());
        if (!g_opt.dump.empty() && get_ir != nullptr) {
          std::uint32_t nir = 0;
          if (get_ir(c.dev, &ei, &nir, nullptr) != VK_SUCCESS) continue;
          std::vector<VkPipelineExecutableInternalRepresentationKHR> ir(
              nir, vk_struct<VkPipelineExecutableInternalRepresentationKHR>(
                       VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INTERNAL_REPRESENTATION_KHR));
          if (get_ir(c.dev, &ei, &nir, ir.data()) != VK_SUCCESS) continue;
          std::vector<std::vector<char>> data(nir);
          for (std::uint32_t k = 0; k < nir; ++k) {
            data[k].resize(ir[k].dataSize + 1);
            ir[k].pData = data[k].data();
          }
          const VkResult r = get_ir(c.dev, &ei, &nir, ir.data());
          if (r != VK_SUCCESS && r != VK_INCOMPLETE) continue;
          for (std::uint32_t k = 0; k < nir; ++k) {
            std::ofstream out(g_opt.dump + "/" + id + ".exe" + std::to_string(e) + ".ir" +
                              std::to_string(k) + ".txt");
            out << "# " << ir[k].name << ": " << ir[k].description << "\n";
            if (ir[k].isText) {
              out << std::string(data[k].data(), strnlen(data[k].data(), ir[k].dataSize));
            } else {
              out << "(binary, " << ir[k].dataSize << " bytes)\n";
            }
          }
        }
      }
    } catch (const std::exception& e) {
      std::printf("| %s | %s | - | **ERROR** %s |\n", id.c_str(), case_text(v, p).c_str(),
                  e.what());
      if (is_lost(e)) return;
    }
  }
}

void print_device(const Phys& p, const std::vector<Phys>& all) {
  std::printf("# vk_bandwidth_probe (issue 3)\n\n");
  for (const auto& q : all) {
    std::printf("- device %d: %s (%s, Vulkan %s)%s%s\n", q.index, q.props.deviceName,
                type_name(q.props.deviceType), api_text(q.props.apiVersion).c_str(),
                q.why.empty() ? "" : (" unusable by libtune: " + q.why).c_str(),
                q.index == p.index ? "  <- probed" : "");
  }
  const std::uint32_t dv = p.props.driverVersion;
  std::printf("\nDevice: %s, vendor 0x%04x device 0x%04x, %s, Vulkan %s\n", p.props.deviceName,
              p.props.vendorID, p.props.deviceID, type_name(p.props.deviceType),
              api_text(p.props.apiVersion).c_str());
  std::printf("Driver: %s %s; driverVersion 0x%08x (NVIDIA decoding %u.%u.%u)\n",
              p.driver_name.c_str(), p.driver_info.c_str(), dv, dv >> 22, (dv >> 14) & 0xff,
              (dv >> 6) & 0xff);
  for (const char* e : {"VK_ICD_FILENAMES", "VK_DRIVER_FILES", "TUNE_VULKAN_DEVICE"}) {
    const char* v = std::getenv(e);
    if (v != nullptr) std::printf("%s=%s\n", e, v);
  }
  unsigned spv = 0, rev = 0;
  shaderc_get_spv_version(&spv, &rev);
  std::printf("shaderc: SPIR-V %u.%u rev %u; libtune's target env %s -O\n", spv >> 16,
              (spv >> 8) & 0xff, rev, env_name(libtune_env(p)));
  const auto& l = p.props.limits;
  std::printf(
      "Limits: timestampPeriod %.3f ns, maxComputeWorkGroupCount %ux%ux%u, "
      "maxComputeWorkGroupInvocations %u, maxStorageBufferRange %u, "
      "minStorageBufferOffsetAlignment %" PRIu64 ", maxMemoryAllocationSize %" PRIu64 "\n",
      static_cast<double>(l.timestampPeriod), l.maxComputeWorkGroupCount[0],
      l.maxComputeWorkGroupCount[1], l.maxComputeWorkGroupCount[2],
      l.maxComputeWorkGroupInvocations, l.maxStorageBufferRange,
      static_cast<std::uint64_t>(l.minStorageBufferOffsetAlignment), p.max_alloc);
  std::printf("\nQueue families (libtune uses %d):\n", p.family);
  for (std::size_t i = 0; i < p.families.size(); ++i) {
    const auto& q = p.families[i];
    std::printf("- %zu: %s, %u queues, timestampValidBits %u\n", i,
                queue_flags(q.queueFlags).c_str(), q.queueCount, q.timestampValidBits);
  }
  std::printf("\nMemory heaps:\n");
  for (std::uint32_t i = 0; i < p.mem.memoryHeapCount; ++i) {
    const auto& h = p.mem.memoryHeaps[i];
    std::printf("- heap %u: %s%s%s\n", i, mib(h.size).c_str(),
                (h.flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) ? ", DEVICE_LOCAL" : "",
                (h.flags & VK_MEMORY_HEAP_MULTI_INSTANCE_BIT) ? ", MULTI_INSTANCE" : "");
  }
  const std::uint32_t dev_type = libtune_device_type(p, false);
  const std::uint32_t stage_type = libtune_device_type(p, true);
  std::printf("Memory types (libtune: buffers in %u, staging in %u):\n", dev_type, stage_type);
  for (std::uint32_t i = 0; i < p.mem.memoryTypeCount; ++i) {
    const auto& t = p.mem.memoryTypes[i];
    std::printf("- type %u: heap %u, %s\n", i, t.heapIndex, mem_flags(t.propertyFlags).c_str());
  }
  auto yn = [](bool b) { return b ? "yes" : "no"; };
  std::printf(
      "\nFeatures supported: robustBufferAccess %s, shaderInt64 %s, shaderFloat64 %s, "
      "shaderInt16 %s, storageBuffer16BitAccess %s, uniformAndStorageBuffer16BitAccess %s, "
      "shaderFloat16 %s, shaderInt8 %s, storageBuffer8BitAccess %s, "
      "uniformAndStorageBuffer8BitAccess %s, maintenance4 %s, pipelineExecutableInfo %s\n",
      yn(p.features.robustBufferAccess), yn(p.features.shaderInt64), yn(p.features.shaderFloat64),
      yn(p.features.shaderInt16), yn(p.storage16), yn(p.uniform_storage16), yn(p.float16),
      yn(p.int8), yn(p.storage8), yn(p.uniform_storage8), yn(p.maintenance4), yn(p.exec_props));
  std::printf(
      "libtune enables: the supported ones among shaderInt64, shaderFloat64, shaderInt16, the "
      "16-bit storage pair, (1.2+) shaderFloat16, shaderInt8, the 8-bit storage pair; never "
      "robustBufferAccess; no extensions.\n");
  std::printf("Extensions of interest:");
  for (const char* e :
       {"VK_EXT_robustness2", "VK_EXT_pipeline_robustness", "VK_KHR_pipeline_executable_properties",
        "VK_EXT_memory_budget", "VK_EXT_memory_priority", "VK_EXT_pageable_device_local_memory",
        "VK_KHR_maintenance4", "VK_NV_device_diagnostic_checkpoints"}) {
    std::printf(" %s=%s", e, yn(p.has_ext(e)));
  }
  std::printf("\n\nRun: n = %" PRId64
              " floats (%s per buffer), %d reps (median), 3 warm-up reps.\n",
              g_opt.n, mib(static_cast<std::uint64_t>(g_opt.n) * 4).c_str(), g_opt.reps);
}

bool all_digits(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
}

int usage(const char* argv0) {
  std::fprintf(
      stderr, "usage: %s [--device N] [--n ELEMS] [--reps R] [--ref-gbps X] [--dump DIR]\n", argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(usage(argv[0]));
      }
      return argv[++i];
    };
    if (a == "--device") {
      g_opt.device = std::atoi(value().c_str());
    } else if (a == "--n") {
      g_opt.n = std::atoll(value().c_str());
    } else if (a == "--reps") {
      g_opt.reps = std::atoi(value().c_str());
    } else if (a == "--ref-gbps") {
      g_opt.ref_gbps = std::atof(value().c_str());
    } else if (a == "--dump") {
      g_opt.dump = value();
    } else {
      return usage(argv[0]);
    }
  }
  if (g_opt.n < 4 || g_opt.n > 0x7FFFFFFF || g_opt.reps < 1) return usage(argv[0]);
  if (!g_opt.dump.empty()) std::filesystem::create_directories(g_opt.dump);
  const auto start = Clock::now();

  for (auto& k : tune::kernels::bundled_kernels(tune::Language::glsl))
    if (k.name == "vector_add") g_vector_add = std::move(k);
  if (g_vector_add.name.empty() || g_vector_add.def.source_for(tune::Language::glsl) == nullptr) {
    std::fprintf(stderr, "vk_bandwidth_probe: no bundled GLSL vector_add\n");
    return 1;
  }
  g_bundled = g_vector_add.def.source_for(tune::Language::glsl)->text;

  std::uint32_t loader = VK_API_VERSION_1_0;
  if (vkEnumerateInstanceVersion(&loader) != VK_SUCCESS) loader = VK_API_VERSION_1_0;
  auto app = vk_struct<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
  app.pApplicationName = "libtune";  // as libtune names itself (drivers may key profiles on it)
  app.pEngineName = "libtune";
  app.apiVersion = std::min<std::uint32_t>(loader, VK_API_VERSION_1_3);
  auto ici = vk_struct<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
  ici.pApplicationInfo = &app;
  VkInstance instance = VK_NULL_HANDLE;
  if (VkResult r = vkCreateInstance(&ici, nullptr, &instance); r != VK_SUCCESS) {
    std::fprintf(stderr, "vk_bandwidth_probe: vkCreateInstance: %s\n", result_name(r));
    return 1;
  }
  int status = 0;
  try {
    std::uint32_t nd = 0;
    vk_check(vkEnumeratePhysicalDevices(instance, &nd, nullptr), "vkEnumeratePhysicalDevices");
    std::vector<VkPhysicalDevice> pds(nd);
    vk_check(vkEnumeratePhysicalDevices(instance, &nd, pds.data()), "vkEnumeratePhysicalDevices");
    if (nd == 0) throw std::runtime_error("no Vulkan physical device");
    std::vector<Phys> all;
    for (std::uint32_t i = 0; i < nd; ++i) all.push_back(query_phys(pds[i], static_cast<int>(i)));
    int pick = g_opt.device;
    if (pick < 0) {  // libtune's choice: TUNE_VULKAN_DEVICE, else the best usable type
      const char* env = std::getenv("TUNE_VULKAN_DEVICE");
      const std::string sel = env == nullptr ? "" : env;
      if (all_digits(sel)) {
        pick = std::atoi(sel.c_str());
      } else if (!sel.empty()) {
        std::string want = sel;
        for (char& ch : want) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        for (const auto& q : all) {
          std::string name = q.props.deviceName;
          for (char& ch : name)
            ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
          if (pick < 0 && name.find(want) != std::string::npos) pick = q.index;
        }
      } else {
        for (const auto& q : all) {
          if (!q.why.empty()) continue;
          if (pick < 0 || type_rank(q.props.deviceType) <
                              type_rank(all[static_cast<std::size_t>(pick)].props.deviceType))
            pick = q.index;
        }
      }
    }
    if (pick < 0 || pick >= static_cast<int>(nd)) throw std::runtime_error("no such device");
    const Phys& p = all[static_cast<std::size_t>(pick)];
    if (!p.why.empty()) throw std::runtime_error(std::string("device unusable: ") + p.why);
    const std::uint64_t bytes = static_cast<std::uint64_t>(g_opt.n) * 4;
    if (bytes > p.props.limits.maxStorageBufferRange)
      throw std::runtime_error(
          "--n " + std::to_string(g_opt.n) + " needs " + std::to_string(bytes) +
          "-byte buffers, over maxStorageBufferRange " +
          std::to_string(p.props.limits.maxStorageBufferRange) + ": use --n " +
          std::to_string(p.props.limits.maxStorageBufferRange / 4) + " or less");
    print_device(p, all);
    make_host_data(g_opt.n);
    main_device(p);
    other_devices(p);
    pipeline_statistics(p);
  } catch (const std::exception& e) {
    std::printf("\n**ERROR** %s\n", e.what());
    status = 1;
  }
  vkDestroyInstance(instance, nullptr);
  const double secs = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("\n%d failure(s); %.1f s in all.\n", g_failures, secs);
  return status != 0 || g_failures > 0 ? 1 : 0;
}
