// VulkanDevice: tune::Device on one Vulkan physical device (internal header).
//
// Ownership: a VulkanDevice owns its VkInstance (and validation messenger), VkDevice, one
// compute queue, a command pool, a pipeline cache, the in-memory SPIR-V cache and the L2-flush
// scratch buffer. Buffers and kernels it returns hold a raw pointer back to it and must be
// destroyed before it (device.hpp's contract).
// Disk caches (TUNE_CACHE / TUNE_CACHE_DIR, through tune::BinaryCache): SPIR-V per variant in
// <cache dir>/spirv, read before shaderc runs and written after it; the VkPipelineCache's data
// per physical device in <cache dir>/vkpipeline, read when the device opens (after checking
// the header Vulkan defines) and written back when it closes. TUNE_CACHE=off: neither is read
// or written; readonly: both are read, neither is written.
// Thread safety: queue_mu_ serialises everything that records or submits command buffers and
// the list of in-flight submissions; compile_mu_ guards shaderc and both SPIR-V caches (so a
// variant is compiled or read once, and the disk read happens under it); pipeline creation
// runs unlocked (VkPipelineCache is internally synchronised).
// Blocking: launch(), fill() and copy() submit and return; upload() and download() wait for
// their own copy; time() and synchronize() wait for everything they submitted.
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <shaderc/shaderc.hpp>
#include <string>
#include <utility>
#include <vector>

#include "spirv_reflect.hpp"
#include "tune/binary_cache.hpp"
#include "tune/device.hpp"
#include "tune/vulkan.hpp"

namespace tune::vk {

class VulkanDevice;

// A VkBuffer and its dedicated memory; `mapped` is non-null for host-visible memory.
struct RawBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;
  std::uint64_t size = 0;
};

class VulkanBuffer final : public DeviceBuffer {
 public:
  VulkanBuffer(VulkanDevice* owner, RawBuffer raw) : owner_(owner), raw_(raw) {}
  // Waits for device work that may still use the buffer, then frees it.
  ~VulkanBuffer() override;
  VulkanBuffer(const VulkanBuffer&) = delete;
  VulkanBuffer& operator=(const VulkanBuffer&) = delete;

  std::uint64_t size_bytes() const noexcept override { return raw_.size; }
  const RawBuffer& raw() const noexcept { return raw_; }
  const VulkanDevice* owner() const noexcept { return owner_; }

 private:
  VulkanDevice* owner_;
  RawBuffer raw_;
};

class VulkanKernel final : public CompiledKernel {
 public:
  VulkanKernel(VulkanDevice* owner, SpirvInfo info, Dim3 block, VkDescriptorSetLayout set_layout,
               VkPipelineLayout layout, VkPipeline pipeline, std::string log,
               KernelResources resources);
  // Waits for device work that may still use the pipeline, then destroys it.
  ~VulkanKernel() override;
  VulkanKernel(const VulkanKernel&) = delete;
  VulkanKernel& operator=(const VulkanKernel&) = delete;

  const VulkanDevice* owner() const noexcept { return owner_; }
  const SpirvInfo& spirv() const noexcept { return info_; }
  const Dim3& block() const noexcept { return block_; }
  VkDescriptorSetLayout set_layout() const noexcept { return set_layout_; }
  VkPipelineLayout layout() const noexcept { return layout_; }
  VkPipeline pipeline() const noexcept { return pipeline_; }

 private:
  VulkanDevice* owner_;
  SpirvInfo info_;
  Dim3 block_;
  VkDescriptorSetLayout set_layout_;
  VkPipelineLayout layout_;
  VkPipeline pipeline_;
};

// What the physical device supports, queried once at open.
struct DeviceCaps {
  VkPhysicalDeviceProperties props{};
  VkPhysicalDeviceMemoryProperties memory{};
  std::uint32_t queue_family = 0;
  std::uint32_t timestamp_valid_bits = 0;
  std::uint32_t subgroup_size = 0;
  VkSubgroupFeatureFlags subgroup_ops = 0;
  bool subgroup_in_compute = false;
  bool int64 = false, float64 = false, int16 = false;
  bool float16 = false, int8 = false;
  bool storage16 = false, uniform_storage16 = false, storage8 = false, uniform_storage8 = false;
  std::string driver_name, driver_info;
};

// Everything open_vulkan_device hands over to the device it builds.
struct OpenedDevice {
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  DeviceCaps caps;
  bool validation = false;
};

// Messages of the validation layer, shared with the messenger callback.
struct ValidationLog {
  std::mutex mu;
  std::uint64_t errors = 0, warnings = 0;
  std::vector<std::string> messages;
};

class VulkanDevice final : public Device {
 public:
  // Creates the logical device and queue on `opened.physical`; takes ownership of the instance
  // (and messenger) on success and on failure.
  static Result<std::unique_ptr<VulkanDevice>> create(OpenedDevice opened,
                                                      std::shared_ptr<ValidationLog> log);
  ~VulkanDevice() override;
  VulkanDevice(const VulkanDevice&) = delete;
  VulkanDevice& operator=(const VulkanDevice&) = delete;

  const DeviceInfo& info() const noexcept override { return info_; }
  Language language() const noexcept override { return Language::glsl; }

  Result<Buffer> alloc(std::uint64_t bytes) override;
  Status upload(DeviceBuffer& dst, const void* src, std::uint64_t bytes,
                std::uint64_t offset) override;
  Status download(const DeviceBuffer& src, void* dst, std::uint64_t bytes,
                  std::uint64_t offset) override;
  Status fill(DeviceBuffer& dst, std::uint32_t pattern, std::uint64_t bytes,
              std::uint64_t offset) override;
  Status copy(DeviceBuffer& dst, const DeviceBuffer& src, std::uint64_t bytes) override;
  Result<std::unique_ptr<CompiledKernel>> compile(const KernelSource& source,
                                                  const Config& config) override;
  Status launch(const CompiledKernel& kernel, const LaunchDims& dims, ArgList args) override;
  Result<std::vector<double>> time(const CompiledKernel& kernel, const LaunchDims& dims,
                                   ArgList args, const TimingPlan& plan) override;
  Status synchronize() override;

  VulkanDiagnostics diagnostics() const;

  // Used by VulkanBuffer / VulkanKernel destructors.
  void wait_before_destroy() noexcept;
  void destroy_raw(RawBuffer& raw) noexcept;
  VkDevice vk() const noexcept { return device_; }

 private:
  struct Submission {
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
    VkDescriptorPool descriptors = VK_NULL_HANDLE;
    VkQueryPool queries = VK_NULL_HANDLE;
    std::vector<RawBuffer> staging;
  };
  // The buffers and packed push constants of one launch, checked against the kernel: each
  // buffer with the binding the shader declares for it (unused ones are not bound).
  struct BoundArgs {
    std::vector<std::pair<std::uint32_t, const VulkanBuffer*>> buffers;
    std::vector<std::uint8_t> push;
  };

  VulkanDevice(OpenedDevice opened, std::shared_ptr<ValidationLog> log);
  Status init();
  void fill_info();
  // Sets pipeline_key_ and returns the initial data for the VkPipelineCache: the stored
  // file's driver data when its Vulkan header matches this physical device, else empty
  // (logged at debug level).
  std::string load_pipeline_cache_data();
  // Writes the VkPipelineCache's data back when it changed and the cache is writable.
  void save_pipeline_cache() noexcept;
  // SPIR-V for `key_text` from the disk cache, reflected; null on a miss or a damaged entry.
  // Requires compile_mu_.
  struct CachedSpirv;
  std::shared_ptr<const CachedSpirv> load_spirv_locked(const std::string& key_text);

  Result<RawBuffer> create_raw(std::uint64_t bytes, bool staging);
  Result<const VulkanBuffer*> own_buffer(const DeviceBuffer& b, std::string_view what) const;
  Result<const VulkanKernel*> own_kernel(const CompiledKernel& k) const;
  Status bind_args(const VulkanKernel& k, const LaunchDims& dims, ArgList args,
                   BoundArgs* out) const;
  Status check_usable() const;
  // Checks that every buffer of `r` is this device's; its restores as device buffers.
  Status own_resets(
      const LaunchResets& r,
      std::vector<std::pair<const VulkanBuffer*, const VulkanBuffer*>>* restores) const;
  // Records `r` into `cmd` (fills, copies, then a barrier); nothing when it is empty.
  static void record_resets(
      VkCommandBuffer cmd, const LaunchResets& r,
      const std::vector<std::pair<const VulkanBuffer*, const VulkanBuffer*>>& restores);

  // The following require queue_mu_.
  Result<VkCommandBuffer> begin_locked();
  // Ends and submits `s.cmd`; `s` joins the in-flight list (its resources are freed when its
  // fence has signalled). Returns the fence.
  Result<VkFence> submit_locked(Submission s);
  Status wait_fence_locked(VkFence fence, double timeout_ms, std::string_view what);
  Status wait_all_locked(double timeout_ms);
  void retire_completed_locked();
  void free_submission_locked(Submission& s) noexcept;
  Result<VkDescriptorSet> make_descriptor_set_locked(const VulkanKernel& k, const BoundArgs& a,
                                                     Submission* s);
  void record_dispatch_locked(VkCommandBuffer cmd, const VulkanKernel& k, VkDescriptorSet set,
                              const BoundArgs& a, const Dim3& grid);
  Status ensure_scratch_locked();

  OpenedDevice opened_;
  std::shared_ptr<ValidationLog> validation_log_;
  DeviceInfo info_;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkPipelineCache pipeline_cache_ = VK_NULL_HANDLE;
  std::uint32_t device_memory_type_ = 0;
  std::uint32_t staging_memory_type_ = 0;
  bool device_memory_mappable_ = false;
  std::uint64_t max_buffer_bytes_ = 0;
  std::uint64_t flush_bytes_ = 0;
  shaderc_env_version target_env_ = shaderc_env_version_vulkan_1_1;
  // The SPIR-V producers and their settings: the first lines of every SPIR-V cache key.
  std::string spirv_toolchain_;

  // Disk caches; null when TUNE_CACHE=off or no cache directory can be named.
  std::shared_ptr<BinaryCache> spirv_disk_;
  std::shared_ptr<BinaryCache> pipeline_disk_;
  std::string pipeline_key_;                 // this physical device's pipeline-cache key
  std::uint64_t pipeline_loaded_bytes_ = 0;  // initial data the VkPipelineCache accepted
  std::uint64_t pipeline_loaded_hash_ = 0;   // stable_hash of it (unchanged: no write-back)
  std::atomic<std::uint64_t> pipelines_created_{0};

  mutable std::mutex queue_mu_;
  std::vector<Submission> inflight_;
  RawBuffer scratch_;
  std::atomic<bool> lost_{false};

  struct CachedSpirv {
    std::vector<std::uint32_t> words;
    SpirvInfo info;
    std::string log;         // warnings
    bool from_disk = false;  // read from spirv_disk_ rather than compiled by this process
  };
  mutable std::mutex compile_mu_;
  shaderc::Compiler compiler_;
  std::map<std::string, std::shared_ptr<const CachedSpirv>> spirv_cache_;
  std::uint64_t shaderc_compiles_ = 0;
  std::uint64_t spirv_disk_hits_ = 0;
};

// Stable names used in DeviceInfo and listings.
std::string vendor_name(std::uint32_t vendor_id);
std::string device_type_name(VkPhysicalDeviceType t);

}  // namespace tune::vk
