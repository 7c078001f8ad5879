// VulkanDevice: tune::Device on one Vulkan physical device (internal header).
//
// The device composes objects that each do one job: Instance (vk_instance.hpp: the VkInstance
// and validation messenger), device facts (device_facts.hpp: DeviceInfo, memory types, flush
// size), ShaderCompiler (shader_compiler.hpp: GLSL -> SPIR-V and its caches), PipelineCache
// (pipeline_cache.hpp: the VkPipelineCache and its file), owned handles (vk_handles.hpp),
// argument binding (argument_binding.hpp), DeviceMemory (device_memory.hpp: buffers) and
// SubmissionQueue (submission_queue.hpp: command buffers, fences, what is in flight).
// What remains here: the Device verbs over them, launch and timing.
//
// Ownership: a VulkanDevice owns its VkDevice, one compute queue, a command pool, the
// pipeline cache, the shader compiler and the L2-flush scratch buffer, and keeps its Instance
// alive. Buffers and kernels it returns hold a raw pointer back to it and must be destroyed
// before it (device.hpp's contract).
// Thread safety: queue_mu_ serialises everything that records or submits command buffers and
// the list of in-flight submissions; the shader compiler has its own lock; pipeline creation
// runs unlocked (VkPipelineCache is internally synchronised).
// Blocking: launch(), fill() and copy() submit and return; upload() and download() wait for
// their own copy; time() and synchronize() wait for everything they submitted.
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
#include "device_facts.hpp"
#include "device_memory.hpp"
#include "pipeline_cache.hpp"
#include "shader_compiler.hpp"
#include "spirv_reflect.hpp"
#include "submission_queue.hpp"
#include "tune/backend/binary_cache.hpp"
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

 private:
  VulkanDevice* owner_;
  SpirvInfo info_;
  Dim3 block_;
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
  Status launch(const CompiledKernel& kernel, const LaunchDims& dims, ArgList args) override;
  Result<std::vector<double>> time(const CompiledKernel& kernel, const LaunchDims& dims,
                                   ArgList args, const TimingPlan& plan) override;
  Status synchronize() override;

  VulkanDiagnostics diagnostics() const;

  // Used by VulkanBuffer / VulkanKernel destructors.
  void wait_before_destroy() noexcept;
  void destroy_raw(RawBuffer& raw) noexcept;
  VkDevice vk() const noexcept { return device_.get(); }

 private:
  explicit VulkanDevice(OpenedDevice opened);
  Status init();
  Status create_logical_device();
  // compile()'s steps: what the request asks of the device, what the SPIR-V needs of it, and
  // the pipeline objects.
  Status check_request(const KernelSource& source, const Config& config, Dim3* block) const;
  Status check_spirv(const SpirvInfo& si, const Dim3& block) const;
  Result<std::unique_ptr<CompiledKernel>> create_kernel(const ShaderCompiler::Spirv& spirv,
                                                        const Dim3& block);

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

  // The following require queue_mu_.
  Result<VkDescriptorSet> make_descriptor_set_locked(const VulkanKernel& k, const BoundArgs& a,
                                                     Submission* s);
  void record_dispatch_locked(VkCommandBuffer cmd, const VulkanKernel& k, VkDescriptorSet set,
                              const BoundArgs& a, const Dim3& grid);
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
  LogicalDevice device_;
  std::unique_ptr<DeviceMemory> buffers_;
  std::unique_ptr<SubmissionQueue> queue_;
  std::unique_ptr<PipelineCache> pipelines_;
  std::unique_ptr<ShaderCompiler> shaders_;

  mutable std::mutex queue_mu_;  // guards queue_ and scratch_, and orders device work
  RawBuffer scratch_;
};

}  // namespace tune::vk
