// PipelineCache: the device's VkPipelineCache and its file. The driver's cache data is stored
// per physical device and driver build (<cache dir>/vkpipeline through tune::BinaryCache, per
// TUNE_CACHE / TUNE_CACHE_DIR): read when the device opens, after checking the header Vulkan
// defines, and written back when it closes if pipelines were added (last writer wins).
// A damaged or foreign file only costs pipeline compiles: it is reported at debug level.
//
// Ownership: owns the VkPipelineCache; the VkDevice must outlive it.
// Thread safety: handle() may be used from any thread (VkPipelineCache is internally
// synchronised); created() is atomic; the rest is const after open().
// Blocking: open() reads the file and the destructor writes it (both on the calling thread).
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "device_facts.hpp"
#include "tune/backend/binary_cache.hpp"
#include "vk_handles.hpp"

namespace tune::vk {

class PipelineCache {
 public:
  static Result<std::unique_ptr<PipelineCache>> open(VkDevice device, const DeviceCaps& caps);
  // Saves the data when it changed and the cache is writable, then destroys the cache.
  ~PipelineCache();
  PipelineCache(const PipelineCache&) = delete;
  PipelineCache& operator=(const PipelineCache&) = delete;

  VkPipelineCache handle() const noexcept { return cache_.get(); }
  // Counts a pipeline created through handle() (none: nothing to write back).
  void created() noexcept { created_.fetch_add(1, std::memory_order_relaxed); }

  std::string file() const;  // empty without a disk cache
  bool writable() const;
  std::uint64_t loaded_bytes() const noexcept { return loaded_bytes_; }

 private:
  PipelineCache(VkDevice device, const DeviceCaps& caps);
  // The stored file's data when its header matches this physical device, else empty.
  std::string load();
  void save() noexcept;

  VkDevice device_;
  const VkPhysicalDeviceProperties props_;
  std::shared_ptr<BinaryCache> disk_;  // null when TUNE_CACHE=off
  std::string key_;                    // this physical device's file key
  PipelineCacheHandle cache_;
  std::uint64_t loaded_bytes_ = 0;  // initial data the VkPipelineCache accepted
  std::uint64_t loaded_hash_ = 0;   // stable_hash of it (unchanged: no write-back)
  std::atomic<std::uint64_t> created_{0};
};

// Why `data` is not a pipeline cache a device with `p` may be given, or empty when it is: the
// header Vulkan defines (VkPipelineCacheHeaderVersionOne, least significant byte first) with
// its size, version, vendor, device and the driver's pipelineCacheUUID.
std::string pipeline_cache_problem(std::string_view data, const VkPhysicalDeviceProperties& p);

}  // namespace tune::vk
