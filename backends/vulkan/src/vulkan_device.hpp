// VulkanDevice: tune::Device on one Vulkan physical device (internal header).
//
// The device composes objects that each do one job: Instance (vk_instance.hpp: the VkInstance
// and validation messenger), device facts (device_facts.hpp: DeviceInfo, memory types, flush
// size), ShaderCompiler (shader_compiler.hpp: GLSL -> SPIR-V and its caches), PipelineCache
// (pipeline_cache.hpp: the VkPipelineCache and its file), owned handles (vk_handles.hpp),
// argument binding (argument_binding.hpp), DeviceMemory (device_memory.hpp: buffers),
// SubmissionQueue (submission_queue.hpp: command buffers, fences, what is in flight),
// ComputePipeline (compute_pipeline.hpp: a kernel's layouts and pipeline) and descriptor sets
// (descriptor_sets.hpp: per submission, and RecordedSets for application command buffers).
// What remains here: the Device verbs over them, launch and timing.
//
// Ownership: a VulkanDevice owns its VkDevice, one compute queue, a command pool, the
// pipeline cache, the shader compiler and the L2-flush scratch buffer, and keeps its Instance
// alive. Opened on an application's device (vulkan::ExternalDevice, tune/vulkan_interop.hpp)
// it owns the same objects except the instance, the VkDevice and the queue, which it borrows
// and never destroys or waits idle on. Buffers and kernels it returns hold a raw pointer back to it
// and must be destroyed before it (device.hpp's contract). Thread safety: queue_mu_ serialises
// everything that records or submits command buffers and the list of in-flight submissions; the
// shader compiler has its own lock; pipeline creation runs unlocked (VkPipelineCache is internally
// synchronised). Blocking: launch(), fill() and copy() submit and return; upload() and download()
// wait for their own copy; time() and synchronize() wait for everything they submitted.
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "argument_binding.hpp"
#include "comparison_shader.hpp"
#include "descriptor_sets.hpp"
#include "device_facts.hpp"
#include "device_memory.hpp"
#include "pipeline_cache.hpp"
#include "shader_compiler.hpp"
#include "specialization.hpp"
#include "spirv_reflect.hpp"
#include "submission_queue.hpp"
#include "tune/backend/binary_cache.hpp"
#include "tune/backend/comparison_kernel.hpp"
#include "tune/device.hpp"
#include "tune/vulkan.hpp"
#include "vk_handles.hpp"
#include "vk_instance.hpp"

namespace tune::vk {

// The public names (tune/vulkan.hpp) under the names this backend's sources use.
using VulkanDiagnostics = vulkan::Diagnostics;
using VulkanOpenOptions = vulkan::OpenOptions;

class VulkanDevice;

class VulkanBuffer final : public DeviceBuffer {
 public:
  // A buffer of libtune's (owned: freed here), or the range [offset, offset + raw.size) of an
  // application's VkBuffer (not owned: raw.memory is null and nothing is freed).
  VulkanBuffer(VulkanDevice* owner, RawBuffer raw, VkDeviceSize offset = 0, bool owned = true)
      : owner_(owner), raw_(raw), offset_(offset), owned_(owned) {}
  // Waits for libtune's device work that may still use the buffer, forgets the descriptor
  // sets recorded with it, and frees it when owned.
  ~VulkanBuffer() override;
  VulkanBuffer(const VulkanBuffer&) = delete;
  VulkanBuffer& operator=(const VulkanBuffer&) = delete;

  std::uint64_t size_bytes() const noexcept override { return raw_.size; }
  const RawBuffer& raw() const noexcept { return raw_; }
  // Where the buffer's bytes start in raw().buffer.
  VkDeviceSize base() const noexcept { return offset_; }
  const VulkanDevice* owner() const noexcept { return owner_; }

 private:
  VulkanDevice* owner_;
  RawBuffer raw_;
  VkDeviceSize offset_ = 0;
  bool owned_ = true;
};

class VulkanKernel final : public CompiledKernel {
 public:
  VulkanKernel(VulkanDevice* owner, SpirvInfo info, Dim3 block, bool from_cache,
               DescriptorSetLayout set_layout, PipelineLayout layout, Pipeline pipeline,
               std::string log, KernelResources resources);
  // Waits for device work that may still use the pipeline, then destroys it.
  ~VulkanKernel() override;
  VulkanKernel(const VulkanKernel&) = delete;
  VulkanKernel& operator=(const VulkanKernel&) = delete;

  const VulkanDevice* owner() const noexcept { return owner_; }
  const SpirvInfo& spirv() const noexcept { return info_; }
  const Dim3& block() const noexcept { return block_; }
  VkDescriptorSetLayout set_layout() const noexcept { return set_layout_.get(); }
  VkPipelineLayout layout() const noexcept { return layout_.get(); }
  VkPipeline pipeline() const noexcept { return pipeline_.get(); }
  // The ShaderCompiler key of the module it was built from (VulkanDevice::evict_binary).
  const std::string& cache_key() const noexcept { return cache_key_; }
  void set_cache_key(std::string key) { cache_key_ = std::move(key); }

 private:
  VulkanDevice* owner_;
  SpirvInfo info_;
  Dim3 block_;
  std::string cache_key_;
  // Destroyed in reverse order: the pipeline first.
  DescriptorSetLayout set_layout_;
  PipelineLayout layout_;
  Pipeline pipeline_;
};

// Everything vulkan::open_device hands over to the device it builds.
struct OpenedDevice {
  std::shared_ptr<Instance> instance;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  DeviceCaps caps;
  // An application's device and queue (caps.queue_family's), borrowed; null: create our own.
  VkDevice external_device = VK_NULL_HANDLE;
  VkQueue external_queue = VK_NULL_HANDLE;
  QueueLock queue_lock;
};

class VulkanDevice final : public Device {
 public:
  // Creates the logical device and queue on `opened.physical`.
  static Result<std::unique_ptr<VulkanDevice>> create(OpenedDevice opened);
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
  bool evict_binary(const CompiledKernel& kernel, std::string_view why) override;
  Status launch(const CompiledKernel& kernel, const LaunchDims& dims, ArgList args) override;
  Result<std::vector<double>> time(const CompiledKernel& kernel, const LaunchDims& dims,
                                   ArgList args, const TimingPlan& plan) override;
  // On the device: comparison_shader.hpp's kernel, 16 bytes read back.
  Result<Comparison> compare(const DeviceBuffer& actual, const DeviceBuffer& expected,
                             const CompareSpec& spec) override;
  Status synchronize() override;
  // LaunchTarget::command_buffer: records the dispatch into the application's command buffer
  // (tune/vulkan_interop.hpp says what is recorded and how long its descriptor set lives).
  Status launch_on(const CompiledKernel& kernel, const LaunchDims& dims, ArgList args,
                   const LaunchTarget& target) override;
  // A command buffer runs only when the application submits it, after these calls return:
  // nothing to order (see "The queue rule" in tune/vulkan_interop.hpp). A stream is refused.
  Status queue_waits_for(const LaunchTarget& target) override;
  Status target_waits_for_queue(const LaunchTarget& target) override;

  // An application's buffer range as a tune::Buffer (vulkan::wrap_buffer).
  Result<Buffer> wrap(VkBuffer buffer, VkDeviceSize offset, VkDeviceSize range);
  VkQueue queue_handle() const noexcept { return queue_->queue(); }
  bool external() const noexcept { return opened_.external_device != VK_NULL_HANDLE; }

  VulkanDiagnostics diagnostics() const;

  // Used by VulkanBuffer / VulkanKernel destructors.
  void wait_before_destroy() noexcept;
  void destroy_raw(RawBuffer& raw) noexcept;
  // Drops the recorded descriptor sets of a kernel (null: any) that name a buffer (null: any).
  void forget_recorded_sets(const VulkanKernel* kernel, VkBuffer buffer) noexcept;
  VkDevice vk() const noexcept { return handle_; }

 private:
  explicit VulkanDevice(OpenedDevice opened);
  Status init();
  Status create_logical_device();
  // compile()'s steps: what the request asks of the device (then check_spirv,
  // compute_pipeline.hpp: what the SPIR-V needs of it), and the kernel over its pipeline.
  Status check_request(const KernelSource& source, const Config& config, Dim3* block) const;
  // `cached`: the SPIR-V came from a cache, not from shaderc (CompiledKernel::from_binary_cache).
  // `subgroup_size`: LaunchOptions::subgroup_size, already checked (0: the driver's choice).
  // `spec`: its specialization constants (make_specialization).
  Result<std::unique_ptr<CompiledKernel>> create_kernel(const ShaderCompiler::Spirv& spirv,
                                                        Specialization& spec, const Dim3& block,
                                                        std::uint32_t subgroup_size, bool cached);

  Result<const VulkanBuffer*> own_buffer(const DeviceBuffer& b, std::string_view what) const;
  Result<const VulkanKernel*> own_kernel(const CompiledKernel& k) const;
  // The launch geometry checked against the kernel and the device, then the arguments bound
  // (argument_binding.hpp) with this device's buffers.
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

  static void record_dispatch(VkCommandBuffer cmd, const VulkanKernel& k, VkDescriptorSet set,
                              const BoundArgs& a, const Dim3& grid);
  // The following require queue_mu_.
  Status ensure_scratch_locked();
  // One time() call's fixed parts, shared by its batches.
  struct TimingJob {
    const VulkanKernel* kernel;
    const LaunchDims* dims;
    BoundArgs bound;
    const TimingPlan* plan;
    std::vector<std::pair<const VulkanBuffer*, const VulkanBuffer*>> restores;
    bool flush;  // the scratch buffer is filled before each rep
  };
  // Reps [first, first + n) of `job` in one command buffer: recorded, submitted, waited for,
  // their samples appended.
  Status time_batch_locked(const TimingJob& job, int first, int n, std::vector<double>* samples);
  Status record_batch_locked(const TimingJob& job, int first, int n, Submission* s);
  // The durations in `queries` (n start/end pairs), masked to timestampValidBits, in ns.
  Status read_timestamps(VkQueryPool queries, int n, std::vector<double>* samples);

  // Destroyed in reverse order: everything that uses the VkDevice before it, the instance last.
  OpenedDevice opened_;
  DeviceInfo info_;
  MemoryPlan plan_;
  LogicalDevice device_;              // empty on an application's device
  VkDevice handle_ = VK_NULL_HANDLE;  // device_'s or the application's
  std::unique_ptr<DeviceMemory> buffers_;
  std::unique_ptr<SubmissionQueue> queue_;
  std::unique_ptr<PipelineCache> pipelines_;
  std::unique_ptr<ShaderCompiler> shaders_;

  mutable std::mutex queue_mu_;  // guards queue_ and scratch_, and orders device work
  RawBuffer scratch_;

  // Descriptor sets of dispatches recorded into application command buffers.
  RecordedSets recorded_sets_;

  // Last: its compiled variants go before everything they use (reset first in the destructor).
  ComparisonKernel comparison_{KernelSource{Language::glsl, "main", kComparisonShader}};
};

}  // namespace tune::vk
