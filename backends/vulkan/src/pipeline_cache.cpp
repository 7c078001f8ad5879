#include "pipeline_cache.hpp"

#include <cstdio>
#include <cstring>
#include <exception>

#include "tune/backend/hash.hpp"
#include "tune/log.hpp"
#include "vk_status.hpp"

namespace tune::vk {
namespace {

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

// Keyed by the physical device and the driver build: another GPU or driver version has its
// own file, so machines with several devices keep one per device.
std::string key_for(const DeviceCaps& caps) {
  const VkPhysicalDeviceProperties& p = caps.props;
  return "libtune vulkan pipeline cache recipe " + std::to_string(kPipelineCacheRecipe) +
         "\nvendor 0x" + hex(p.vendorID) + " device 0x" + hex(p.deviceID) + " driverVersion 0x" +
         hex(p.driverVersion) + " pipelineCacheUUID " + uuid_hex(p.pipelineCacheUUID) + "\n" +
         p.deviceName + "\n" + caps.driver_name + " " + caps.driver_info;
}

}  // namespace

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

PipelineCache::PipelineCache(VkDevice device, const DeviceCaps& caps)
    : device_(device),
      props_(caps.props),
      disk_(BinaryCache::open_default("vkpipeline", LogLevel::debug)),
      key_(disk_ ? key_for(caps) : std::string()) {}

Result<std::unique_ptr<PipelineCache>> PipelineCache::open(VkDevice device,
                                                           const DeviceCaps& caps) {
  std::unique_ptr<PipelineCache> pc(new PipelineCache(device, caps));
  std::string initial = pc->load();
  auto cci = vk_struct<VkPipelineCacheCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO);
  cci.initialDataSize = initial.size();
  cci.pInitialData = initial.empty() ? nullptr : initial.data();
  VkResult r = vkCreatePipelineCache(device, &cci, nullptr, pc->cache_.receive(device));
  if (r != VK_SUCCESS && !initial.empty()) {
    tune::log(LogLevel::debug, "vulkan: vkCreatePipelineCache refused the stored data (" +
                                   result_name(r) + "); starting with an empty pipeline cache");
    initial.clear();
    cci.initialDataSize = 0;
    cci.pInitialData = nullptr;
    r = vkCreatePipelineCache(device, &cci, nullptr, pc->cache_.receive(device));
  }
  TUNE_VK_RETURN_IF_ERROR(r, "vkCreatePipelineCache");
  pc->loaded_bytes_ = initial.size();
  pc->loaded_hash_ = initial.empty() ? 0 : stable_hash(initial);
  return pc;
}

PipelineCache::~PipelineCache() { save(); }

std::string PipelineCache::file() const {
  return disk_ ? disk_->path_for(key_).string() : std::string();
}

bool PipelineCache::writable() const { return disk_ && disk_->writable(); }

std::string PipelineCache::load() {
  if (!disk_) return {};
  auto stored = disk_->load(key_);
  if (!stored) return {};
  if (std::string why = pipeline_cache_problem(stored->binary, props_); !why.empty()) {
    tune::log(LogLevel::debug,
              "vulkan: ignoring the pipeline cache " + disk_->path_for(key_).string() + ": " + why);
    return {};
  }
  return std::move(stored->binary);
}

void PipelineCache::save() noexcept {
  if (!writable() || !cache_) return;
  if (created_.load() == 0) return;  // nothing was added since the device opened
  try {
    std::size_t size = 0;
    VkResult r = vkGetPipelineCacheData(device_, cache_.get(), &size, nullptr);
    std::string data;
    if (r == VK_SUCCESS && size != 0) {
      data.resize(size);
      r = vkGetPipelineCacheData(device_, cache_.get(), &size, data.data());
      data.resize(size);
    }
    if (r != VK_SUCCESS) {  // VK_INCOMPLETE included: never store a partial cache
      tune::log(LogLevel::debug,
                "vulkan: pipeline cache not saved: vkGetPipelineCacheData: " + result_name(r));
      return;
    }
    if (data.size() == loaded_bytes_ && stable_hash(data) == loaded_hash_)
      return;  // every pipeline came from the stored cache: the file is current
    if (std::string why = pipeline_cache_problem(data, props_); !why.empty()) {
      tune::log(LogLevel::debug, "vulkan: pipeline cache not saved: the driver's data fails " +
                                     ("the header check: " + why));
      return;
    }
    // Last writer wins: another process's additions since this one opened are replaced.
    (void)disk_->store(key_, BinaryCacheEntry{std::move(data), {}, {}});
  } catch (const std::exception& e) {
    log_warning(std::string("vulkan: pipeline cache not saved: ") + e.what());
  }
}

}  // namespace tune::vk
