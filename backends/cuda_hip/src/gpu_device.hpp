// GpuDevice: the Device implementation shared by the CUDA and HIP backends, over a GpuApi
// (the vendor runtime) and an RtcCompiler (NVRTC / hiprtc).
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
#include "gpu_api.hpp"
#include "rtc.hpp"
#include "tune/backend/comparison_kernel.hpp"
#include "tune/device.hpp"
#include "tune/registry.hpp"

namespace tune::gpu {

class GpuDevice;

// The device's context current on the calling thread for one scope; the thread's previous one
// is put back when the scope ends (an application thread's binding is never changed behind its
// back). Nests: an inner scope finds the context current and does nothing. rc() is the vendor
// result of binding it (0: bound); on failure nothing is put back because nothing changed.
class CurrentScope {
 public:
  explicit CurrentScope(GpuApi& api) noexcept : api_(api), rc_(api.enter_current(&saved_)) {}
  ~CurrentScope() {
    if (rc_ == 0 && saved_.changed) api_.leave_current(saved_);
  }
  CurrentScope(const CurrentScope&) = delete;
  CurrentScope& operator=(const CurrentScope&) = delete;
  int rc() const noexcept { return rc_; }

 private:
  GpuApi& api_;
  SavedCurrent saved_;
  int rc_;
};

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

// One encoded TMA tensor map as a kernel parameter (CUtensorMap: 128 bytes, 64-byte aligned),
// with what it was encoded from.
struct EncodedTensorMap {
  alignas(64) std::uint64_t bytes[16] = {};
  DevPtr ptr = 0;
  std::uint64_t rows = 0, cols = 0;
  ElemType type = ElemType::u8;
  bool valid = false;
};

class GpuKernel final : public CompiledKernel {
 public:
  GpuKernel(GpuDevice* owner, Handle module, Handle function, std::string name, bool from_cache,
            KernelResources resources, std::string log, std::uint32_t dynamic_shared_limit,
            std::vector<TensorMapSpec> tensor_maps);
  ~GpuKernel() override;
  Handle function() const noexcept { return function_; }
  const GpuDevice* owner() const noexcept { return owner_; }
  const std::string& name() const noexcept { return name_; }  // "entry{config}"
  // The binary cache key of its binary (GpuDevice::evict_binary); empty when none.
  const std::string& cache_key() const noexcept { return cache_key_; }

 private:
  friend class GpuDevice;
  GpuDevice* owner_;
  Handle module_;
  Handle function_;
  std::string name_;
  std::string cache_key_;
  // Dynamic shared memory the function is currently allowed (raised on demand above 48 KiB).
  std::atomic<std::uint32_t> dynamic_shared_limit_;
  // KernelSource::tensor_maps for this variant, and the last map encoded for each: a launch on
  // the same buffer and sizes reuses it. The mutex guards `encoded_` (launches on application
  // streams run without the device's queue lock).
  std::vector<TensorMapSpec> tensor_maps_;
  mutable std::mutex maps_mutex_;
  mutable std::vector<EncodedTensorMap> encoded_;
};

// The vendor strings GpuDevice needs in messages.
struct GpuNames {
  const char* backend;  // "cuda"
  const char* flush;    // how the cache flush is done, for messages ("cuMemsetD8Async")
};

// Why a function whose parameters have these sizes in bytes, in order, is not the kernel of
// `sig` followed by `maps` TMA tensor maps (a buffer is one device pointer, a scalar its type's
// size, a tensor map 128 bytes), or empty when it is. Pure.
std::string parameters_unlike(std::span<const std::size_t> sizes, const KernelSignature& sig,
                              std::size_t maps);

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

  // Status for a failed call: names the call and the error; sticky errors mark the device lost.
  Status fail(Call call, int code, StatusCode fallback, std::string_view context = {});

 private:
  GpuDevice(std::unique_ptr<GpuApi> api, std::shared_ptr<RtcCompiler> compiler,
            std::shared_ptr<BinaryCache> cache, DeviceInfo info);
  Result<const GpuBuffer*> buffer_of(const DeviceBuffer& b, std::string_view what) const;
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
  // The sizes of `function`'s parameters; empty where the driver cannot tell.
  std::vector<std::size_t> parameter_sizes(Handle function) const;
  Result<const GpuKernel*> kernel_of(const CompiledKernel& k) const;
  // kernel_of without the Status, for the launch path (as own_buffer is to buffer_of).
  const GpuKernel* own_kernel(const CompiledKernel& k) const noexcept {
    if (typeid(k) != typeid(GpuKernel)) return nullptr;
    const auto* g = static_cast<const GpuKernel*>(&k);
    return g->owner() == this ? g : nullptr;
  }
  Status check_lost() const;
  // Ok when `scope` bound the context; else the failure, naming the call (unavailable).
  Status entered(const CurrentScope& scope);
  // Launch on `stream` without taking the lock (callers hold it for the device's own stream).
  // Validates dims against the variant.
  // The kernel's TMA tensor maps for `args` into `out` (one per spec), re-encoded only when the
  // buffer, its element type or the sizes changed since the kernel's last launch.
  // invalid_argument naming the map and the culprit for an argument that does not fit TMA.
  Status tensor_maps_for(const GpuKernel& kernel, ArgList args, EncodedTensorMap* out);
  Status launch_locked(const GpuKernel& kernel, const LaunchDims& dims, ArgList args,
                       Handle stream);
  // launch_locked's last stage: the driver's launch of packed `params`, its failure named.
  Status driver_launch(const GpuKernel& kernel, const LaunchDims& dims, const Dim3& block,
                       Handle stream, void** params);
  // Work on `waiter` waits for what is queued on `signaller` (an ordering event).
  Status order(Handle waiter, Handle signaller, std::string_view what);
  Result<Handle> target_stream(const LaunchTarget& target, std::string_view what) const;
  Status wait_event(Handle event, double timeout_ms, std::string_view what);
  Status ensure_flush_buffer();
  Status ensure_events(std::size_t pairs);
  // invalid_argument unless every buffer of `r` is this device's.
  Status check_resets(const LaunchResets& r) const;
  // Enqueues `r` on the stream (memset, device-to-device copies). Callers hold the lock.
  Status enqueue_resets_locked(const LaunchResets& r);

  std::unique_ptr<GpuApi> api_;
  std::shared_ptr<RtcCompiler> compiler_;
  std::shared_ptr<BinaryCache> cache_;
  DeviceInfo info_;
  Handle stream_ = nullptr;
  bool own_stream_ = true;  // false: the application's stream, never destroyed

  std::mutex queue_mutex_;  // guards everything below and stream order
  DevPtr flush_ptr_ = 0;
  std::uint64_t flush_bytes_ = 0;
  std::vector<Handle> events_;  // 2 per timed rep: start, end
  std::atomic<bool> lost_{false};
  mutable std::mutex lost_mutex_;  // guards lost_reason_
  std::string lost_reason_;

  // Last: its compiled variants go before everything they use (reset first in the destructor).
  ComparisonKernel comparison_{KernelSource{Language::cuda_hip, "tune_compare", kComparisonSource}};
};

// The index of the device a registry selector names: empty = 0, a number = that index, else
// the first device whose name contains the selector. not_found names what was asked.
Result<int> select_device(const std::vector<DeviceListing>& devices, std::string_view selector,
                          std::string_view backend);

// The registry line of a device: "sm_90, 132 SMs, 143771 MiB, CUDA 13.0, NVRTC 13.0"; `units`
// names its compute units ("SMs", "CUs").
DeviceListing listing_of(const DeviceInfo& info, int index, std::string_view units);

// Raw vendor handles of objects made by a GpuDevice of `backend`; nullptr otherwise.
Handle native_function(const CompiledKernel& kernel, std::string_view backend);
Handle native_stream(const Device& device, std::string_view backend);
// GpuDevice::wrap on a device of `backend`; invalid_argument for any other device.
Result<Buffer> wrap_buffer(Device& device, std::string_view backend, DevPtr ptr,
                           std::uint64_t bytes);

}  // namespace tune::gpu
