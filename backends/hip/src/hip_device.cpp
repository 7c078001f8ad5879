// The HIP backend: a GpuApi over HIP's module API (hipModule*, hipEvent*, hipMemcpy*), DeviceInfo
// from hipGetDeviceProperties, and the registry entry. Every HIP call goes through the table of
// the dlopen'ed runtime (hip_library.hpp); the first listing or open loads it.

#include <memory>
#include <string>

#include "device_listing.hpp"
#include "gpu_device.hpp"
#include "hip_internal.hpp"
#include "hip_library.hpp"
#include "tune/backend/last_level_cache.hpp"
#include "tune/backend/power_settle.hpp"
#include "tune/backend/registry.hpp"
#include "tune/hip.hpp"

namespace tune::hip {
namespace detail {
namespace {

using gpu::Call;
using gpu::DevPtr;
using gpu::ErrorClass;
using gpu::FuncAttr;
using gpu::Handle;

const char* const kCallNames[] = {
    "hipSetDevice",
    "hipMalloc",
    "hipFree",
    "hipMemcpyHtoDAsync",
    "hipMemcpyDtoHAsync",
    "hipMemcpyDtoDAsync",
    "hipMemsetD32Async",
    "hipMemsetD8Async",
    "hipStreamCreateWithFlags",
    "hipStreamDestroy",
    "hipStreamSynchronize",
    "hipModuleLoadData",
    "hipModuleUnload",
    "hipModuleGetFunction",
    "hipModuleGetGlobal",
    "hipFuncGetAttribute",
    "hipFuncSetAttribute",
    "hipModuleLaunchKernel",
    "hipEventCreate",
    "hipEventDestroy",
    "hipEventRecord",
    "hipEventQuery",
    "hipEventElapsedTime",
    "hipStreamIsCapturing",
    "hipStreamWaitEvent",
    "hipMemGetAddressRange",
    "(no tensor maps on HIP)",
};
static_assert(sizeof(kCallNames) / sizeof(kCallNames[0]) == static_cast<int>(Call::count_));

void* dev_ptr(DevPtr p) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(p)); }

// Forwards each GpuApi call to the HIP runtime for one device ordinal.
class HipApi final : public gpu::GpuApi {
 public:
  HipApi(const HipLibrary& h, int ordinal) : h_(h), ordinal_(ordinal) {}

  const char* call_name(Call c) const noexcept override { return kCallNames[static_cast<int>(c)]; }
  std::string error_text(int code) const override {
    return detail::error_text(h_, static_cast<hipError_t>(code));
  }
  ErrorClass classify(int code) const noexcept override {
    switch (static_cast<hipError_t>(code)) {
      case hipErrorNotReady:
        return ErrorClass::not_ready;
      case hipErrorOutOfMemory:
        return ErrorClass::out_of_memory;
      case hipErrorLaunchOutOfResources:
        return ErrorClass::out_of_resources;
      case hipErrorIllegalAddress:
      case hipErrorLaunchTimeOut:
      case hipErrorAssert:
      case hipErrorLaunchFailure:
        return ErrorClass::sticky;
      case hipErrorInvalidImage:
      case hipErrorNoBinaryForGpu:
      case hipErrorInvalidKernelFile:
        return ErrorClass::bad_image;
      default:
        return ErrorClass::other;
    }
  }

  // HIP binds a device per thread (its primary context): the thread's previous device is
  // set again on leaving, so an application thread that hipSetDevice'd another GPU keeps it.
  int enter_current(gpu::SavedCurrent* saved) override {
    int cur = -1;
    if (h_.hipGetDevice(&cur) == hipSuccess && cur == ordinal_) return hipSuccess;
    const hipError_t rc = h_.hipSetDevice(ordinal_);
    saved->changed = rc == hipSuccess && cur >= 0;
    saved->previous = cur;
    return rc;
  }
  void leave_current(const gpu::SavedCurrent& saved) noexcept override {
    (void)h_.hipSetDevice(static_cast<int>(saved.previous));
  }
  int relax_capture_mode(int* previous) override {
    hipStreamCaptureMode mode = hipStreamCaptureModeRelaxed;
    const hipError_t rc = h_.hipThreadExchangeStreamCaptureMode(&mode);
    *previous = static_cast<int>(mode);
    return rc;
  }
  void restore_capture_mode(int previous) noexcept override {
    auto mode = static_cast<hipStreamCaptureMode>(previous);
    (void)h_.hipThreadExchangeStreamCaptureMode(&mode);
  }
  int mem_alloc(DevPtr* ptr, std::size_t bytes) override {
    return gpu::out_param<void*>(ptr, [&](void** p) { return h_.hipMalloc(p, bytes); });
  }
  int mem_free(DevPtr ptr) override { return h_.hipFree(dev_ptr(ptr)); }
  int memcpy_htod(DevPtr dst, const void* src, std::size_t bytes, Handle s) override {
    return h_.hipMemcpyHtoDAsync(dev_ptr(dst), const_cast<void*>(src), bytes, stream(s));
  }
  int memcpy_dtoh(void* dst, DevPtr src, std::size_t bytes, Handle s) override {
    return h_.hipMemcpyDtoHAsync(dst, dev_ptr(src), bytes, stream(s));
  }
  int memcpy_dtod(DevPtr dst, DevPtr src, std::size_t bytes, Handle s) override {
    return h_.hipMemcpyDtoDAsync(dev_ptr(dst), dev_ptr(src), bytes, stream(s));
  }
  int memset_d32(DevPtr dst, std::uint32_t value, std::size_t count, Handle s) override {
    return h_.hipMemsetD32Async(dev_ptr(dst), static_cast<int>(value), count, stream(s));
  }
  int memset_d8(DevPtr dst, std::uint8_t value, std::size_t count, Handle s) override {
    return h_.hipMemsetD8Async(dev_ptr(dst), value, count, stream(s));
  }
  int stream_create(Handle* s) override {
    return gpu::out_param<hipStream_t>(
        s, [this](hipStream_t* p) { return h_.hipStreamCreateWithFlags(p, hipStreamNonBlocking); });
  }
  int stream_destroy(Handle s) override { return h_.hipStreamDestroy(stream(s)); }
  int stream_sync(Handle s) override { return h_.hipStreamSynchronize(stream(s)); }
  int module_load(Handle* m, const void* image) override {
    return gpu::out_param<hipModule_t>(
        m, [&](hipModule_t* p) { return h_.hipModuleLoadData(p, image); });
  }
  int module_unload(Handle m) override { return h_.hipModuleUnload(static_cast<hipModule_t>(m)); }
  int module_get_function(Handle* f, Handle m, const char* name) override {
    return gpu::out_param<hipFunction_t>(f, [&](hipFunction_t* p) {
      return h_.hipModuleGetFunction(p, static_cast<hipModule_t>(m), name);
    });
  }
  int module_get_global(DevPtr* ptr, std::size_t* bytes, Handle m, const char* name) override {
    return gpu::out_param<hipDeviceptr_t>(ptr, [&](hipDeviceptr_t* p) {
      return h_.hipModuleGetGlobal(p, bytes, static_cast<hipModule_t>(m), name);
    });
  }
  int func_get_attribute(int* value, FuncAttr attr, Handle f) override {
    // Indexed by FuncAttr.
    static constexpr hipFunction_attribute kAttrs[] = {
        HIP_FUNC_ATTRIBUTE_NUM_REGS, HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
        HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK};
    hipError_t rc = h_.hipFuncGetAttribute(value, kAttrs[static_cast<int>(attr)],
                                           static_cast<hipFunction_t>(f));
    if (rc == hipErrorNotSupported) {  // some ROCm releases do not report every attribute
      *value = 0;
      return hipSuccess;
    }
    return rc;
  }
  // AMD GPUs have no opt-in shared-memory limit: the whole LDS is always available, and
  // DeviceInfo says so (default == opt-in), so GpuDevice never needs to raise it.
  int func_set_max_dynamic_shared(Handle, int) override { return hipSuccess; }
  int launch(Handle f, const Dim3& g, const Dim3& b, std::uint32_t shared, Handle s,
             void** params) override {
    return h_.hipModuleLaunchKernel(static_cast<hipFunction_t>(f), g.x, g.y, g.z, b.x, b.y, b.z,
                                    shared, stream(s), params, nullptr);
  }
  int event_create(Handle* e) override {
    return gpu::out_param<hipEvent_t>(e, [this](hipEvent_t* p) { return h_.hipEventCreate(p); });
  }
  int event_destroy(Handle e) override { return h_.hipEventDestroy(static_cast<hipEvent_t>(e)); }
  int event_record(Handle e, Handle s) override {
    return h_.hipEventRecord(static_cast<hipEvent_t>(e), stream(s));
  }
  int event_query(Handle e) override { return h_.hipEventQuery(static_cast<hipEvent_t>(e)); }
  int event_elapsed_ms(float* ms, Handle start, Handle end) override {
    return h_.hipEventElapsedTime(ms, static_cast<hipEvent_t>(start), static_cast<hipEvent_t>(end));
  }
  int stream_is_capturing(bool* capturing, Handle s) override {
    hipStreamCaptureStatus status = hipStreamCaptureStatusNone;
    const hipError_t rc = h_.hipStreamIsCapturing(stream(s), &status);
    if (rc == hipErrorStreamCaptureImplicit) {  // the null stream during a global capture
      *capturing = true;
      return hipSuccess;
    }
    *capturing = status != hipStreamCaptureStatusNone;
    return rc;
  }
  int event_create_ordering(Handle* e) override {
    return gpu::out_param<hipEvent_t>(
        e, [this](hipEvent_t* p) { return h_.hipEventCreateWithFlags(p, hipEventDisableTiming); });
  }
  int stream_wait_event(Handle s, Handle e) override {
    return h_.hipStreamWaitEvent(stream(s), static_cast<hipEvent_t>(e), 0);
  }
  int mem_get_address_range(DevPtr* base, std::size_t* bytes, DevPtr ptr) override {
    hipDeviceptr_t b = nullptr;
    const hipError_t rc = h_.hipMemGetAddressRange(&b, bytes, dev_ptr(ptr));
    *base = static_cast<DevPtr>(reinterpret_cast<std::uintptr_t>(b));
    return rc;
  }

 private:
  static hipStream_t stream(Handle s) { return static_cast<hipStream_t>(s); }
  const HipLibrary& h_;  // the process-wide library, never unloaded
  int ordinal_;
};

Status hip_failed(const HipLibrary& h, const char* call, hipError_t rc) {
  return Status(StatusCode::unavailable, std::string(call) + " failed: " + error_text(h, rc));
}

// The process-wide library: its first use loads it (blocking); unavailable when it is missing.
Result<const HipLibrary*> library() {
  Status why;
  const HipLibrary* h = hip_library(&why);
  if (h == nullptr) return why;
  return h;
}

Result<int> device_count(const HipLibrary& h) {
  int count = 0;
  hipError_t rc = h.hipGetDeviceCount(&count);
  if (rc == hipErrorNoDevice || (rc == hipSuccess && count == 0))
    return Status(StatusCode::unavailable, "no HIP device (hipGetDeviceCount: hipErrorNoDevice)");
  if (rc != hipSuccess) return hip_failed(h, "hipGetDeviceCount", rc);
  return count;
}

Result<DeviceInfo> query_info(const HipLibrary& h, int ordinal) {
  hipDeviceProp_t p{};
  if (hipError_t rc = h.hipGetDeviceProperties(&p, ordinal); rc != hipSuccess)
    return hip_failed(h, "hipGetDeviceProperties", rc);
  DeviceInfo info;
  info.backend = "hip";
  info.reopen_spec = "hip:" + std::to_string(ordinal);
  info.vendor = "AMD";
  info.name = p.name;
  hipDevice_t device = 0;
  if (hipError_t rc = h.hipDeviceGet(&device, ordinal); rc != hipSuccess)
    return hip_failed(h, "hipDeviceGet", rc);
  hipUUID uuid{};
  if (hipError_t rc = h.hipDeviceGetUuid(&uuid, device); rc != hipSuccess)
    return hip_failed(h, "hipDeviceGetUuid", rc);
  info.uuid = format_uuid(uuid.bytes);
  std::string arch = p.gcnArchName;  // "gfx90a:sramecc+:xnack-": the target is before ':'
  info.arch = arch.substr(0, arch.find(':'));
  int version = 0;
  if (hipError_t rc = h.hipDriverGetVersion(&version); rc != hipSuccess)
    return hip_failed(h, "hipDriverGetVersion", rc);
  info.driver_version = "HIP " + std::to_string(version);
  info.compiler_version = compiler_version();
  info.compute_units = static_cast<std::uint32_t>(p.multiProcessorCount);
  info.max_threads_per_block = static_cast<std::uint32_t>(p.maxThreadsPerBlock);
  auto u = [](int v) { return static_cast<std::uint32_t>(v); };
  info.max_block = {u(p.maxThreadsDim[0]), u(p.maxThreadsDim[1]), u(p.maxThreadsDim[2])};
  info.max_grid = {u(p.maxGridSize[0]), u(p.maxGridSize[1]), u(p.maxGridSize[2])};
  info.shared_bytes_per_block = static_cast<std::uint32_t>(p.sharedMemPerBlock);
  info.shared_bytes_per_block_optin = info.shared_bytes_per_block;
  info.registers_per_block = u(p.regsPerBlock);
  info.warp_size = u(p.warpSize);
  // The wavefront size the runtime compiles for (hiprtc offers no per-kernel wave32/wave64).
  info.min_subgroup_size = info.max_subgroup_size = info.warp_size;
  info.l2_bytes = static_cast<std::uint64_t>(p.l2CacheSize);
  // HIP reports the L2 only; a part with an Infinity Cache has it behind the L2, far larger.
  if (std::uint64_t mall = amd_infinity_cache_bytes(info.arch); mall > info.l2_bytes)
    set_last_level_cache(info, mall, CacheSizeSource::table);
  else
    set_last_level_cache(info, info.l2_bytes, CacheSizeSource::reported);
  info.global_memory_bytes = p.totalGlobalMem;
  info.timer_resolution_ns = 1000.0;         // hipEventElapsedTime: about 1 us
  info.power_settle_ms = kGpuPowerSettleMs;  // measured on NVIDIA only (no AMD GPU here)
  return info;
}

Result<std::vector<DeviceListing>> list() {
  TUNE_ASSIGN_OR_RETURN(const HipLibrary* h, library());
  auto count = device_count(*h);
  if (!count.ok()) return count.status();
  std::vector<DeviceListing> out;
  for (int i = 0; i < *count; ++i) {
    auto info = query_info(*h, i);
    if (!info.ok()) return info.status();
    out.push_back(gpu::listing_of(*info, i, "CUs"));
  }
  return out;
}

Result<std::unique_ptr<Device>> open(std::string_view selector) {
  TUNE_ASSIGN_OR_RETURN(const auto devices, list());
  TUNE_ASSIGN_OR_RETURN(const int index, gpu::select_device(devices, selector, "HIP"));
  TUNE_ASSIGN_OR_RETURN(const HipLibrary* h, library());
  TUNE_ASSIGN_OR_RETURN(DeviceInfo info, query_info(*h, index));
  TUNE_ASSIGN_OR_RETURN(
      auto made, gpu::GpuDevice::make(std::make_unique<HipApi>(*h, index), hiprtc_compiler(),
                                      gpu::BinaryCache::open_default("hsaco"), std::move(info)));
  return std::unique_ptr<Device>(std::move(made));
}

}  // namespace
}  // namespace detail

Result<std::unique_ptr<Device>> open_device(std::string_view selector) {
  return detail::open(selector);
}

Result<std::unique_ptr<Device>> open_device(const OpenOptions& options) {
  TUNE_ASSIGN_OR_RETURN(const detail::HipLibrary* h, detail::library());
  int ordinal = options.ordinal;
  if (ordinal < 0) {
    if (hipError_t rc = h->hipGetDevice(&ordinal); rc != hipSuccess)
      return detail::hip_failed(*h, "hipGetDevice", rc);
  }
  TUNE_ASSIGN_OR_RETURN(const int count, detail::device_count(*h));
  if (ordinal >= count) {
    return Status(StatusCode::not_found, "no HIP device with ordinal " + std::to_string(ordinal) +
                                             " (" + std::to_string(count) + " devices)");
  }
  TUNE_ASSIGN_OR_RETURN(DeviceInfo info, detail::query_info(*h, ordinal));
  std::optional<gpu::Handle> stream;
  if (options.use_stream) stream = options.stream;
  TUNE_ASSIGN_OR_RETURN(
      auto made,
      gpu::GpuDevice::make(std::make_unique<detail::HipApi>(*h, ordinal), detail::hiprtc_compiler(),
                           gpu::BinaryCache::open_default("hsaco"), std::move(info), stream));
  return std::unique_ptr<Device>(std::move(made));
}

Result<Buffer> wrap_buffer(Device& dev, std::uint64_t device_ptr, std::uint64_t bytes) {
  return gpu::wrap_buffer(dev, "hip", device_ptr, bytes);
}

Result<std::vector<DeviceListing>> list_devices() { return detail::list(); }

Status driver_status() {
  auto h = detail::library();
  if (!h.ok()) return h.status();
  auto count = detail::device_count(**h);
  return count.ok() ? Status{} : count.status();
}

void* native_function(const CompiledKernel& kernel) { return gpu::native_function(kernel, "hip"); }
void* native_stream(const Device& device) { return gpu::native_stream(device, "hip"); }

}  // namespace tune::hip

namespace tune::detail {
BackendEntry backend_entry_hip() {
  return BackendEntry{"hip", &tune::hip::list_devices, &tune::hip::open_device};
}
}  // namespace tune::detail
