#include "vulkan_device.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string_view>
#include <typeinfo>
#include <utility>

#include "argument_binding.hpp"
#include "compute_pipeline.hpp"
#include "logical_device.hpp"
#include "recorded_memo.hpp"
#include "spirv_capabilities.hpp"
#include "tune/backend/hash.hpp"
#include "tune/backend/subgroup_size.hpp"
#include "tune/definitions.hpp"
#include "tune/log.hpp"
#include "vk_status.hpp"

namespace tune::vk {
namespace {

// Upload/download staging chunk: bounds host memory for large transfers.
constexpr std::uint64_t kStagingChunk = 64ull << 20;

}  // namespace

// ---------------------------------------------------------------------------------------------
// Buffers and kernels

// Recorded descriptor sets naming the VkBuffer go too: a later buffer may reuse its handle.
VulkanBuffer::~VulkanBuffer() {
  owner_->wait_before_destroy();
  owner_->forget_recorded_sets(nullptr, raw_.buffer);
  if (owned_) owner_->destroy_raw(raw_);
}

VulkanKernel::VulkanKernel(VulkanDevice* owner, SpirvInfo info, Dim3 block, bool from_cache,
                           DescriptorSetLayout set_layout, PipelineLayout layout, Pipeline pipeline,
                           std::string log, KernelResources resources)
    : owner_(owner),
      info_(std::move(info)),
      block_(block),
      set_layout_(std::move(set_layout)),
      layout_(std::move(layout)),
      pipeline_(std::move(pipeline)) {
  log_ = std::move(log);
  resources_ = resources;
  from_binary_cache_ = from_cache;
}

// The handles go after the body, once the device no longer uses them.
VulkanKernel::~VulkanKernel() {
  owner_->wait_before_destroy();
  owner_->forget_recorded_sets(this, VK_NULL_HANDLE);
}

// ---------------------------------------------------------------------------------------------
// Creation

VulkanDevice::VulkanDevice(OpenedDevice opened) : opened_(std::move(opened)) {}

Result<std::unique_ptr<VulkanDevice>> VulkanDevice::create(OpenedDevice opened) {
  std::unique_ptr<VulkanDevice> dev(new VulkanDevice(std::move(opened)));
  Status s = dev->init();
  if (!s.ok()) return s;  // the members release whatever init() created
  return dev;
}

Status VulkanDevice::create_logical_device() {
  TUNE_VK_RETURN_IF_ERROR(create_vk_device(opened_.physical, opened_.caps, device_.receive()),
                          "vkCreateDevice");
  return Status::ok_status();
}

Status VulkanDevice::init() {
  auto plan = plan_memory(opened_.caps);
  if (!plan.ok()) return plan.status();
  plan_ = *plan;
  if (external()) {
    handle_ = opened_.external_device;
  } else {
    TUNE_RETURN_IF_ERROR(create_logical_device());
    handle_ = device_.get();
  }
  buffers_ = std::make_unique<DeviceMemory>(vk(), plan_);
  auto queue = SubmissionQueue::create(vk(), opened_.caps.queue_family, *buffers_,
                                       opened_.external_queue, opened_.queue_lock);
  if (!queue.ok()) return queue.status();
  queue_ = std::move(*queue);
  auto pipelines = PipelineCache::open(vk(), opened_.caps);
  if (!pipelines.ok()) return pipelines.status();
  pipelines_ = std::move(*pipelines);
  shaders_ =
      std::make_unique<ShaderCompiler>(opened_.caps.props.apiVersion, opened_.caps.maintenance4);
  if (!shaders_->valid()) return Status(StatusCode::internal, "shaderc failed to initialise");
  info_ = device_info(opened_.caps, shaders_->version());
  return Status::ok_status();
}

// Submissions and scratch go first; the members then go in reverse order of declaration.
// On an application's device only libtune's own submissions are waited for: never
// vkDeviceWaitIdle, which would also need every one of the application's queues.
VulkanDevice::~VulkanDevice() {
  comparison_.release();
  // A RecordedMemo may name this device: a later device at the same address must not match.
  recorded_generation.fetch_add(1, std::memory_order_acq_rel);
  if (!vk()) return;
  if (external()) {
    if (queue_) {
      std::lock_guard<std::mutex> lock(queue_mu_);
      Status s = queue_->wait_all(kSyncTimeoutMs);
      if (!s.ok())
        log_warning("vulkan: closing a device with work still running: " + s.to_string());
    }
  } else {
    vkDeviceWaitIdle(vk());
  }
  std::lock_guard<std::mutex> lock(queue_mu_);
  queue_.reset();
  if (buffers_) buffers_->destroy(scratch_);
}

VulkanDiagnostics VulkanDevice::diagnostics() const {
  VulkanDiagnostics d;
  const Instance& inst = *opened_.instance;
  d.validation_enabled = inst.validation();
  {
    std::lock_guard<std::mutex> lock(inst.log().mu);
    d.validation_errors = inst.log().errors;
    d.validation_warnings = inst.log().warnings;
    d.messages = inst.log().messages;
  }
  const DeviceCaps& c = opened_.caps;
  d.timestamp_valid_bits = c.timestamp_valid_bits;
  d.api_version = c.props.apiVersion;
  d.vendor_id = c.props.vendorID;
  d.device_id = c.props.deviceID;
  d.device_type = device_type_name(c.props.deviceType);
  d.flush_bytes = plan_.flush_bytes;
  d.max_buffer_bytes = plan_.max_buffer_bytes;
  d.max_push_constant_bytes = c.props.limits.maxPushConstantsSize;
  d.storage_buffer_16bit = c.storage16;
  d.subgroup_arithmetic = supports_capability(c, spv_cap::kGroupNonUniformArithmetic);
  d.pipeline_cache_file = pipelines_->file();
  d.disk_cache_writable = pipelines_->writable();
  d.pipeline_cache_loaded_bytes = pipelines_->loaded_bytes();
  const ShaderCompiler::Stats st = shaders_->stats();
  d.spirv_cache_dir = st.disk_dir;
  d.spirv_cache_entries = st.entries;
  d.shaderc_compiles = st.shaderc_compiles;
  d.spirv_disk_hits = st.disk_hits;
  return d;
}

Status VulkanDevice::check_usable() const {
  if (queue_->lost())
    return Status(StatusCode::device_lost,
                  "the Vulkan device was lost (VK_ERROR_DEVICE_LOST) earlier; reopen it");
  return Status::ok_status();
}

// ---------------------------------------------------------------------------------------------
// Memory

void VulkanDevice::destroy_raw(RawBuffer& raw) noexcept { buffers_->destroy(raw); }

void VulkanDevice::wait_before_destroy() noexcept {
  std::lock_guard<std::mutex> lock(queue_mu_);
  Status s = queue_->wait_all(kSyncTimeoutMs);
  if (!s.ok() && s.code() != StatusCode::device_lost) {
    log_warning("vulkan: destroying an object while device work may still use it: " +
                s.to_string());
  }
}

Result<Buffer> VulkanDevice::alloc(std::uint64_t bytes) {
  TUNE_RETURN_IF_ERROR(check_usable());
  if (bytes == 0) return Status(StatusCode::invalid_argument, "alloc: zero bytes");
  if (bytes > plan_.max_buffer_bytes) {
    return Status(StatusCode::out_of_resources,
                  "alloc: " + std::to_string(bytes) + " bytes exceeds the largest buffer this " +
                      "device can bind (" + std::to_string(plan_.max_buffer_bytes) +
                      " bytes: min of maxStorageBufferRange, maxMemoryAllocationSize, heap)");
  }
  // Round up to 4 so vkCmdFillBuffer can always cover the whole buffer.
  auto raw = buffers_->create((bytes + 3) & ~std::uint64_t{3}, false);
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
    TUNE_RETURN_IF_ERROR(queue_->wait_all(kSyncTimeoutMs));
    std::memcpy(static_cast<char*>(raw.mapped) + offset, src, bytes);
    return Status::ok_status();
  }
  for (std::uint64_t done = 0; done < bytes;) {
    const std::uint64_t n = std::min(kStagingChunk, bytes - done);
    auto staging = buffers_->create(n, true);
    if (!staging.ok()) return staging.status();
    std::memcpy(staging->mapped, static_cast<const char*>(src) + done, n);
    auto cmd = queue_->begin();
    if (!cmd.ok()) {
      buffers_->destroy(*staging);
      return cmd.status();
    }
    VkBufferCopy region{0, (*b)->base() + offset + done, n};
    vkCmdCopyBuffer(*cmd, staging->buffer, raw.buffer, 1, &region);
    Submission s;
    s.cmd = *cmd;
    s.staging.push_back(*staging);
    auto fence = queue_->submit(std::move(s));
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
    TUNE_RETURN_IF_ERROR(queue_->wait_all(kSyncTimeoutMs));
    std::memcpy(dst, static_cast<const char*>(raw.mapped) + offset, bytes);
    return Status::ok_status();
  }
  for (std::uint64_t done = 0; done < bytes;) {
    const std::uint64_t n = std::min(kStagingChunk, bytes - done);
    auto staging = buffers_->create(n, true);
    if (!staging.ok()) return staging.status();
    RawBuffer stage = *staging;
    auto cmd = queue_->begin();
    if (!cmd.ok()) {
      buffers_->destroy(stage);
      return cmd.status();
    }
    VkBufferCopy region{(*b)->base() + offset + done, 0, n};
    vkCmdCopyBuffer(*cmd, raw.buffer, stage.buffer, 1, &region);
    Submission s;
    s.cmd = *cmd;
    s.staging.push_back(stage);  // freed on retire, after the memcpy below
    auto fence = queue_->submit(std::move(s));
    if (!fence.ok()) return fence.status();
    TUNE_RETURN_IF_ERROR(queue_->wait_fence(*fence, kSyncTimeoutMs, "download"));
    std::memcpy(static_cast<char*>(dst) + done, stage.mapped, n);
    queue_->retire_completed();
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
  auto cmd = queue_->begin();
  if (!cmd.ok()) return cmd.status();
  vkCmdFillBuffer(*cmd, (*b)->raw().buffer, (*b)->base() + offset, bytes, pattern);
  Submission s;
  s.cmd = *cmd;
  auto fence = queue_->submit(std::move(s));
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
  auto cmd = queue_->begin();
  if (!cmd.ok()) return cmd.status();
  VkBufferCopy region{(*s_)->base(), (*d)->base(), bytes};
  vkCmdCopyBuffer(*cmd, (*s_)->raw().buffer, (*d)->raw().buffer, 1, &region);
  Submission s;
  s.cmd = *cmd;
  auto fence = queue_->submit(std::move(s));
  return fence.ok() ? Status::ok_status() : fence.status();
}

Result<Comparison> VulkanDevice::compare(const DeviceBuffer& actual, const DeviceBuffer& expected,
                                         const CompareSpec& spec) {
  return comparison_.compare(*this, actual, expected, spec);
}

Status VulkanDevice::synchronize() {
  std::lock_guard<std::mutex> lock(queue_mu_);
  TUNE_RETURN_IF_ERROR(check_usable());
  return queue_->wait_all(kSyncTimeoutMs);
}

// ---------------------------------------------------------------------------------------------
// Scratch

Status VulkanDevice::ensure_scratch_locked() {
  if (scratch_.buffer != VK_NULL_HANDLE || plan_.flush_bytes == 0) return Status::ok_status();
  auto raw = buffers_->create(plan_.flush_bytes, false);
  if (!raw.ok()) return raw.status();
  scratch_ = *raw;
  return Status::ok_status();
}

// ---------------------------------------------------------------------------------------------
// Compilation

Result<std::unique_ptr<CompiledKernel>> VulkanDevice::compile(const KernelSource& source,
                                                              const Config& config) {
  TUNE_RETURN_IF_ERROR(check_usable());
  Dim3 block;
  TUNE_RETURN_IF_ERROR(check_request(source, config, &block));
  // The variant's definitions (tune::definitions, the same list as on every backend): a GLSL
  // source's macros, or a precompiled module's named specialization constants; the workgroup
  // size goes in as specialization constants too, at pipeline creation (specialization.hpp).
  auto macros = definitions(config, source);
  if (!macros.ok()) return macros.status();
  bool cached = false;
  ShaderCompiler::ModuleCheck fits;
  if (!source.signature.decls().empty())
    fits = [&](const SpirvInfo& si) { return interface_mismatch(si, source.signature); };
  auto spirv = shaders_->compile(source, *macros, &cached, fits);
  if (!spirv.ok()) return spirv.status();
  TUNE_RETURN_IF_ERROR(check_spirv((*spirv)->info, block, opened_.caps, info_.name));
  auto spec = make_specialization((*spirv)->info, block, *macros, !source.spirv.empty());
  if (!spec.ok()) return spec.status();
  return create_kernel(**spirv, *spec, block, config.launch().subgroup_size, cached);
}

Status VulkanDevice::check_request(const KernelSource& source, const Config& config,
                                   Dim3* block) const {
  if (source.language != Language::glsl) {
    return Status(StatusCode::invalid_argument, "the Vulkan backend compiles GLSL, not " +
                                                    std::string(to_string(source.language)));
  }
  if (!source.entry.empty() && source.entry != "main") {
    return Status(StatusCode::invalid_argument,
                  "GLSL compute shaders have entry point 'main', not '" + source.entry + "'");
  }
  const auto& l = opened_.caps.props.limits;
  *block = normalized_block(config.launch().block);
  const Dim3& b = *block;
  if (b.any_set() &&
      (b.x > l.maxComputeWorkGroupSize[0] || b.y > l.maxComputeWorkGroupSize[1] ||
       b.z > l.maxComputeWorkGroupSize[2] || b.product() > l.maxComputeWorkGroupInvocations)) {
    return Status(StatusCode::out_of_resources,
                  "workgroup " + to_string(b) + " exceeds the device limits (" +
                      "maxComputeWorkGroupSize " + to_string(info_.max_block) +
                      ", maxComputeWorkGroupInvocations " +
                      std::to_string(l.maxComputeWorkGroupInvocations) + ")");
  }
  if (config.launch().shared_bytes != 0) {
    return Status(StatusCode::invalid_argument,
                  "Vulkan has no dynamic shared memory: declare shared arrays in the shader");
  }
  return check_subgroup_size(config.launch().subgroup_size, info_);
}

Result<std::unique_ptr<CompiledKernel>> VulkanDevice::create_kernel(
    const ShaderCompiler::Spirv& spirv, Specialization& spec, const Dim3& block,
    std::uint32_t subgroup_size, bool cached) {
  const SpirvInfo& si = spirv.info;
  bool lost = false;
  auto objects =
      create_compute_pipeline(vk(), pipelines_->handle(), spirv, spec, subgroup_size, &lost);
  if (!objects.ok()) {
    if (lost) queue_->mark_lost();
    return objects.status();
  }
  pipelines_->created();

  KernelResources res;
  res.shared_bytes = static_cast<std::uint32_t>(si.shared_bytes);
  const Dim3 compiled_block = block.any_set() ? block : module_block(si, spec);
  res.max_threads = static_cast<std::uint32_t>(compiled_block.product());
  // A note for people reading the log; programs read from_binary_cache().
  std::string log = spirv.from_disk ? "(binary from the spirv cache)\n" + spirv.log : spirv.log;
  auto kernel = std::make_unique<VulkanKernel>(
      this, si, compiled_block, cached, std::move(objects->set_layout), std::move(objects->layout),
      std::move(objects->pipeline), std::move(log), res);
  kernel->set_cache_key(spirv.key);
  return std::unique_ptr<CompiledKernel>(std::move(kernel));
}

bool VulkanDevice::evict_binary(const CompiledKernel& kernel, std::string_view why) {
  auto k = own_kernel(kernel);
  if (!k.ok() || (*k)->cache_key().empty()) return false;
  return shaders_->evict((*k)->cache_key(), why);
}

// ---------------------------------------------------------------------------------------------
// Launch and timing

Result<const VulkanKernel*> VulkanDevice::own_kernel(const CompiledKernel& k) const {
  // typeid comparison instead of dynamic_cast (VulkanKernel is final): this runs on every
  // launch and recording, the cache-hit path included.
  if (typeid(k) != typeid(VulkanKernel) || static_cast<const VulkanKernel&>(k).owner() != this)
    return Status(StatusCode::invalid_argument, "the kernel was not compiled by this device");
  return static_cast<const VulkanKernel*>(&k);
}

Status VulkanDevice::bind_args(const VulkanKernel& k, const LaunchDims& dims, ArgList args,
                               BoundArgs* out) const {
  const auto& l = opened_.caps.props.limits;
  const Dim3 block = normalized_block(dims.block);
  if (block.any_set() && block != k.block()) {
    return Status(StatusCode::invalid_argument, "launch block " + to_string(block) +
                                                    " differs from the compiled workgroup " +
                                                    to_string(k.block()));
  }
  if (dims.shared_bytes != 0) {
    return Status(StatusCode::invalid_argument,
                  "Vulkan has no dynamic shared memory (LaunchDims::shared_bytes must be 0)");
  }
  if (dims.cluster != Dim3{}) {
    return Status(StatusCode::invalid_argument,
                  "Vulkan has no thread-block clusters (LaunchDims::cluster " +
                      to_string(dims.cluster) + " must be 1x1x1)");
  }
  for (int d = 0; d < 3; ++d) {
    const std::uint32_t g = d == 0 ? dims.grid.x : d == 1 ? dims.grid.y : dims.grid.z;
    if (g > l.maxComputeWorkGroupCount[d]) {
      return Status(StatusCode::out_of_resources, "grid " + to_string(dims.grid) +
                                                      " exceeds maxComputeWorkGroupCount " +
                                                      to_string(info_.max_grid));
    }
  }

  return bind_arguments(
      k.spirv(), args,
      [this](const DeviceBuffer& b) -> std::optional<VkDescriptorBufferInfo> {
        auto vb = own_buffer(b, "argument");  // the binder names the argument on failure
        if (!vb.ok()) return std::nullopt;
        return VkDescriptorBufferInfo{(*vb)->raw().buffer, (*vb)->base(), (*vb)->size_bytes()};
      },
      out);
}

void VulkanDevice::record_dispatch(VkCommandBuffer cmd, const VulkanKernel& k, VkDescriptorSet set,
                                   const BoundArgs& a, const Dim3& grid) {
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
  auto cmd = queue_->begin();
  if (!cmd.ok()) return cmd.status();
  Submission s;
  s.cmd = *cmd;
  auto set = make_descriptor_set(vk(), (*k)->set_layout(), bound, &s.descriptors);
  if (!set.ok()) {
    queue_->release(s);
    return set.status();
  }
  record_dispatch(*cmd, **k, *set, bound, dims.grid);
  auto fence = queue_->submit(std::move(s));
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
    const auto* vb = static_cast<const VulkanBuffer*>(b);
    if (bytes != 0) vkCmdFillBuffer(cmd, vb->raw().buffer, vb->base(), bytes, 0);
  }
  for (const auto& [dst, src] : restores) {
    if (dst == src) continue;
    VkBufferCopy region{src->base(), dst->base(), dst->size_bytes()};
    vkCmdCopyBuffer(cmd, src->raw().buffer, dst->raw().buffer, 1, &region);
  }
  all_commands_barrier(cmd);  // the launch (or the flush) sees the buffers put back
}

Result<std::vector<double>> VulkanDevice::time(const CompiledKernel& kernel, const LaunchDims& dims,
                                               ArgList args, const TimingPlan& plan) {
  if (plan.reps <= 0) return Status(StatusCode::invalid_argument, "time: reps must be positive");
  auto k = own_kernel(kernel);
  if (!k.ok()) return k.status();
  TimingJob job{*k, &dims, {}, &plan, {}, false};
  TUNE_RETURN_IF_ERROR(bind_args(**k, dims, args, &job.bound));
  TUNE_RETURN_IF_ERROR(own_resets(plan.resets, &job.restores));

  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(plan.reps));
  std::lock_guard<std::mutex> lock(queue_mu_);
  TUNE_RETURN_IF_ERROR(check_usable());
  if (plan.flush_l2) TUNE_RETURN_IF_ERROR(ensure_scratch_locked());
  job.flush = plan.flush_l2 && scratch_.buffer != VK_NULL_HANDLE;
  // All reps go in one command buffer (batches of up to 256 reps), resets included.
  constexpr int kBatchMax = 256;
  for (int done = 0; done < plan.reps;) {
    const int n = std::min(kBatchMax, plan.reps - done);
    TUNE_RETURN_IF_ERROR(time_batch_locked(job, done, n, &samples));
    done += n;
  }
  return samples;
}

Status VulkanDevice::time_batch_locked(const TimingJob& job, int first, int n,
                                       std::vector<double>* samples) {
  auto cmd = queue_->begin();
  if (!cmd.ok()) return cmd.status();
  Submission s;
  s.cmd = *cmd;
  Status recorded = record_batch_locked(job, first, n, &s);
  if (!recorded.ok()) {
    queue_->release(s);
    return recorded;
  }
  VkQueryPool queries = s.queries;
  auto fence = queue_->submit(std::move(s));
  if (!fence.ok()) return fence.status();
  // Each launch may take up to timeout_ms; fills and copies get a generous allowance on top.
  const bool extra = job.flush || !job.plan->resets.empty();
  const double budget = job.plan->timeout_ms * n + (extra ? 1000.0 + 10.0 * n : 0.0);
  Status ws = queue_->wait_fence(*fence, budget, "time");
  if (!ws.ok()) return ws;  // the submission stays in flight and is freed when it ends
  TUNE_RETURN_IF_ERROR(read_timestamps(queries, n, samples));
  queue_->retire_completed();
  return Status::ok_status();
}

Status VulkanDevice::record_batch_locked(const TimingJob& job, int first, int n, Submission* s) {
  auto qpi = vk_struct<VkQueryPoolCreateInfo>(VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO);
  qpi.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qpi.queryCount = static_cast<std::uint32_t>(2 * n);
  TUNE_VK_RETURN_IF_ERROR(vkCreateQueryPool(vk(), &qpi, nullptr, &s->queries), "vkCreateQueryPool");
  auto set = make_descriptor_set(vk(), job.kernel->set_layout(), job.bound, &s->descriptors);
  if (!set.ok()) return set.status();
  vkCmdResetQueryPool(s->cmd, s->queries, 0, qpi.queryCount);
  for (int i = 0; i < n; ++i) {
    record_resets(s->cmd, job.plan->resets, job.restores);
    if (job.flush) {
      // Overwrite an L2-sized scratch buffer, outside the timed span.
      vkCmdFillBuffer(s->cmd, scratch_.buffer, 0, scratch_.size,
                      static_cast<std::uint32_t>(first + i + 1));
      all_commands_barrier(s->cmd);
    }
    const auto q = static_cast<std::uint32_t>(2 * i);
    vkCmdWriteTimestamp(s->cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, s->queries, q);
    record_dispatch(s->cmd, *job.kernel, *set, job.bound, job.dims->grid);
    vkCmdWriteTimestamp(s->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, s->queries, q + 1);
    // The next rep (or fill) starts only after this dispatch has finished.
    all_commands_barrier(s->cmd);
  }
  return Status::ok_status();
}

Status VulkanDevice::read_timestamps(VkQueryPool queries, int n, std::vector<double>* samples) {
  const std::uint32_t valid_bits = opened_.caps.timestamp_valid_bits;
  const std::uint64_t mask =
      valid_bits >= 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << valid_bits) - 1);
  const double period = static_cast<double>(opened_.caps.props.limits.timestampPeriod);
  std::vector<std::uint64_t> ts(static_cast<std::size_t>(2 * n));
  VkResult r = vkGetQueryPoolResults(
      vk(), queries, 0, static_cast<std::uint32_t>(2 * n), ts.size() * sizeof(std::uint64_t),
      ts.data(), sizeof(std::uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
  if (r != VK_SUCCESS) {
    if (r == VK_ERROR_DEVICE_LOST) queue_->mark_lost();
    return make_error("vkGetQueryPoolResults", r);
  }
  for (int i = 0; i < n; ++i) {
    const std::uint64_t start = ts[2 * i] & mask, end = ts[2 * i + 1] & mask;
    // Modular difference handles a counter that wrapped within valid_bits.
    const std::uint64_t ticks = (end - start) & mask;
    samples->push_back(static_cast<double>(ticks) * period);
  }
  return Status::ok_status();
}

// ---------------------------------------------------------------------------------------------
// Interop: application buffers and command buffers

Result<Buffer> VulkanDevice::wrap(VkBuffer buffer, VkDeviceSize offset, VkDeviceSize range) {
  const auto& l = opened_.caps.props.limits;
  if (buffer == VK_NULL_HANDLE)
    return Status(StatusCode::invalid_argument, "wrap_buffer: null VkBuffer");
  if (range == 0 || range == VK_WHOLE_SIZE || range > l.maxStorageBufferRange) {
    return Status(StatusCode::invalid_argument,
                  "wrap_buffer: range " + std::to_string(range) +
                      " must be non-zero, explicit and at most maxStorageBufferRange (" +
                      std::to_string(l.maxStorageBufferRange) + ")");
  }
  const VkDeviceSize align = std::max<VkDeviceSize>(4, l.minStorageBufferOffsetAlignment);
  if (offset % align != 0 || offset % 4 != 0) {
    return Status(StatusCode::invalid_argument,
                  "wrap_buffer: offset " + std::to_string(offset) +
                      " must be a multiple of 4 and of minStorageBufferOffsetAlignment (" +
                      std::to_string(l.minStorageBufferOffsetAlignment) + ")");
  }
  RawBuffer raw;
  raw.buffer = buffer;
  raw.size = range;
  return Buffer(std::make_unique<VulkanBuffer>(this, raw, offset, /*owned=*/false));
}

void VulkanDevice::forget_recorded_sets(const VulkanKernel* kernel, VkBuffer buffer) noexcept {
  recorded_sets_.forget(kernel, buffer);
}

Status VulkanDevice::launch_on(const CompiledKernel& kernel, const LaunchDims& dims, ArgList args,
                               const LaunchTarget& target) {
  if (target.is_queue()) return launch(kernel, dims, args);
  if (target.kind != LaunchTarget::Kind::command_buffer) {
    return Status(StatusCode::unavailable,
                  "vulkan: cannot launch on a " + target.to_string() +
                      "; record into a command buffer (LaunchTarget::command_buffer)");
  }
  if (target.handle == nullptr)
    return Status(StatusCode::invalid_argument, "vulkan: null command buffer");
  auto k = own_kernel(kernel);
  if (!k.ok()) return k.status();
  TUNE_RETURN_IF_ERROR(check_usable());
  // This thread's last recording (recorded_memo.hpp): the same dispatch again binds nothing.
  // Its vectors keep their capacity, so a recorded hit allocates nothing
  // (tests/vulkan/vulkan_interop_test.cpp counts).
  thread_local RecordedMemo memo;
  if (!memo.matches(this, *k, dims, args)) {
    const std::uint64_t generation = recorded_generation.load(std::memory_order_acquire);
    memo.device = nullptr;  // stale until remembered again
    TUNE_RETURN_IF_ERROR(bind_args(**k, dims, args, &memo.bound));
    auto set = recorded_sets_.get(vk(), **k, (*k)->set_layout(), memo.bound);
    if (!set.ok()) return set.status();
    memo.remember(this, *k, generation, dims, args, *set);
  }
  auto cmd = static_cast<VkCommandBuffer>(target.handle);
  all_commands_barrier(cmd);  // sees what the command buffer recorded before
  record_dispatch(cmd, **k, memo.set, memo.bound, dims.grid);
  all_commands_barrier(cmd);  // what it records after sees the dispatch's writes
  return Status::ok_status();
}

namespace {
Status order_target(const LaunchTarget& target) {
  if (target.is_queue() || target.kind == LaunchTarget::Kind::command_buffer)
    return Status::ok_status();
  return Status(StatusCode::unavailable,
                "vulkan: cannot order against a " + target.to_string() +
                    "; record into a command buffer (LaunchTarget::command_buffer)");
}
}  // namespace

Status VulkanDevice::queue_waits_for(const LaunchTarget& target) { return order_target(target); }
Status VulkanDevice::target_waits_for_queue(const LaunchTarget& target) {
  return order_target(target);
}

}  // namespace tune::vk
