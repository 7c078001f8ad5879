// GpuDevice: the Device implementation shared by the CUDA and HIP backends, over a GpuApi
// (the vendor runtime) and an RtcCompiler (NVRTC / hiprtc).
//
// The device composes objects that each do one job: GpuStatus (gpu_status.hpp: failed calls
// named, the lost state), CurrentScope (current_scope.hpp: its context bound for one call),
// ModuleLoader (module_loader.hpp: a binary loaded, checked, fitted to the limits),
// TensorMaps (tensor_maps.hpp: a kernel's TMA maps), EventTimer (event_timer.hpp: timing
// events and the cache-flush buffer) and StreamInterop (stream_interop.hpp: the application's
// streams and memory). What remains here: the Device verbs over them, buffers, launch.
//
// Ownership: the device owns its adaptor, compiler, stream, events and cache-flush scratch
// buffer; buffers and kernels it returns hold a pointer back to it and must be destroyed first.
// Thread safety: compile() runs without the device lock (several threads may compile at once;
// module loading is thread-safe in both runtimes); every queue operation (copies, launches,
// timing) takes one lock, never re-entered: a TimingPlan's resets are stream operations
// recorded inside time(), not calls back into the device. A sticky error marks the device lost:
// later queue operations fail fast with device_lost; the context is never reset or destroyed
// (it is the application's, or the process's primary context, shared with the runtime API).
// The calling thread's current context (CUDA) or device (HIP) is the same after every call as
// before it: each call binds the device's context inside a CurrentScope only.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "comparison_source.hpp"
#include "current_scope.hpp"
#include "event_timer.hpp"
#include "gpu_api.hpp"
#include "gpu_status.hpp"
#include "module_loader.hpp"
#include "rtc.hpp"
#include "stream_interop.hpp"
#include "tensor_maps.hpp"
#include "tune/backend/comparison_kernel.hpp"
#include "tune/device.hpp"

namespace tune::gpu {

class GpuDevice;

class GpuBuffer final : public DeviceBuffer {
 public:
  // `owned`: freed by the destructor; else the application's memory (wrap_buffer), never freed.
  GpuBuffer(GpuDevice* owner, DevPtr ptr, std::uint64_t bytes, bool owned = true)
      : owner_(owner), ptr_(ptr), bytes_(bytes), owned_(owned) {}
  ~GpuBuffer() override;
  std::uint64_t size_bytes() const noexcept override { return bytes_; }
  DevPtr ptr() const noexcept { return ptr_; }
  const GpuDevice* owner() const noexcept { return owner_; }

 private:
  GpuDevice* owner_;
  DevPtr ptr_;
  std::uint64_t bytes_;
  bool owned_ = true;
};

class GpuKernel final : public CompiledKernel {
 public:
  // Takes over `module` (unloaded by the destructor, with the device's context current).
  GpuKernel(GpuDevice* owner, Handle module, Handle function, std::string name, bool from_cache,
            KernelResources resources, std::string log, std::uint32_t dynamic_shared_limit,
            std::vector<TensorMapSpec> tensor_maps);
  ~GpuKernel() override;
  Handle function() const noexcept { return function_; }
  const GpuDevice* owner() const noexcept { return owner_; }
  const std::string& name() const noexcept { return name_; }  // "entry{config}"
  // The binary cache key of its binary (GpuDevice::evict_binary); empty when none.
  const std::string& cache_key() const noexcept { return cache_key_; }
  // KernelSource::tensor_maps for this variant, and the last map encoded for each.
  const TensorMaps& tensor_maps() const noexcept { return tensor_maps_; }

 private:
  friend class GpuDevice;
  GpuDevice* owner_;
  Handle module_;
  Handle function_;
  std::string name_;
  std::string cache_key_;
  // Dynamic shared memory the function is currently allowed (raised on demand above 48 KiB).
  std::atomic<std::uint32_t> dynamic_shared_limit_;
  TensorMaps tensor_maps_;
};

class GpuDevice : public Device {
 public:
  // `info` must be complete (arch, limits, l2_bytes). Creates the stream; fails when that fails.
  // With `app_stream`, the device's queue is that stream of the application (borrowed, never
  // destroyed; nullptr inside is the legacy default stream) instead of a stream of its own.
  static Result<std::unique_ptr<GpuDevice>> make(std::unique_ptr<GpuApi> api,
                                                 std::shared_ptr<RtcCompiler> compiler,
                                                 std::shared_ptr<BinaryCache> cache,
                                                 DeviceInfo info,
                                                 std::optional<Handle> app_stream = {});
  ~GpuDevice() override;

  const DeviceInfo& info() const noexcept override { return info_; }
  Language language() const noexcept override { return Language::cuda_hip; }

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
  Status synchronize() override;
  // On the device: comparison_source.hpp's kernel, 16 bytes read back.
  Result<Comparison> compare(const DeviceBuffer& actual, const DeviceBuffer& expected,
                             const CompareSpec& spec) override;

  // Application streams (LaunchTarget::stream): a launch there takes no lock, allocates
  // nothing and never synchronises; ordering is one event recorded on one stream and waited
  // for by the other (events made on the miss path only). A command buffer is refused.
  Status launch_on(const CompiledKernel& kernel, const LaunchDims& dims, ArgList args,
                   const LaunchTarget& target) override;
  Result<bool> capturing(const LaunchTarget& target) override;
  Status queue_waits_for(const LaunchTarget& target) override;
  Status target_waits_for_queue(const LaunchTarget& target) override;
  // `bytes` of the application's memory at `ptr` as a Buffer that is never freed; checked to
  // lie inside one allocation the driver knows (invalid_argument otherwise).
  Result<Buffer> wrap(DevPtr ptr, std::uint64_t bytes);

  // The vendor stream every queue operation is ordered on (CUstream / hipStream_t).
  Handle stream() const noexcept { return stream_; }
  GpuApi& api() noexcept { return *api_; }
  // Names failed calls (sticky errors mark the device lost) and holds the lost state.
  GpuStatus& status() noexcept { return status_; }
  // This device's buffer behind `b`; invalid_argument naming `what` for any other buffer.
  Result<const GpuBuffer*> buffer_of(const DeviceBuffer& b, std::string_view what) const;

 private:
  GpuDevice(std::unique_ptr<GpuApi> api, std::shared_ptr<RtcCompiler> compiler,
            std::shared_ptr<BinaryCache> cache, DeviceInfo info);
  // buffer_of without the Status: this device's buffer behind `b`, or null. Inline and
  // allocation-free, for every buffer argument of every launch (buffer_of names a failure).
  const GpuBuffer* own_buffer(const DeviceBuffer& b) const noexcept {
    // typeid comparison instead of dynamic_cast: a pointer compare for the same type.
    if (typeid(b) != typeid(GpuBuffer)) return nullptr;
    const auto* g = static_cast<const GpuBuffer*>(&b);
    return g->owner() == this ? g : nullptr;
  }
  // compile() through the binary cache or past it: a cached binary whose parameters are not
  // the kernel's (KernelSource::signature, where the driver can tell) is evicted and compiled
  // again past the cache.
  Result<std::unique_ptr<CompiledKernel>> compile_variant(const KernelSource& source,
                                                          const Config& config, bool use_cache);
  // compile_variant's last stages on a loaded module: resources, limits, module globals, then
  // the kernel (which takes the module over).
  Result<std::unique_ptr<CompiledKernel>> make_kernel(const KernelSource& source,
                                                      const Config& config, RtcOutput& out,
                                                      LoadedModule& module,
                                                      std::vector<TensorMapSpec> tensor_maps,
                                                      const std::string& name);
  Result<const GpuKernel*> kernel_of(const CompiledKernel& k) const;
  // kernel_of without the Status, for the launch path (as own_buffer is to buffer_of).
  const GpuKernel* own_kernel(const CompiledKernel& k) const noexcept {
    if (typeid(k) != typeid(GpuKernel)) return nullptr;
    const auto* g = static_cast<const GpuKernel*>(&k);
    return g->owner() == this ? g : nullptr;
  }
  // Launch on `stream` without taking the lock (callers hold it for the device's own stream).
  // Validates dims against the variant.
  Status launch_locked(const GpuKernel& kernel, const LaunchDims& dims, ArgList args,
                       Handle stream);
  // launch_locked's stages: the geometry against the variant's and the device's limits (a
  // partly set block already normalised into `block`), the dynamic shared memory allowed
  // (raised on demand), the arguments packed as the driver takes them (`params[i]` points at
  // `storage[i]`), and the driver's launch of packed `params`, its failure named.
  Status check_geometry(const GpuKernel& kernel, const LaunchDims& dims, const Dim3& block) const;
  Status allow_dynamic_shared(const GpuKernel& kernel, std::uint32_t bytes);
  Status pack_arguments(const GpuKernel& kernel, ArgList args, std::uint64_t* storage,
                        void** params) const;
  Status driver_launch(const GpuKernel& kernel, const LaunchDims& dims, const Dim3& block,
                       Handle stream, void** params);
  // invalid_argument unless every buffer of `r` is this device's.
  Status check_resets(const LaunchResets& r) const;
  // Enqueues `r` on the stream (memset, device-to-device copies). Callers hold the lock.
  Status enqueue_resets_locked(const LaunchResets& r);

  std::unique_ptr<GpuApi> api_;
  std::shared_ptr<RtcCompiler> compiler_;
  std::shared_ptr<BinaryCache> cache_;
  DeviceInfo info_;
  GpuStatus status_;
  ModuleLoader loader_;
  StreamInterop interop_;
  Handle stream_ = nullptr;
  bool own_stream_ = true;  // false: the application's stream, never destroyed

  std::mutex queue_mutex_;  // guards everything below and stream order
  // Timing events and the cache-flush scratch buffer; reset by the destructor with the
  // context current, after the stream drained.
  std::unique_ptr<EventTimer> timer_;

  // Last: its compiled variants go before everything they use (reset first in the destructor).
  ComparisonKernel comparison_{KernelSource{Language::cuda_hip, "tune_compare", kComparisonSource}};
};

}  // namespace tune::gpu
