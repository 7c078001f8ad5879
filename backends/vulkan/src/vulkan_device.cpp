#include "vulkan_device.hpp"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <string_view>
#include <utility>

#include "tune/definitions.hpp"
#include "tune/hash.hpp"
#include "tune/log.hpp"
#include "vk_status.hpp"

// Versions of the compilers inside shaderc (which has no version query of its own): part of
// every SPIR-V cache key, so an upgraded glslang or optimiser never serves old SPIR-V.
#if __has_include(<glslang/build_info.h>)
#include <glslang/build_info.h>
#endif
#if __has_include(<spirv-tools/libspirv.h>)
#include <spirv-tools/libspirv.h>
#define TUNE_HAVE_SPIRV_TOOLS_VERSION 1
#endif

namespace tune::vk {
namespace {

constexpr VkBufferUsageFlags kBufferUsage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                            VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                            VK_BUFFER_USAGE_TRANSFER_DST_BIT;
// Upload/download staging chunk: bounds host memory for large transfers.
constexpr std::uint64_t kStagingChunk = 64ull << 20;
// Submissions kept in flight before launch() waits for the oldest ones.
constexpr std::size_t kMaxInflight = 64;
// How long synchronisation points wait for work submitted earlier (not a timed launch).
constexpr double kSyncTimeoutMs = 120000.0;

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%" PRIx64, v);
  return buf;
}

std::string dim_text(const Dim3& d) {
  return std::to_string(d.x) + "x" + std::to_string(d.y) + "x" + std::to_string(d.z);
}

bool is_set(const Dim3& b) { return b.x != 0 || b.y != 0 || b.z != 0; }

// A global memory barrier: everything before `src` completes and its writes are visible to
// everything after in `dst`. Coarse on purpose: the backend never overlaps its own commands.
void full_barrier(VkCommandBuffer cmd, VkPipelineStageFlags src, VkPipelineStageFlags dst,
                  VkAccessFlags dst_access) {
  VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, VK_ACCESS_MEMORY_WRITE_BIT,
                    dst_access};
  vkCmdPipelineBarrier(cmd, src, dst, 0, 1, &b, 0, nullptr, 0, nullptr);
}

void all_commands_barrier(VkCommandBuffer cmd) {
  full_barrier(cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
               VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT);
}

// Bump when the SPIR-V that compile() produces for a given source and configuration changes
// for a reason the key does not otherwise see (shaderc options, macro spelling).
constexpr int kSpirvRecipe = 1;
// Longest clock level the NVIDIA driver holds under load after idling (H200: ~200 ms steps).
constexpr double kNvidiaClockSettleMs = 300.0;
// Bump when the meaning of a stored pipeline-cache file changes.
constexpr int kPipelineCacheRecipe = 1;

std::string uuid_hex(const std::uint8_t (&uuid)[VK_UUID_SIZE]) {
  std::string out;
  char buf[3];
  for (std::uint8_t b : uuid) {
    std::snprintf(buf, sizeof buf, "%02x", b);
    out += buf;
  }
  return out;
}

// Why `data` is not a pipeline cache this physical device may be given, or empty when it is.
// Checks the header Vulkan defines (VkPipelineCacheHeaderVersionOne, least significant byte
// first whatever the host order): its size, its version, vendor, device and the driver's
// pipelineCacheUUID.
std::string pipeline_cache_problem(std::string_view data, const VkPhysicalDeviceProperties& p) {
  constexpr std::size_t kHeaderBytes = 16 + VK_UUID_SIZE;
  if (data.size() < kHeaderBytes)
    return std::to_string(data.size()) + " bytes, shorter than the Vulkan pipeline-cache header";
  auto u32 = [&](std::size_t at) {
    std::uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<std::uint8_t>(data[at + i]);
    return v;
  };
  const std::uint32_t header_bytes = u32(0), version = u32(4), vendor = u32(8), device = u32(12);
  if (header_bytes < kHeaderBytes || header_bytes > data.size())
    return "header size " + std::to_string(header_bytes) + " is impossible for " +
           std::to_string(data.size()) + " bytes";
  if (version != VK_PIPELINE_CACHE_HEADER_VERSION_ONE)
    return "header version " + std::to_string(version) +
           " is not VK_PIPELINE_CACHE_HEADER_VERSION_ONE";
  if (vendor != p.vendorID || device != p.deviceID)
    return "written for vendor 0x" + hex(vendor) + " device 0x" + hex(device) + ", this is 0x" +
           hex(p.vendorID) + " 0x" + hex(p.deviceID);
  if (std::memcmp(data.data() + 16, p.pipelineCacheUUID, VK_UUID_SIZE) != 0)
    return "pipelineCacheUUID differs from this driver's";
  return {};
}

std::uint64_t ms_to_ns(double ms) {
  if (!(ms > 0)) return 0;
  const double ns = ms * 1e6;
  return ns >= 1.8e19 ? std::numeric_limits<std::uint64_t>::max() : static_cast<std::uint64_t>(ns);
}

}  // namespace

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

// ---------------------------------------------------------------------------------------------
// Buffers and kernels

VulkanBuffer::~VulkanBuffer() {
  owner_->wait_before_destroy();
  owner_->destroy_raw(raw_);
}

VulkanKernel::VulkanKernel(VulkanDevice* owner, SpirvInfo info, Dim3 block,
                           VkDescriptorSetLayout set_layout, VkPipelineLayout layout,
                           VkPipeline pipeline, std::string log, KernelResources resources)
    : owner_(owner),
      info_(std::move(info)),
      block_(block),
      set_layout_(set_layout),
      layout_(layout),
      pipeline_(pipeline) {
  log_ = std::move(log);
  resources_ = resources;
}

VulkanKernel::~VulkanKernel() {
  owner_->wait_before_destroy();
  vkDestroyPipeline(owner_->vk(), pipeline_, nullptr);
  vkDestroyPipelineLayout(owner_->vk(), layout_, nullptr);
  vkDestroyDescriptorSetLayout(owner_->vk(), set_layout_, nullptr);
}

// ---------------------------------------------------------------------------------------------
// Creation

VulkanDevice::VulkanDevice(OpenedDevice opened, std::shared_ptr<ValidationLog> log)
    : opened_(std::move(opened)), validation_log_(std::move(log)) {}

Result<std::unique_ptr<VulkanDevice>> VulkanDevice::create(OpenedDevice opened,
                                                           std::shared_ptr<ValidationLog> log) {
  std::unique_ptr<VulkanDevice> dev(new VulkanDevice(std::move(opened), std::move(log)));
  Status s = dev->init();
  if (!s.ok()) return s;  // the destructor releases whatever init() created
  return dev;
}

Status VulkanDevice::init() {
  const DeviceCaps& caps = opened_.caps;
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

  auto dci = vk_struct<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);
  dci.pNext = &features;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  TUNE_VK_RETURN_IF_ERROR(vkCreateDevice(opened_.physical, &dci, nullptr, &device_),
                          "vkCreateDevice");
  vkGetDeviceQueue(device_, caps.queue_family, 0, &queue_);

  auto pci = vk_struct<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
  pci.flags =
      VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT | VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
  pci.queueFamilyIndex = caps.queue_family;
  TUNE_VK_RETURN_IF_ERROR(vkCreateCommandPool(device_, &pci, nullptr, &pool_),
                          "vkCreateCommandPool");

  // Disk caches (null under TUNE_CACHE=off). A damaged pipeline-cache file only costs pipeline
  // compiles: it is reported at debug level, unlike SPIR-V entries (a warning).
  spirv_disk_ = BinaryCache::open_default("spirv");
  pipeline_disk_ = BinaryCache::open_default("vkpipeline", LogLevel::debug);
  std::string initial = load_pipeline_cache_data();
  auto cci = vk_struct<VkPipelineCacheCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO);
  cci.initialDataSize = initial.size();
  cci.pInitialData = initial.empty() ? nullptr : initial.data();
  VkResult pc = vkCreatePipelineCache(device_, &cci, nullptr, &pipeline_cache_);
  if (pc != VK_SUCCESS && !initial.empty()) {
    tune::log(LogLevel::debug, "vulkan: vkCreatePipelineCache refused the stored data (" +
                                   result_name(pc) + "); starting with an empty pipeline cache");
    initial.clear();
    cci.initialDataSize = 0;
    cci.pInitialData = nullptr;
    pc = vkCreatePipelineCache(device_, &cci, nullptr, &pipeline_cache_);
  }
  TUNE_VK_RETURN_IF_ERROR(pc, "vkCreatePipelineCache");
  pipeline_loaded_bytes_ = initial.size();
  pipeline_loaded_hash_ = initial.empty() ? 0 : stable_hash(initial);

  // Memory types. Device buffers: device-local; on CPU and integrated devices prefer a type
  // that is also host-visible and coherent (no staging copies); on discrete GPUs prefer one
  // that is not host-visible (full bandwidth, no BAR window). Staging: host-visible+coherent.
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
  device_memory_type_ = static_cast<std::uint32_t>(best_dev);
  staging_memory_type_ = static_cast<std::uint32_t>(best_stage);
  device_memory_mappable_ = (mem.memoryTypes[device_memory_type_].propertyFlags & kHost) == kHost;

  const std::uint32_t heap = mem.memoryTypes[device_memory_type_].heapIndex;
  auto m3 = vk_struct<VkPhysicalDeviceMaintenance3Properties>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES);
  auto p2 =
      vk_struct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &m3);
  vkGetPhysicalDeviceProperties2(opened_.physical, &p2);
  // A whole buffer is bound as one storage-buffer descriptor: its size is capped by
  // maxStorageBufferRange, by the largest single allocation and by the heap.
  max_buffer_bytes_ =
      std::min<std::uint64_t>({caps.props.limits.maxStorageBufferRange, m3.maxMemoryAllocationSize,
                               mem.memoryHeaps[heap].size});

  switch (caps.props.deviceType) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      flush_bytes_ = 64ull << 20;
      break;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      flush_bytes_ = 16ull << 20;
      break;
    default:  // CPU devices (lavapipe): a fill runs on the host cores, keep it cheap
      flush_bytes_ = 4ull << 20;
      break;
  }
  flush_bytes_ = std::min(flush_bytes_, max_buffer_bytes_ / 4) & ~std::uint64_t{3};

  // SPIR-V for Vulkan 1.2 at most: a Vulkan 1.3 target (SPIR-V 1.6) states the workgroup
  // size with LocalSizeId, which needs the maintenance4 feature (the validation layer flags it).
  const std::uint32_t api = caps.props.apiVersion;
  target_env_ =
      api >= VK_API_VERSION_1_2 ? shaderc_env_version_vulkan_1_2 : shaderc_env_version_vulkan_1_1;
  if (!compiler_.IsValid()) return Status(StatusCode::internal, "shaderc failed to initialise");
  fill_info();
  return Status::ok_status();
}

void VulkanDevice::fill_info() {
  const DeviceCaps& caps = opened_.caps;
  const auto& p = caps.props;
  const auto& l = p.limits;
  info_.backend = "vulkan";
  info_.vendor = vendor_name(p.vendorID);
  info_.name = p.deviceName;
  info_.arch = "vk:" + hex(p.vendorID) + ":" + hex(p.deviceID);
  if (!caps.driver_name.empty() || !caps.driver_info.empty()) {
    info_.driver_version =
        caps.driver_name + (caps.driver_info.empty() ? "" : " ") + caps.driver_info;
  } else if (p.vendorID == 0x10DE) {
    const std::uint32_t v = p.driverVersion;
    info_.driver_version = std::to_string(v >> 22) + "." + std::to_string((v >> 14) & 0xff) + "." +
                           std::to_string((v >> 6) & 0xff);
  } else {
    const std::uint32_t v = p.driverVersion;
    info_.driver_version = std::to_string(VK_API_VERSION_MAJOR(v)) + "." +
                           std::to_string(VK_API_VERSION_MINOR(v)) + "." +
                           std::to_string(VK_API_VERSION_PATCH(v));
  }
  unsigned spv_version = 0, spv_revision = 0;
  shaderc_get_spv_version(&spv_version, &spv_revision);
  const char* env = target_env_ == shaderc_env_version_vulkan_1_2 ? "vulkan1.2" : "vulkan1.1";
  info_.compiler_version = "shaderc (SPIR-V " + std::to_string(spv_version >> 16) + "." +
                           std::to_string((spv_version >> 8) & 0xff) + " rev " +
                           std::to_string(spv_revision) + ") target " + env + " -O";
  // Everything but the source and macros that decides the SPIR-V compile() produces.
  spirv_toolchain_ = "libtune spirv recipe " + std::to_string(kSpirvRecipe) + "\n" +
                     info_.compiler_version + ", glsl compute shader, entry main, kernel.comp";
#ifdef GLSLANG_VERSION_MAJOR
  spirv_toolchain_ += "\nglslang " + std::to_string(GLSLANG_VERSION_MAJOR) + "." +
                      std::to_string(GLSLANG_VERSION_MINOR) + "." +
                      std::to_string(GLSLANG_VERSION_PATCH) + GLSLANG_VERSION_FLAVOR;
#endif
#ifdef TUNE_HAVE_SPIRV_TOOLS_VERSION
  spirv_toolchain_ += std::string("\n") + spvSoftwareVersionDetailsString();
#endif
  info_.compute_units = 0;  // not exposed by core Vulkan
  info_.max_threads_per_block = l.maxComputeWorkGroupInvocations;
  info_.max_block = {l.maxComputeWorkGroupSize[0], l.maxComputeWorkGroupSize[1],
                     l.maxComputeWorkGroupSize[2]};
  info_.max_grid = {l.maxComputeWorkGroupCount[0], l.maxComputeWorkGroupCount[1],
                    l.maxComputeWorkGroupCount[2]};
  info_.shared_bytes_per_block = l.maxComputeSharedMemorySize;
  info_.shared_bytes_per_block_optin = l.maxComputeSharedMemorySize;
  info_.registers_per_block = 0;
  info_.warp_size = caps.subgroup_size;
  info_.l2_bytes = 0;  // unknown in Vulkan: the flush uses flush_bytes_
  std::uint64_t local = 0;
  for (std::uint32_t i = 0; i < caps.memory.memoryHeapCount; ++i)
    if (caps.memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      local = std::max<std::uint64_t>(local, caps.memory.memoryHeaps[i].size);
  info_.global_memory_bytes = local;
  info_.timer_resolution_ns = static_cast<double>(l.timestampPeriod);
  // NVIDIA's driver lowers the SM clock after ~2 s without Vulkan work or under bursty work
  // (H200: 345 MHz instead of 1980) and raises it in steps about 200 ms apart under sustained
  // load; timing settles the clock over a window longer than one step (bench/RESULTS.md,
  // clock_study). Other vendors' drivers are unmeasured here.
  info_.clock_settle_ms = p.vendorID == 0x10DE ? kNvidiaClockSettleMs : 0.0;
}

VulkanDevice::~VulkanDevice() {
  if (device_ != VK_NULL_HANDLE) {
    vkDeviceWaitIdle(device_);
    {
      std::lock_guard<std::mutex> lock(queue_mu_);
      for (auto& s : inflight_) free_submission_locked(s);
      inflight_.clear();
      destroy_raw(scratch_);
    }
    if (pipeline_cache_ != VK_NULL_HANDLE) {
      save_pipeline_cache();
      vkDestroyPipelineCache(device_, pipeline_cache_, nullptr);
    }
    if (pool_ != VK_NULL_HANDLE) vkDestroyCommandPool(device_, pool_, nullptr);
    vkDestroyDevice(device_, nullptr);
  }
  if (opened_.messenger != VK_NULL_HANDLE) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(opened_.instance, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy != nullptr) destroy(opened_.instance, opened_.messenger, nullptr);
  }
  if (opened_.instance != VK_NULL_HANDLE) vkDestroyInstance(opened_.instance, nullptr);
}

std::string VulkanDevice::load_pipeline_cache_data() {
  if (!pipeline_disk_) return {};
  const DeviceCaps& caps = opened_.caps;
  const VkPhysicalDeviceProperties& p = caps.props;
  // Keyed by the physical device and the driver build: another GPU or driver version has its
  // own file, so machines with several devices keep one per device.
  pipeline_key_ = "libtune vulkan pipeline cache recipe " + std::to_string(kPipelineCacheRecipe) +
                  "\nvendor 0x" + hex(p.vendorID) + " device 0x" + hex(p.deviceID) +
                  " driverVersion 0x" + hex(p.driverVersion) + " pipelineCacheUUID " +
                  uuid_hex(p.pipelineCacheUUID) + "\n" + p.deviceName + "\n" + caps.driver_name +
                  " " + caps.driver_info;
  auto stored = pipeline_disk_->load(pipeline_key_);
  if (!stored) return {};
  if (std::string why = pipeline_cache_problem(stored->binary, p); !why.empty()) {
    tune::log(LogLevel::debug, "vulkan: ignoring the pipeline cache " +
                                   pipeline_disk_->path_for(pipeline_key_).string() + ": " + why);
    return {};
  }
  return std::move(stored->binary);
}

void VulkanDevice::save_pipeline_cache() noexcept {
  if (!pipeline_disk_ || !pipeline_disk_->writable() || pipeline_cache_ == VK_NULL_HANDLE) return;
  if (pipelines_created_.load() == 0) return;  // nothing was added since the device opened
  try {
    std::size_t size = 0;
    VkResult r = vkGetPipelineCacheData(device_, pipeline_cache_, &size, nullptr);
    std::string data;
    if (r == VK_SUCCESS && size != 0) {
      data.resize(size);
      r = vkGetPipelineCacheData(device_, pipeline_cache_, &size, data.data());
      data.resize(size);
    }
    if (r != VK_SUCCESS) {  // VK_INCOMPLETE included: never store a partial cache
      tune::log(LogLevel::debug,
                "vulkan: pipeline cache not saved: vkGetPipelineCacheData: " + result_name(r));
      return;
    }
    if (data.size() == pipeline_loaded_bytes_ && stable_hash(data) == pipeline_loaded_hash_)
      return;  // every pipeline came from the stored cache: the file is current
    if (std::string why = pipeline_cache_problem(data, opened_.caps.props); !why.empty()) {
      tune::log(LogLevel::debug, "vulkan: pipeline cache not saved: the driver's data fails " +
                                     ("the header check: " + why));
      return;
    }
    // Last writer wins: another process's additions since this one opened are replaced.
    (void)pipeline_disk_->store(pipeline_key_, BinaryCacheEntry{std::move(data), {}, {}});
  } catch (const std::exception& e) {
    log_warning(std::string("vulkan: pipeline cache not saved: ") + e.what());
  }
}

VulkanDiagnostics VulkanDevice::diagnostics() const {
  VulkanDiagnostics d;
  d.validation_enabled = opened_.validation;
  if (validation_log_) {
    std::lock_guard<std::mutex> lock(validation_log_->mu);
    d.validation_errors = validation_log_->errors;
    d.validation_warnings = validation_log_->warnings;
    d.messages = validation_log_->messages;
  }
  const DeviceCaps& c = opened_.caps;
  d.timestamp_valid_bits = c.timestamp_valid_bits;
  d.api_version = c.props.apiVersion;
  d.vendor_id = c.props.vendorID;
  d.device_id = c.props.deviceID;
  d.device_type = device_type_name(c.props.deviceType);
  d.flush_bytes = flush_bytes_;
  d.max_buffer_bytes = max_buffer_bytes_;
  d.max_push_constant_bytes = c.props.limits.maxPushConstantsSize;
  d.storage_buffer_16bit = c.storage16;
  d.subgroup_arithmetic =
      c.subgroup_in_compute && (c.subgroup_ops & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) != 0;
  if (spirv_disk_) d.spirv_cache_dir = spirv_disk_->dir().string();
  if (pipeline_disk_) {
    d.pipeline_cache_file = pipeline_disk_->path_for(pipeline_key_).string();
    d.disk_cache_writable = pipeline_disk_->writable();
  }
  d.pipeline_cache_loaded_bytes = pipeline_loaded_bytes_;
  std::lock_guard<std::mutex> lock(compile_mu_);
  d.spirv_cache_entries = spirv_cache_.size();
  d.shaderc_compiles = shaderc_compiles_;
  d.spirv_disk_hits = spirv_disk_hits_;
  return d;
}

Status VulkanDevice::check_usable() const {
  if (lost_.load(std::memory_order_relaxed))
    return Status(StatusCode::device_lost,
                  "the Vulkan device was lost (VK_ERROR_DEVICE_LOST) earlier; reopen it");
  return Status::ok_status();
}

// ---------------------------------------------------------------------------------------------
// Memory

Result<RawBuffer> VulkanDevice::create_raw(std::uint64_t bytes, bool staging) {
  RawBuffer raw;
  raw.size = bytes;
  auto bci = vk_struct<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
  bci.size = bytes;
  bci.usage = staging ? (VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT)
                      : kBufferUsage;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  TUNE_VK_RETURN_IF_ERROR(vkCreateBuffer(device_, &bci, nullptr, &raw.buffer), "vkCreateBuffer");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device_, raw.buffer, &req);
  std::uint32_t type = staging ? staging_memory_type_ : device_memory_type_;
  if ((req.memoryTypeBits & (1u << type)) == 0) {
    vkDestroyBuffer(device_, raw.buffer, nullptr);
    return Status(StatusCode::internal, "the buffer cannot live in memory type " +
                                            std::to_string(type) + " (memoryTypeBits 0x" +
                                            hex(req.memoryTypeBits) + ")");
  }
  auto mai = vk_struct<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = type;
  VkResult r = vkAllocateMemory(device_, &mai, nullptr, &raw.memory);
  if (r != VK_SUCCESS) {
    vkDestroyBuffer(device_, raw.buffer, nullptr);
    return make_error("vkAllocateMemory(" + std::to_string(bytes) + " bytes)", r,
                      StatusCode::out_of_resources);
  }
  r = vkBindBufferMemory(device_, raw.buffer, raw.memory, 0);
  if (r == VK_SUCCESS && (staging || device_memory_mappable_))
    r = vkMapMemory(device_, raw.memory, 0, VK_WHOLE_SIZE, 0, &raw.mapped);
  if (r != VK_SUCCESS) {
    destroy_raw(raw);
    return make_error("vkBindBufferMemory/vkMapMemory", r);
  }
  return raw;
}

void VulkanDevice::destroy_raw(RawBuffer& raw) noexcept {
  if (raw.buffer != VK_NULL_HANDLE) vkDestroyBuffer(device_, raw.buffer, nullptr);
  if (raw.memory != VK_NULL_HANDLE) vkFreeMemory(device_, raw.memory, nullptr);  // unmaps
  raw = RawBuffer{};
}

void VulkanDevice::wait_before_destroy() noexcept {
  std::lock_guard<std::mutex> lock(queue_mu_);
  Status s = wait_all_locked(kSyncTimeoutMs);
  if (!s.ok() && s.code() != StatusCode::device_lost) {
    log_warning("vulkan: destroying an object while device work may still use it: " +
                s.to_string());
  }
}

Result<Buffer> VulkanDevice::alloc(std::uint64_t bytes) {
  TUNE_RETURN_IF_ERROR(check_usable());
  if (bytes == 0) return Status(StatusCode::invalid_argument, "alloc: zero bytes");
  if (bytes > max_buffer_bytes_) {
    return Status(StatusCode::out_of_resources,
                  "alloc: " + std::to_string(bytes) + " bytes exceeds the largest buffer this " +
                      "device can bind (" + std::to_string(max_buffer_bytes_) +
                      " bytes: min of maxStorageBufferRange, maxMemoryAllocationSize, heap)");
  }
  // Round up to 4 so vkCmdFillBuffer can always cover the whole buffer.
  auto raw = create_raw((bytes + 3) & ~std::uint64_t{3}, false);
  if (!raw.ok()) return raw.status();
  raw->size = bytes;
  return Buffer(std::make_unique<VulkanBuffer>(this, *raw));
}

Result<const VulkanBuffer*> VulkanDevice::own_buffer(const DeviceBuffer& b,
                                                     std::string_view what) const {
  const auto* vb = dynamic_cast<const VulkanBuffer*>(&b);
  if (vb == nullptr || vb->owner() != this)
    return Status(StatusCode::invalid_argument,
                  std::string(what) + ": the buffer was not allocated by this Vulkan device");
  return vb;
}

namespace {
Status check_range(std::string_view what, std::uint64_t size, std::uint64_t offset,
                   std::uint64_t bytes) {
  if (offset > size || bytes > size - offset) {
    return Status(StatusCode::invalid_argument,
                  std::string(what) + ": range [" + std::to_string(offset) + ", " +
                      std::to_string(offset) + " + " + std::to_string(bytes) +
                      ") is outside the buffer of " + std::to_string(size) + " bytes");
  }
  return Status::ok_status();
}
}  // namespace

Status VulkanDevice::upload(DeviceBuffer& dst, const void* src, std::uint64_t bytes,
                            std::uint64_t offset) {
  auto b = own_buffer(dst, "upload");
  if (!b.ok()) return b.status();
  TUNE_RETURN_IF_ERROR(check_range("upload", (*b)->size_bytes(), offset, bytes));
  if (bytes == 0) return Status::ok_status();
  if (src == nullptr) return Status(StatusCode::invalid_argument, "upload: null source");
  std::lock_guard<std::mutex> lock(queue_mu_);
  TUNE_RETURN_IF_ERROR(check_usable());
  const RawBuffer& raw = (*b)->raw();
  if (raw.mapped != nullptr) {
    // Earlier device work may read or write this range: let it finish first.
    TUNE_RETURN_IF_ERROR(wait_all_locked(kSyncTimeoutMs));
    std::memcpy(static_cast<char*>(raw.mapped) + offset, src, bytes);
    return Status::ok_status();
  }
  for (std::uint64_t done = 0; done < bytes;) {
    const std::uint64_t n = std::min(kStagingChunk, bytes - done);
    auto staging = create_raw(n, true);
    if (!staging.ok()) return staging.status();
    std::memcpy(staging->mapped, static_cast<const char*>(src) + done, n);
    auto cmd = begin_locked();
    if (!cmd.ok()) {
      destroy_raw(*staging);
      return cmd.status();
    }
    VkBufferCopy region{0, offset + done, n};
    vkCmdCopyBuffer(*cmd, staging->buffer, raw.buffer, 1, &region);
    Submission s;
    s.cmd = *cmd;
    s.staging.push_back(*staging);
    auto fence = submit_locked(std::move(s));
    if (!fence.ok()) return fence.status();
    done += n;
  }
  return Status::ok_status();
}

Status VulkanDevice::download(const DeviceBuffer& src, void* dst, std::uint64_t bytes,
                              std::uint64_t offset) {
  auto b = own_buffer(src, "download");
  if (!b.ok()) return b.status();
  TUNE_RETURN_IF_ERROR(check_range("download", (*b)->size_bytes(), offset, bytes));
  if (bytes == 0) return Status::ok_status();
  if (dst == nullptr) return Status(StatusCode::invalid_argument, "download: null destination");
  std::lock_guard<std::mutex> lock(queue_mu_);
  TUNE_RETURN_IF_ERROR(check_usable());
  const RawBuffer& raw = (*b)->raw();
  if (raw.mapped != nullptr) {
    TUNE_RETURN_IF_ERROR(wait_all_locked(kSyncTimeoutMs));
    std::memcpy(dst, static_cast<const char*>(raw.mapped) + offset, bytes);
    return Status::ok_status();
  }
  for (std::uint64_t done = 0; done < bytes;) {
    const std::uint64_t n = std::min(kStagingChunk, bytes - done);
    auto staging = create_raw(n, true);
    if (!staging.ok()) return staging.status();
    RawBuffer stage = *staging;
    auto cmd = begin_locked();
    if (!cmd.ok()) {
      destroy_raw(stage);
      return cmd.status();
    }
    VkBufferCopy region{offset + done, 0, n};
    vkCmdCopyBuffer(*cmd, raw.buffer, stage.buffer, 1, &region);
    Submission s;
    s.cmd = *cmd;
    s.staging.push_back(stage);  // freed on retire, after the memcpy below
    auto fence = submit_locked(std::move(s));
    if (!fence.ok()) return fence.status();
    TUNE_RETURN_IF_ERROR(wait_fence_locked(*fence, kSyncTimeoutMs, "download"));
    std::memcpy(static_cast<char*>(dst) + done, stage.mapped, n);
    retire_completed_locked();
    done += n;
  }
  return Status::ok_status();
}

Status VulkanDevice::fill(DeviceBuffer& dst, std::uint32_t pattern, std::uint64_t bytes,
                          std::uint64_t offset) {
  auto b = own_buffer(dst, "fill");
  if (!b.ok()) return b.status();
  if (bytes % 4 != 0 || offset % 4 != 0) {
    return Status(StatusCode::invalid_argument, "fill: offset " + std::to_string(offset) +
                                                    " and size " + std::to_string(bytes) +
                                                    " must be multiples of 4");
  }
  TUNE_RETURN_IF_ERROR(check_range("fill", (*b)->size_bytes(), offset, bytes));
  if (bytes == 0) return Status::ok_status();
  std::lock_guard<std::mutex> lock(queue_mu_);
  TUNE_RETURN_IF_ERROR(check_usable());
  auto cmd = begin_locked();
  if (!cmd.ok()) return cmd.status();
  vkCmdFillBuffer(*cmd, (*b)->raw().buffer, offset, bytes, pattern);
  Submission s;
  s.cmd = *cmd;
  auto fence = submit_locked(std::move(s));
  return fence.ok() ? Status::ok_status() : fence.status();
}

Status VulkanDevice::copy(DeviceBuffer& dst, const DeviceBuffer& src, std::uint64_t bytes) {
  auto d = own_buffer(dst, "copy (destination)");
  if (!d.ok()) return d.status();
  auto s_ = own_buffer(src, "copy (source)");
  if (!s_.ok()) return s_.status();
  TUNE_RETURN_IF_ERROR(check_range("copy (destination)", (*d)->size_bytes(), 0, bytes));
  TUNE_RETURN_IF_ERROR(check_range("copy (source)", (*s_)->size_bytes(), 0, bytes));
  if (bytes == 0) return Status::ok_status();
  if (*d == *s_) return Status::ok_status();
  std::lock_guard<std::mutex> lock(queue_mu_);
  TUNE_RETURN_IF_ERROR(check_usable());
  auto cmd = begin_locked();
  if (!cmd.ok()) return cmd.status();
  VkBufferCopy region{0, 0, bytes};
  vkCmdCopyBuffer(*cmd, (*s_)->raw().buffer, (*d)->raw().buffer, 1, &region);
  Submission s;
  s.cmd = *cmd;
  auto fence = submit_locked(std::move(s));
  return fence.ok() ? Status::ok_status() : fence.status();
}

Status VulkanDevice::synchronize() {
  std::lock_guard<std::mutex> lock(queue_mu_);
  TUNE_RETURN_IF_ERROR(check_usable());
  return wait_all_locked(kSyncTimeoutMs);
}

// ---------------------------------------------------------------------------------------------
// Submissions

Result<VkCommandBuffer> VulkanDevice::begin_locked() {
  if (inflight_.size() >= kMaxInflight) TUNE_RETURN_IF_ERROR(wait_all_locked(kSyncTimeoutMs));
  auto ai = vk_struct<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
  ai.commandPool = pool_;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  TUNE_VK_RETURN_IF_ERROR(vkAllocateCommandBuffers(device_, &ai, &cmd), "vkAllocateCommandBuffers");
  auto bi = vk_struct<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  VkResult r = vkBeginCommandBuffer(cmd, &bi);
  if (r != VK_SUCCESS) {
    vkFreeCommandBuffers(device_, pool_, 1, &cmd);
    return make_error("vkBeginCommandBuffer", r);
  }
  // Order against every earlier submission (memory dependencies do not cross submissions
  // by themselves).
  all_commands_barrier(cmd);
  return cmd;
}

Result<VkFence> VulkanDevice::submit_locked(Submission s) {
  // Make device writes visible to the host once the fence has signalled.
  full_barrier(s.cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_HOST_BIT,
               VK_ACCESS_HOST_READ_BIT);
  VkResult r = vkEndCommandBuffer(s.cmd);
  if (r != VK_SUCCESS) {
    free_submission_locked(s);
    return make_error("vkEndCommandBuffer", r);
  }
  auto fci = vk_struct<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
  r = vkCreateFence(device_, &fci, nullptr, &s.fence);
  if (r != VK_SUCCESS) {
    free_submission_locked(s);
    return make_error("vkCreateFence", r);
  }
  auto si = vk_struct<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
  si.commandBufferCount = 1;
  si.pCommandBuffers = &s.cmd;
  r = vkQueueSubmit(queue_, 1, &si, s.fence);
  if (r != VK_SUCCESS) {
    free_submission_locked(s);
    if (r == VK_ERROR_DEVICE_LOST) lost_ = true;
    return make_error("vkQueueSubmit", r, StatusCode::launch_failed);
  }
  VkFence fence = s.fence;
  inflight_.push_back(std::move(s));
  return fence;
}

Status VulkanDevice::wait_fence_locked(VkFence fence, double timeout_ms, std::string_view what) {
  VkResult r = vkWaitForFences(device_, 1, &fence, VK_TRUE, ms_to_ns(timeout_ms));
  if (r == VK_SUCCESS) return Status::ok_status();
  if (r == VK_TIMEOUT) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f ms", timeout_ms);
    return Status(StatusCode::timeout, std::string(what) + ": vkWaitForFences: VK_TIMEOUT, " +
                                           "the work did not finish within " + buf);
  }
  if (r == VK_ERROR_DEVICE_LOST) lost_ = true;
  Status s = make_error("vkWaitForFences", r, StatusCode::launch_failed);
  s.with_context(what);
  return s;
}

Status VulkanDevice::wait_all_locked(double timeout_ms) {
  for (auto& s : inflight_) TUNE_RETURN_IF_ERROR(wait_fence_locked(s.fence, timeout_ms, "wait"));
  for (auto& s : inflight_) free_submission_locked(s);
  inflight_.clear();
  return Status::ok_status();
}

void VulkanDevice::retire_completed_locked() {
  auto done = [&](Submission& s) {
    if (vkGetFenceStatus(device_, s.fence) != VK_SUCCESS) return false;
    free_submission_locked(s);
    return true;
  };
  inflight_.erase(std::remove_if(inflight_.begin(), inflight_.end(), done), inflight_.end());
}

void VulkanDevice::free_submission_locked(Submission& s) noexcept {
  if (s.cmd != VK_NULL_HANDLE) vkFreeCommandBuffers(device_, pool_, 1, &s.cmd);
  if (s.fence != VK_NULL_HANDLE) vkDestroyFence(device_, s.fence, nullptr);
  if (s.descriptors != VK_NULL_HANDLE) vkDestroyDescriptorPool(device_, s.descriptors, nullptr);
  if (s.queries != VK_NULL_HANDLE) vkDestroyQueryPool(device_, s.queries, nullptr);
  for (auto& raw : s.staging) destroy_raw(raw);
  s = Submission{};
}

Status VulkanDevice::ensure_scratch_locked() {
  if (scratch_.buffer != VK_NULL_HANDLE || flush_bytes_ == 0) return Status::ok_status();
  auto raw = create_raw(flush_bytes_, false);
  if (!raw.ok()) return raw.status();
  scratch_ = *raw;
  return Status::ok_status();
}

// ---------------------------------------------------------------------------------------------
// Compilation

Result<std::unique_ptr<CompiledKernel>> VulkanDevice::compile(const KernelSource& source,
                                                              const Config& config) {
  TUNE_RETURN_IF_ERROR(check_usable());
  if (source.language != Language::glsl) {
    return Status(StatusCode::invalid_argument, "the Vulkan backend compiles GLSL, not " +
                                                    std::string(to_string(source.language)));
  }
  if (!source.entry.empty() && source.entry != "main") {
    return Status(StatusCode::invalid_argument,
                  "GLSL compute shaders have entry point 'main', not '" + source.entry + "'");
  }
  const auto& l = opened_.caps.props.limits;
  const Dim3 block = normalized_block(config.launch().block);
  if (is_set(block)) {
    if (block.x > l.maxComputeWorkGroupSize[0] || block.y > l.maxComputeWorkGroupSize[1] ||
        block.z > l.maxComputeWorkGroupSize[2] ||
        block.product() > l.maxComputeWorkGroupInvocations) {
      return Status(StatusCode::out_of_resources,
                    "workgroup " + dim_text(block) + " exceeds the device limits (" +
                        "maxComputeWorkGroupSize " + dim_text(info_.max_block) +
                        ", maxComputeWorkGroupInvocations " +
                        std::to_string(l.maxComputeWorkGroupInvocations) + ")");
    }
  }
  if (config.launch().shared_bytes != 0) {
    return Status(StatusCode::invalid_argument,
                  "Vulkan has no dynamic shared memory: declare shared arrays in the shader");
  }

  // SPIR-V: from the in-memory cache, else the disk cache, else shaderc (and then stored on
  // disk). The key names everything that decides the SPIR-V: the toolchain and its settings,
  // the source (two independent 64-bit hashes and its length) and every macro definition.
  // The macros are the variant's definitions (tune::definitions, the same list as on every
  // backend); the workgroup size also goes in as specialization constants, at pipeline creation.
  auto macros = definitions(config, source);
  if (!macros.ok()) return macros.status();
  std::string key = spirv_toolchain_;
  key += "\nsource " + std::to_string(source.text.size()) + " " + hex(stable_hash(source.text)) +
         " " + hex(stable_hash(source.text, 0x5eed5eed5eed5eedULL));
  for (const Definition& d : *macros) {
    key += "\n-D";
    key += d.name;
    key += '=';
    key += d.value;
  }
  std::shared_ptr<const CachedSpirv> spirv;
  {
    std::lock_guard<std::mutex> lock(compile_mu_);
    auto it = spirv_cache_.find(key);
    if (it != spirv_cache_.end()) {
      spirv = it->second;
    } else if (auto disk = load_spirv_locked(key)) {
      ++spirv_disk_hits_;
      spirv_cache_.emplace(key, disk);
      spirv = std::move(disk);
    } else {
      shaderc::CompileOptions opts;
      opts.SetSourceLanguage(shaderc_source_language_glsl);
      opts.SetTargetEnvironment(shaderc_target_env_vulkan, target_env_);
      opts.SetOptimizationLevel(shaderc_optimization_level_performance);
      for (const Definition& d : *macros) opts.AddMacroDefinition(d.name, d.value);
      ++shaderc_compiles_;
      shaderc::SpvCompilationResult res = compiler_.CompileGlslToSpv(
          source.text, shaderc_glsl_compute_shader, "kernel.comp", "main", opts);
      if (res.GetCompilationStatus() != shaderc_compilation_status_success) {
        std::string log = res.GetErrorMessage();
        if (log.empty())
          log = "(shaderc gave no log; status " +
                std::to_string(static_cast<int>(res.GetCompilationStatus())) + ")";
        return Status(StatusCode::compile_error, "shaderc: " + log);
      }
      auto entry = std::make_shared<CachedSpirv>();
      entry->words.assign(res.cbegin(), res.cend());
      entry->log = res.GetErrorMessage();
      auto info = reflect_spirv(entry->words);
      if (!info.ok()) return info.status();
      entry->info = std::move(*info);
      spirv_cache_.emplace(key, entry);
      if (spirv_disk_) {
        BinaryCacheEntry stored;
        stored.binary.assign(reinterpret_cast<const char*>(entry->words.data()),
                             entry->words.size() * sizeof(std::uint32_t));
        stored.log = entry->log;
        stored.entry_name = "main";
        (void)spirv_disk_->store(key, stored);
      }
      spirv = std::move(entry);
    }
  }
  const SpirvInfo& si = spirv->info;

  // Checks that need the SPIR-V: device features, interface shape, resource limits.
  const DeviceCaps& c = opened_.caps;
  for (std::uint32_t cap : si.capabilities) {
    bool ok = true;
    const bool sg = c.subgroup_in_compute;
    switch (cap) {
      case spv_cap::kFloat16:
        ok = c.float16;
        break;
      case spv_cap::kFloat64:
        ok = c.float64;
        break;
      case spv_cap::kInt64:
        ok = c.int64;
        break;
      case spv_cap::kInt16:
        ok = c.int16;
        break;
      case spv_cap::kInt8:
        ok = c.int8;
        break;
      case spv_cap::kStorageBuffer16BitAccess:
        ok = c.storage16;
        break;
      case spv_cap::kUniformAndStorageBuffer16BitAccess:
        ok = c.uniform_storage16;
        break;
      case spv_cap::kStorageBuffer8BitAccess:
        ok = c.storage8;
        break;
      case spv_cap::kUniformAndStorageBuffer8BitAccess:
        ok = c.uniform_storage8;
        break;
      case spv_cap::kGroupNonUniform:
        ok = sg && (c.subgroup_ops & VK_SUBGROUP_FEATURE_BASIC_BIT);
        break;
      case spv_cap::kGroupNonUniformVote:
        ok = sg && (c.subgroup_ops & VK_SUBGROUP_FEATURE_VOTE_BIT);
        break;
      case spv_cap::kGroupNonUniformArithmetic:
        ok = sg && (c.subgroup_ops & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT);
        break;
      case spv_cap::kGroupNonUniformBallot:
        ok = sg && (c.subgroup_ops & VK_SUBGROUP_FEATURE_BALLOT_BIT);
        break;
      case spv_cap::kGroupNonUniformShuffle:
        ok = sg && (c.subgroup_ops & VK_SUBGROUP_FEATURE_SHUFFLE_BIT);
        break;
      case spv_cap::kGroupNonUniformShuffleRelative:
        ok = sg && (c.subgroup_ops & VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT);
        break;
      default:
        break;  // core capabilities, or ones pipeline creation will judge
    }
    if (!ok) {
      return Status(StatusCode::unavailable, "the shader needs SPIR-V capability " +
                                                 capability_name(cap) + ", which " + info_.name +
                                                 " does not support");
    }
  }
  if (si.uses_other_sets || si.uses_non_buffer_descriptors) {
    return Status(StatusCode::invalid_argument,
                  "the Vulkan backend binds storage buffers in descriptor set 0 only (no other "
                  "sets, uniform buffers, images or samplers)");
  }
  if (is_set(block) && !si.local_size_is_spec &&
      (si.local_size[0] != block.x || si.local_size[1] != block.y || si.local_size[2] != block.z)) {
    return Status(StatusCode::invalid_argument,
                  "the shader fixes its workgroup size at " + std::to_string(si.local_size[0]) +
                      "x" + std::to_string(si.local_size[1]) + "x" +
                      std::to_string(si.local_size[2]) + " but the config asks " + dim_text(block) +
                      ": declare layout(local_size_x_id = 0, local_size_y_id = 1, "
                      "local_size_z_id = 2) in;");
  }
  if (si.shared_bytes > l.maxComputeSharedMemorySize) {
    return Status(StatusCode::out_of_resources,
                  "the shader uses " + std::to_string(si.shared_bytes) +
                      " bytes of shared memory; maxComputeSharedMemorySize is " +
                      std::to_string(l.maxComputeSharedMemorySize));
  }
  if (si.push_bytes > l.maxPushConstantsSize) {
    return Status(StatusCode::out_of_resources,
                  "the push-constant block takes " + std::to_string(si.push_bytes) +
                      " bytes; maxPushConstantsSize is " + std::to_string(l.maxPushConstantsSize));
  }

  // Vulkan objects. Each failure releases what was created before it.
  auto smi = vk_struct<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
  smi.codeSize = spirv->words.size() * sizeof(std::uint32_t);
  smi.pCode = spirv->words.data();
  VkShaderModule module = VK_NULL_HANDLE;
  TUNE_VK_RETURN_IF_ERROR(vkCreateShaderModule(device_, &smi, nullptr, &module),
                          "vkCreateShaderModule");

  // The bindings the SPIR-V still declares: one whose every use a variant's macros removed
  // was optimised away with its variable, leaving a hole that no descriptor fills.
  std::vector<VkDescriptorSetLayoutBinding> bindings(si.bindings.size());
  for (std::size_t i = 0; i < bindings.size(); ++i) {
    bindings[i] = {si.bindings[i], VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                   VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  }
  auto dli = vk_struct<VkDescriptorSetLayoutCreateInfo>(
      VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
  dli.bindingCount = static_cast<std::uint32_t>(bindings.size());
  dli.pBindings = bindings.data();
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkResult r = vkCreateDescriptorSetLayout(device_, &dli, nullptr, &set_layout);
  if (r != VK_SUCCESS) {
    vkDestroyShaderModule(device_, module, nullptr);
    return make_error("vkCreateDescriptorSetLayout", r);
  }
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, si.push_bytes};
  auto pli = vk_struct<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
  pli.setLayoutCount = 1;
  pli.pSetLayouts = &set_layout;
  pli.pushConstantRangeCount = si.push_bytes > 0 ? 1 : 0;
  pli.pPushConstantRanges = &range;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  r = vkCreatePipelineLayout(device_, &pli, nullptr, &layout);
  if (r != VK_SUCCESS) {
    vkDestroyDescriptorSetLayout(device_, set_layout, nullptr);
    vkDestroyShaderModule(device_, module, nullptr);
    return make_error("vkCreatePipelineLayout", r);
  }

  const std::uint32_t spec_data[3] = {block.x, block.y, block.z};
  const VkSpecializationMapEntry entries[3] = {{0, 0, 4}, {1, 4, 4}, {2, 8, 4}};
  VkSpecializationInfo spec{3, entries, sizeof spec_data, spec_data};
  auto cpi = vk_struct<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
  cpi.stage = vk_struct<VkPipelineShaderStageCreateInfo>(
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO);
  cpi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cpi.stage.module = module;
  cpi.stage.pName = "main";
  cpi.stage.pSpecializationInfo = (is_set(block) && si.local_size_is_spec) ? &spec : nullptr;
  cpi.layout = layout;
  VkPipeline pipeline = VK_NULL_HANDLE;
  r = vkCreateComputePipelines(device_, pipeline_cache_, 1, &cpi, nullptr, &pipeline);
  vkDestroyShaderModule(device_, module, nullptr);
  if (r != VK_SUCCESS) {
    vkDestroyPipelineLayout(device_, layout, nullptr);
    vkDestroyDescriptorSetLayout(device_, set_layout, nullptr);
    if (r == VK_ERROR_DEVICE_LOST) lost_ = true;
    return make_error("vkCreateComputePipelines", r, StatusCode::compile_error);
  }
  pipelines_created_.fetch_add(1, std::memory_order_relaxed);

  KernelResources res;
  res.shared_bytes = static_cast<std::uint32_t>(si.shared_bytes);
  const Dim3 compiled_block =
      is_set(block) ? block : Dim3{si.local_size[0], si.local_size[1], si.local_size[2]};
  res.max_threads = static_cast<std::uint32_t>(compiled_block.product());
  // Says where the SPIR-V came from, as the CUDA backend does for its CUBIN cache.
  std::string log = spirv->from_disk ? "(binary from the spirv cache)\n" + spirv->log : spirv->log;
  return std::unique_ptr<CompiledKernel>(std::make_unique<VulkanKernel>(
      this, si, compiled_block, set_layout, layout, pipeline, std::move(log), res));
}

std::shared_ptr<const VulkanDevice::CachedSpirv> VulkanDevice::load_spirv_locked(
    const std::string& key_text) {
  if (!spirv_disk_) return nullptr;
  // Every entry this backend writes names the entry point "main": one that does not was not
  // written for this key by libtune, and is evicted (a miss) before anything reads it.
  auto stored = spirv_disk_->load(key_text, [](const BinaryCacheEntry& e) -> std::string {
    return e.entry_name == "main" ? std::string()
                                  : "entry point '" + e.entry_name + "' is not this kernel's";
  });
  if (!stored) return nullptr;
  // The entry passed BinaryCache's checksum; still never hand the driver something that is
  // not a module this backend can reflect. A bad one is evicted, recompiled and replaced.
  auto bad = [&](const std::string& why) -> std::shared_ptr<const CachedSpirv> {
    spirv_disk_->evict(key_text, why + "; compiling with shaderc");
    return nullptr;
  };
  const std::string& bytes = stored->binary;
  if (bytes.size() < 5 * sizeof(std::uint32_t) || bytes.size() % sizeof(std::uint32_t) != 0)
    return bad(std::to_string(bytes.size()) + " bytes is not a SPIR-V module");
  auto entry = std::make_shared<CachedSpirv>();
  entry->words.resize(bytes.size() / sizeof(std::uint32_t));
  std::memcpy(entry->words.data(), bytes.data(), bytes.size());
  if (entry->words[0] != 0x07230203u) return bad("no SPIR-V magic number");
  auto info = reflect_spirv(entry->words);
  if (!info.ok()) return bad(info.status().to_string());
  entry->info = std::move(*info);
  entry->log = std::move(stored->log);
  entry->from_disk = true;
  return entry;
}

// ---------------------------------------------------------------------------------------------
// Launch and timing

Result<const VulkanKernel*> VulkanDevice::own_kernel(const CompiledKernel& k) const {
  const auto* vk = dynamic_cast<const VulkanKernel*>(&k);
  if (vk == nullptr || vk->owner() != this)
    return Status(StatusCode::invalid_argument, "the kernel was not compiled by this device");
  return vk;
}

Status VulkanDevice::bind_args(const VulkanKernel& k, const LaunchDims& dims, ArgList args,
                               BoundArgs* out) const {
  const auto& l = opened_.caps.props.limits;
  const Dim3 block = normalized_block(dims.block);
  if (is_set(block) && block != k.block()) {
    return Status(StatusCode::invalid_argument, "launch block " + dim_text(block) +
                                                    " differs from the compiled workgroup " +
                                                    dim_text(k.block()));
  }
  if (dims.shared_bytes != 0) {
    return Status(StatusCode::invalid_argument,
                  "Vulkan has no dynamic shared memory (LaunchDims::shared_bytes must be 0)");
  }
  for (int d = 0; d < 3; ++d) {
    const std::uint32_t g = d == 0 ? dims.grid.x : d == 1 ? dims.grid.y : dims.grid.z;
    if (g > l.maxComputeWorkGroupCount[d]) {
      return Status(StatusCode::out_of_resources, "grid " + dim_text(dims.grid) +
                                                      " exceeds maxComputeWorkGroupCount " +
                                                      dim_text(info_.max_grid));
    }
  }

  // Buffer argument i is binding i and scalar argument i push-constant member i, as far as the
  // SPIR-V still declares them: a binding or a whole push-constant block that a variant never
  // uses (its uses compiled out by the variant's macros) is optimised away, and its arguments
  // are checked but not bound. What the shader does declare must match the call exactly.
  const SpirvInfo& si = k.spirv();
  const bool has_push = !si.push.empty();
  std::size_t nscalar = 0;
  std::uint32_t nbuffer = 0;
  out->buffers.clear();
  out->push.assign(si.push_bytes, 0);
  std::uint32_t offset = 0;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ArgValue& a = args[i];
    const std::string where =
        "argument " + std::to_string(i) + " (" + std::string(to_string(a.type)) + ")";
    if (a.kind == ArgKind::buffer) {
      if (a.buffer == nullptr) return Status(StatusCode::invalid_argument, where + ": null buffer");
      auto b = own_buffer(*a.buffer, where);
      if (!b.ok()) return b.status();
      const std::uint64_t need = a.count * size_of(a.type);
      if (need > (*b)->size_bytes()) {
        return Status(StatusCode::invalid_argument, where + ": " + std::to_string(a.count) +
                                                        " elements need " + std::to_string(need) +
                                                        " bytes but the buffer holds " +
                                                        std::to_string((*b)->size_bytes()));
      }
      if (std::binary_search(si.bindings.begin(), si.bindings.end(), nbuffer))
        out->buffers.emplace_back(nbuffer, *b);
      ++nbuffer;
      continue;
    }
    // Scalars: 32-bit (8/16-bit integers widened) at 4-byte alignment, 64-bit at 8.
    std::uint32_t size = 4;
    std::uint64_t bits = a.bits;
    bool is_float = false;
    switch (a.type) {
      case ElemType::f32:
        is_float = true;
        break;
      case ElemType::f64:
        is_float = true;
        size = 8;
        break;
      case ElemType::i64:
      case ElemType::u64:
        size = 8;
        break;
      case ElemType::i8:
      case ElemType::i16:
        bits = static_cast<std::uint32_t>(static_cast<std::int32_t>(a.as_int()));
        break;
      case ElemType::f16:
      case ElemType::bf16:
        return Status(StatusCode::invalid_argument,
                      where + ": 16-bit float scalars cannot be push constants; pass f32");
      default:
        break;
    }
    if (!has_push) continue;  // no scalar is used by this variant
    offset = (offset + size - 1) / size * size;
    if (nscalar >= si.push.size()) {
      return Status(StatusCode::invalid_argument,
                    where + ": the shader's push-constant block has " +
                        std::to_string(si.push.size()) + " members, fewer than the scalar " +
                        "arguments given");
    }
    const PushMember& m = si.push[nscalar];
    if (m.bytes != size || m.is_float != is_float || m.offset != offset) {
      return Status(StatusCode::invalid_argument,
                    where + " is scalar #" + std::to_string(nscalar) + ", packed as " +
                        std::to_string(size) + "-byte " + (is_float ? "float" : "integer") +
                        " at offset " + std::to_string(offset) + ", but the shader declares a " +
                        std::to_string(m.bytes) + "-byte " + (m.is_float ? "float" : "integer") +
                        " at offset " + std::to_string(m.offset));
    }
    std::memcpy(out->push.data() + offset, &bits, size);  // little-endian hosts
    offset += size;
    ++nscalar;
  }
  if (!si.bindings.empty() && si.bindings.back() >= nbuffer) {
    return Status(StatusCode::invalid_argument,
                  "the shader binds storage buffer " + std::to_string(si.bindings.back()) +
                      " (buffer argument " + std::to_string(si.bindings.back()) +
                      ") but the call passes " + std::to_string(nbuffer) + " buffer arguments");
  }
  if (has_push && nscalar != si.push.size()) {
    return Status(StatusCode::invalid_argument, "the shader's push-constant block has " +
                                                    std::to_string(si.push.size()) +
                                                    " members but the call passes " +
                                                    std::to_string(nscalar) + " scalar arguments");
  }
  return Status::ok_status();
}

Result<VkDescriptorSet> VulkanDevice::make_descriptor_set_locked(const VulkanKernel& k,
                                                                 const BoundArgs& a,
                                                                 Submission* s) {
  if (a.buffers.empty()) return VkDescriptorSet{VK_NULL_HANDLE};
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                            static_cast<std::uint32_t>(a.buffers.size())};
  auto dpi = vk_struct<VkDescriptorPoolCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
  dpi.maxSets = 1;
  dpi.poolSizeCount = 1;
  dpi.pPoolSizes = &size;
  TUNE_VK_RETURN_IF_ERROR(vkCreateDescriptorPool(device_, &dpi, nullptr, &s->descriptors),
                          "vkCreateDescriptorPool");
  VkDescriptorSetLayout layout = k.set_layout();
  auto dai = vk_struct<VkDescriptorSetAllocateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
  dai.descriptorPool = s->descriptors;
  dai.descriptorSetCount = 1;
  dai.pSetLayouts = &layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  TUNE_VK_RETURN_IF_ERROR(vkAllocateDescriptorSets(device_, &dai, &set),
                          "vkAllocateDescriptorSets");
  std::vector<VkDescriptorBufferInfo> infos(a.buffers.size());
  std::vector<VkWriteDescriptorSet> writes(a.buffers.size());
  for (std::size_t i = 0; i < infos.size(); ++i) {
    const auto& [binding, buffer] = a.buffers[i];
    infos[i] = {buffer->raw().buffer, 0, VK_WHOLE_SIZE};
    writes[i] = vk_struct<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
    writes[i].dstSet = set;
    writes[i].dstBinding = binding;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  vkUpdateDescriptorSets(device_, static_cast<std::uint32_t>(writes.size()), writes.data(), 0,
                         nullptr);
  return set;
}

void VulkanDevice::record_dispatch_locked(VkCommandBuffer cmd, const VulkanKernel& k,
                                          VkDescriptorSet set, const BoundArgs& a,
                                          const Dim3& grid) {
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k.pipeline());
  if (set != VK_NULL_HANDLE) {
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k.layout(), 0, 1, &set, 0,
                            nullptr);
  }
  if (!a.push.empty()) {
    vkCmdPushConstants(cmd, k.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0,
                       static_cast<std::uint32_t>(a.push.size()), a.push.data());
  }
  vkCmdDispatch(cmd, grid.x, grid.y, grid.z);
}

Status VulkanDevice::launch(const CompiledKernel& kernel, const LaunchDims& dims, ArgList args) {
  auto k = own_kernel(kernel);
  if (!k.ok()) return k.status();
  BoundArgs bound;
  TUNE_RETURN_IF_ERROR(bind_args(**k, dims, args, &bound));
  std::lock_guard<std::mutex> lock(queue_mu_);
  TUNE_RETURN_IF_ERROR(check_usable());
  auto cmd = begin_locked();
  if (!cmd.ok()) return cmd.status();
  Submission s;
  s.cmd = *cmd;
  auto set = make_descriptor_set_locked(**k, bound, &s);
  if (!set.ok()) {
    free_submission_locked(s);
    return set.status();
  }
  record_dispatch_locked(*cmd, **k, *set, bound, dims.grid);
  auto fence = submit_locked(std::move(s));
  return fence.ok() ? Status::ok_status() : fence.status();
}

Status VulkanDevice::own_resets(
    const LaunchResets& r,
    std::vector<std::pair<const VulkanBuffer*, const VulkanBuffer*>>* restores) const {
  TUNE_RETURN_IF_ERROR(r.check());
  for (const DeviceBuffer* b : r.zero) TUNE_RETURN_IF_ERROR(own_buffer(*b, "time: zero").status());
  for (const BufferRestore& c : r.restore) {
    auto dst = own_buffer(*c.dst, "time: restore destination");
    if (!dst.ok()) return dst.status();
    auto src = own_buffer(*c.src, "time: restore source");
    if (!src.ok()) return src.status();
    restores->emplace_back(*dst, *src);
  }
  return Status::ok_status();
}

void VulkanDevice::record_resets(
    VkCommandBuffer cmd, const LaunchResets& r,
    const std::vector<std::pair<const VulkanBuffer*, const VulkanBuffer*>>& restores) {
  if (r.empty()) return;
  for (const DeviceBuffer* b : r.zero) {
    const std::uint64_t bytes = LaunchResets::zero_bytes(*b);
    if (bytes != 0)
      vkCmdFillBuffer(cmd, static_cast<const VulkanBuffer*>(b)->raw().buffer, 0, bytes, 0);
  }
  for (const auto& [dst, src] : restores) {
    if (dst == src) continue;
    VkBufferCopy region{0, 0, dst->size_bytes()};
    vkCmdCopyBuffer(cmd, src->raw().buffer, dst->raw().buffer, 1, &region);
  }
  all_commands_barrier(cmd);  // the launch (or the flush) sees the buffers put back
}

Result<std::vector<double>> VulkanDevice::time(const CompiledKernel& kernel, const LaunchDims& dims,
                                               ArgList args, const TimingPlan& plan) {
  if (plan.reps <= 0) return Status(StatusCode::invalid_argument, "time: reps must be positive");
  auto k = own_kernel(kernel);
  if (!k.ok()) return k.status();
  BoundArgs bound;
  TUNE_RETURN_IF_ERROR(bind_args(**k, dims, args, &bound));

  const std::uint32_t valid_bits = opened_.caps.timestamp_valid_bits;
  const std::uint64_t mask =
      valid_bits >= 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << valid_bits) - 1);
  const double period = static_cast<double>(opened_.caps.props.limits.timestampPeriod);
  // All reps go in one command buffer (batches of up to 256 reps), resets included.
  constexpr int kBatchMax = 256;
  std::vector<std::pair<const VulkanBuffer*, const VulkanBuffer*>> restores;
  TUNE_RETURN_IF_ERROR(own_resets(plan.resets, &restores));

  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(plan.reps));
  std::lock_guard<std::mutex> lock(queue_mu_);
  TUNE_RETURN_IF_ERROR(check_usable());
  if (plan.flush_l2) TUNE_RETURN_IF_ERROR(ensure_scratch_locked());
  const bool flush = plan.flush_l2 && scratch_.buffer != VK_NULL_HANDLE;

  for (int done = 0; done < plan.reps;) {
    const int n = std::min(kBatchMax, plan.reps - done);
    auto cmd = begin_locked();
    if (!cmd.ok()) return cmd.status();
    Submission s;
    s.cmd = *cmd;
    auto qpi = vk_struct<VkQueryPoolCreateInfo>(VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO);
    qpi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qpi.queryCount = static_cast<std::uint32_t>(2 * n);
    VkResult r = vkCreateQueryPool(device_, &qpi, nullptr, &s.queries);
    if (r != VK_SUCCESS) {
      free_submission_locked(s);
      return make_error("vkCreateQueryPool", r);
    }
    auto set = make_descriptor_set_locked(**k, bound, &s);
    if (!set.ok()) {
      free_submission_locked(s);
      return set.status();
    }
    vkCmdResetQueryPool(s.cmd, s.queries, 0, qpi.queryCount);
    for (int i = 0; i < n; ++i) {
      record_resets(s.cmd, plan.resets, restores);
      if (flush) {
        // Overwrite an L2-sized scratch buffer, outside the timed span.
        vkCmdFillBuffer(s.cmd, scratch_.buffer, 0, scratch_.size,
                        static_cast<std::uint32_t>(done + i + 1));
        all_commands_barrier(s.cmd);
      }
      const auto q = static_cast<std::uint32_t>(2 * i);
      vkCmdWriteTimestamp(s.cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, s.queries, q);
      record_dispatch_locked(s.cmd, **k, *set, bound, dims.grid);
      vkCmdWriteTimestamp(s.cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, s.queries, q + 1);
      // The next rep (or fill) starts only after this dispatch has finished.
      all_commands_barrier(s.cmd);
    }
    VkQueryPool queries = s.queries;
    auto fence = submit_locked(std::move(s));
    if (!fence.ok()) return fence.status();
    // Each launch may take up to timeout_ms; fills and copies get a generous allowance on top.
    const bool extra = flush || !plan.resets.empty();
    const double budget = plan.timeout_ms * n + (extra ? 1000.0 + 10.0 * n : 0.0);
    Status ws = wait_fence_locked(*fence, budget, "time");
    if (!ws.ok()) return ws;  // the submission stays in flight and is freed when it ends
    std::vector<std::uint64_t> ts(static_cast<std::size_t>(2 * n));
    r = vkGetQueryPoolResults(device_, queries, 0, static_cast<std::uint32_t>(2 * n),
                              ts.size() * sizeof(std::uint64_t), ts.data(), sizeof(std::uint64_t),
                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    if (r != VK_SUCCESS) {
      if (r == VK_ERROR_DEVICE_LOST) lost_ = true;
      return make_error("vkGetQueryPoolResults", r);
    }
    for (int i = 0; i < n; ++i) {
      const std::uint64_t start = ts[2 * i] & mask, end = ts[2 * i + 1] & mask;
      // Modular difference handles a counter that wrapped within valid_bits.
      const std::uint64_t ticks = (end - start) & mask;
      samples.push_back(static_cast<double>(ticks) * period);
    }
    retire_completed_locked();
    done += n;
  }
  return samples;
}

}  // namespace tune::vk
