// The CUDA backend: a GpuApi over the dlopen'ed driver, DeviceInfo from device attributes,
// and the registry entry (list / open by index or name).

#include <algorithm>
#include <memory>
#include <string>

#include "cuda_driver.hpp"
#include "cuda_open.hpp"
#include "device_listing.hpp"
#include "gpu_device.hpp"
#include "nvrtc_compiler.hpp"
#include "tune/backend/last_level_cache.hpp"
#include "tune/backend/power_settle.hpp"
#include "tune/backend/registry.hpp"
#include "tune/cuda.hpp"

namespace tune::cuda {
namespace detail {
namespace {

using gpu::Call;
using gpu::DevPtr;
using gpu::ErrorClass;
using gpu::FuncAttr;
using gpu::Handle;

const char* const kCallNames[] = {
    "cuCtxPushCurrent",   "cuMemAlloc",           "cuMemFree",
    "cuMemcpyHtoDAsync",  "cuMemcpyDtoHAsync",    "cuMemcpyDtoDAsync",
    "cuMemsetD32Async",   "cuMemsetD8Async",      "cuStreamCreate",
    "cuStreamDestroy",    "cuStreamSynchronize",  "cuModuleLoadData",
    "cuModuleUnload",     "cuModuleGetFunction",  "cuModuleGetGlobal",
    "cuFuncGetAttribute", "cuFuncSetAttribute",   "cuLaunchKernel",
    "cuEventCreate",      "cuEventDestroy",       "cuEventRecord",
    "cuEventQuery",       "cuEventElapsedTime",   "cuStreamIsCapturing",
    "cuStreamWaitEvent",  "cuMemGetAddressRange", "cuTensorMapEncodeTiled",
};
static_assert(sizeof(kCallNames) / sizeof(kCallNames[0]) == static_cast<int>(Call::count_));

using gpu::ErrorClass;

// How a driver result is handled: shared by every call and by opening a device.
ErrorClass classify_result(CUresult code) noexcept {
  switch (code) {
    case CUDA_ERROR_NOT_READY:
      return ErrorClass::not_ready;
    case CUDA_ERROR_OUT_OF_MEMORY:
      return ErrorClass::out_of_memory;
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
      return ErrorClass::out_of_resources;
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
      return ErrorClass::sticky;
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
      return ErrorClass::bad_image;
    default:
      return ErrorClass::other;
  }
}

// Forwards each GpuApi call to the driver. Owns a reference on the device's primary context
// (shared with the CUDA runtime, so cuBLAS and libtune can work on the same buffers), or
// borrows an application's context (`retained` false: never released, reset or destroyed).
class CudaApi final : public gpu::GpuApi {
 public:
  CudaApi(const Driver& d, CUdevice dev, CUcontext ctx, bool retained = true)
      : d_(d), dev_(dev), ctx_(ctx), retained_(retained) {}
  ~CudaApi() override {
    if (retained_) (void)d_.cuDevicePrimaryCtxRelease(dev_);
  }

  const char* call_name(Call c) const noexcept override { return kCallNames[static_cast<int>(c)]; }
  std::string error_text(int code) const override {
    return detail::error_text(d_, static_cast<CUresult>(code));
  }
  ErrorClass classify(int code) const noexcept override {
    return classify_result(static_cast<CUresult>(code));
  }

  // Pushed on the thread's context stack and popped again: whatever the application had
  // current (another context, another device's, none) is current again afterwards.
  int enter_current(gpu::SavedCurrent* saved) override {
    CUcontext cur = nullptr;
    if (d_.cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == ctx_) return CUDA_SUCCESS;
    const CUresult rc = d_.cuCtxPushCurrent(ctx_);
    saved->changed = rc == CUDA_SUCCESS;
    return rc;
  }
  void leave_current(const gpu::SavedCurrent&) noexcept override {
    CUcontext popped = nullptr;
    (void)d_.cuCtxPopCurrent(&popped);  // ours: pushed by enter_current on this thread
  }
  int relax_capture_mode(int* previous) override {
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    const CUresult rc = d_.cuThreadExchangeStreamCaptureMode(&mode);
    *previous = static_cast<int>(mode);
    return rc;
  }
  void restore_capture_mode(int previous) noexcept override {
    auto mode = static_cast<CUstreamCaptureMode>(previous);
    (void)d_.cuThreadExchangeStreamCaptureMode(&mode);
  }
  int mem_alloc(DevPtr* ptr, std::size_t bytes) override {
    return gpu::out_param<CUdeviceptr>(ptr,
                                       [&](CUdeviceptr* p) { return d_.cuMemAlloc(p, bytes); });
  }
  int mem_free(DevPtr ptr) override { return d_.cuMemFree(ptr); }
  int memcpy_htod(DevPtr dst, const void* src, std::size_t bytes, Handle s) override {
    return d_.cuMemcpyHtoDAsync(dst, src, bytes, stream(s));
  }
  int memcpy_dtoh(void* dst, DevPtr src, std::size_t bytes, Handle s) override {
    return d_.cuMemcpyDtoHAsync(dst, src, bytes, stream(s));
  }
  int memcpy_dtod(DevPtr dst, DevPtr src, std::size_t bytes, Handle s) override {
    return d_.cuMemcpyDtoDAsync(dst, src, bytes, stream(s));
  }
  int memset_d32(DevPtr dst, std::uint32_t value, std::size_t count, Handle s) override {
    return d_.cuMemsetD32Async(dst, value, count, stream(s));
  }
  int memset_d8(DevPtr dst, std::uint8_t value, std::size_t count, Handle s) override {
    return d_.cuMemsetD8Async(dst, value, count, stream(s));
  }
  int stream_create(Handle* s) override {
    return gpu::out_param<CUstream>(
        s, [&](CUstream* p) { return d_.cuStreamCreate(p, CU_STREAM_NON_BLOCKING); });
  }
  int stream_destroy(Handle s) override { return d_.cuStreamDestroy(stream(s)); }
  int stream_sync(Handle s) override { return d_.cuStreamSynchronize(stream(s)); }
  int module_load(Handle* m, const void* image) override {
    return gpu::out_param<CUmodule>(m, [&](CUmodule* p) { return d_.cuModuleLoadData(p, image); });
  }
  int module_unload(Handle m) override { return d_.cuModuleUnload(static_cast<CUmodule>(m)); }
  int module_get_function(Handle* f, Handle m, const char* name) override {
    return gpu::out_param<CUfunction>(f, [&](CUfunction* p) {
      return d_.cuModuleGetFunction(p, static_cast<CUmodule>(m), name);
    });
  }
  int module_get_global(DevPtr* ptr, std::size_t* bytes, Handle m, const char* name) override {
    return gpu::out_param<CUdeviceptr>(ptr, [&](CUdeviceptr* p) {
      return d_.cuModuleGetGlobal(p, bytes, static_cast<CUmodule>(m), name);
    });
  }
  int func_get_attribute(int* value, FuncAttr attr, Handle f) override {
    // Indexed by FuncAttr.
    static constexpr CUfunction_attribute kAttrs[] = {
        CU_FUNC_ATTRIBUTE_NUM_REGS, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
        CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK};
    return d_.cuFuncGetAttribute(value, kAttrs[static_cast<int>(attr)], static_cast<CUfunction>(f));
  }
  int func_set_max_dynamic_shared(Handle f, int bytes) override {
    return d_.cuFuncSetAttribute(static_cast<CUfunction>(f),
                                 CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
  }
  int launch(Handle f, const Dim3& g, const Dim3& b, std::uint32_t shared, Handle s,
             void** params) override {
    return d_.cuLaunchKernel(static_cast<CUfunction>(f), g.x, g.y, g.z, b.x, b.y, b.z, shared,
                             stream(s), params, nullptr);
  }
  int event_create(Handle* e) override {
    return gpu::out_param<CUevent>(
        e, [&](CUevent* p) { return d_.cuEventCreate(p, CU_EVENT_DEFAULT); });
  }
  int event_destroy(Handle e) override { return d_.cuEventDestroy(static_cast<CUevent>(e)); }
  int event_record(Handle e, Handle s) override {
    return d_.cuEventRecord(static_cast<CUevent>(e), stream(s));
  }
  int event_query(Handle e) override { return d_.cuEventQuery(static_cast<CUevent>(e)); }
  int event_elapsed_ms(float* ms, Handle start, Handle end) override {
    return d_.cuEventElapsedTime(ms, static_cast<CUevent>(start), static_cast<CUevent>(end));
  }
  int stream_is_capturing(bool* capturing, Handle s) override {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    const CUresult rc = d_.cuStreamIsCapturing(stream(s), &status);
    if (rc == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT) {  // the legacy stream during a global capture
      *capturing = true;
      return CUDA_SUCCESS;
    }
    *capturing = status != CU_STREAM_CAPTURE_STATUS_NONE;
    return rc;
  }
  int event_create_ordering(Handle* e) override {
    return gpu::out_param<CUevent>(
        e, [&](CUevent* p) { return d_.cuEventCreate(p, CU_EVENT_DISABLE_TIMING); });
  }
  int stream_wait_event(Handle s, Handle e) override {
    return d_.cuStreamWaitEvent(stream(s), static_cast<CUevent>(e), 0);
  }
  int mem_get_address_range(DevPtr* base, std::size_t* bytes, DevPtr ptr) override {
    CUdeviceptr b = 0;
    const CUresult rc = d_.cuMemGetAddressRange(&b, bytes, static_cast<CUdeviceptr>(ptr));
    *base = b;
    return rc;
  }
  bool has_param_info() const noexcept override { return d_.cuFuncGetParamInfo != nullptr; }
  int func_param_info(Handle f, std::size_t index, std::size_t* offset,
                      std::size_t* bytes) override {
    if (d_.cuFuncGetParamInfo == nullptr) return CUDA_ERROR_NOT_SUPPORTED;  // driver < 12.4
    return d_.cuFuncGetParamInfo(static_cast<CUfunction>(f), index, offset, bytes);
  }
  bool has_clusters() const noexcept override { return true; }
  // Clusters of up to 8 blocks are portable; a larger one needs the function's non-portable
  // opt-in first (honoured on sm_90 up to 16), asked for only then.
  int launch_cluster(Handle f, const Dim3& g, const Dim3& b, const Dim3& c, std::uint32_t shared,
                     Handle s, void** params) override {
    if (d_.cuLaunchKernelEx == nullptr) return CUDA_ERROR_NOT_SUPPORTED;  // driver < 12.0
    const auto fn = static_cast<CUfunction>(f);
    if (c.product() > 8) {
      if (CUresult rc =
              d_.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
          rc != CUDA_SUCCESS)
        return rc;
    }
    CUlaunchAttribute attr{};
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = c.x;
    attr.value.clusterDim.y = c.y;
    attr.value.clusterDim.z = c.z;
    CUlaunchConfig config{};
    config.gridDimX = g.x;
    config.gridDimY = g.y;
    config.gridDimZ = g.z;
    config.blockDimX = b.x;
    config.blockDimY = b.y;
    config.blockDimZ = b.z;
    config.sharedMemBytes = shared;
    config.hStream = stream(s);
    config.attrs = &attr;
    config.numAttrs = 1;
    return d_.cuLaunchKernelEx(&config, fn, params, nullptr);
  }
  bool has_tensor_maps() const noexcept override { return true; }
  int encode_tensor_map(void* map, const TensorMapSpec& spec, ElemType type, DevPtr ptr,
                        std::uint64_t rows, std::uint64_t cols) override {
    if (d_.cuTensorMapEncodeTiled == nullptr) return CUDA_ERROR_NOT_SUPPORTED;  // driver < 12.0
    CUtensorMapDataType dt = CU_TENSOR_MAP_DATA_TYPE_UINT8;
    switch (type) {
      case ElemType::f16:
        dt = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
        break;
      case ElemType::bf16:
        dt = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
        break;
      case ElemType::f32:
        dt = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
        break;
      case ElemType::f64:
        dt = CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
        break;
      case ElemType::i32:
        dt = CU_TENSOR_MAP_DATA_TYPE_INT32;
        break;
      case ElemType::u32:
        dt = CU_TENSOR_MAP_DATA_TYPE_UINT32;
        break;
      case ElemType::i64:
        dt = CU_TENSOR_MAP_DATA_TYPE_INT64;
        break;
      case ElemType::u64:
        dt = CU_TENSOR_MAP_DATA_TYPE_UINT64;
        break;
      case ElemType::i16:
      case ElemType::u16:
        dt = CU_TENSOR_MAP_DATA_TYPE_UINT16;
        break;
      case ElemType::i8:
      case ElemType::u8:
        dt = CU_TENSOR_MAP_DATA_TYPE_UINT8;
        break;
    }
    static constexpr CUtensorMapSwizzle kSwizzle[] = {
        CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_SWIZZLE_32B, CU_TENSOR_MAP_SWIZZLE_64B,
        CU_TENSOR_MAP_SWIZZLE_128B};
    const cuuint64_t dims[2] = {cols, rows};
    const cuuint64_t strides[1] = {cols * size_of(type)};
    const cuuint32_t box[2] = {spec.box_cols, spec.box_rows};
    const cuuint32_t elem_strides[2] = {1, 1};
    // OOB fill NONE: elements outside the matrix read as zeros (the kernels' edge handling).
    return d_.cuTensorMapEncodeTiled(
        static_cast<CUtensorMap*>(map), dt, 2, reinterpret_cast<void*>(ptr), dims, strides, box,
        elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, kSwizzle[static_cast<int>(spec.swizzle)],
        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  }

 private:
  static CUstream stream(Handle s) { return static_cast<CUstream>(s); }
  const Driver& d_;
  CUdevice dev_;
  CUcontext ctx_;
  bool retained_ = true;
};

Status call_failed(const Driver& d, const char* call, CUresult rc) {
  return Status(StatusCode::unavailable, std::string(call) + " failed: " + error_text(d, rc));
}

// Reads every DeviceInfo field from the driver.
Result<DeviceInfo> query_info(const Driver& d, CUdevice dev) {
  DeviceInfo info;
  info.backend = "cuda";
  info.vendor = "NVIDIA";
  // A CUdevice is its ordinal, which is open_device's index.
  info.reopen_spec = "cuda:" + std::to_string(static_cast<int>(dev));
  char name[256] = {};
  if (CUresult rc = d.cuDeviceGetName(name, sizeof name - 1, dev); rc != CUDA_SUCCESS)
    return call_failed(d, "cuDeviceGetName", rc);
  info.name = name;
  CUuuid uuid{};
  if (CUresult rc = d.cuDeviceGetUuid(&uuid, dev); rc != CUDA_SUCCESS)
    return call_failed(d, "cuDeviceGetUuid", rc);
  info.uuid = format_uuid(uuid.bytes);

  struct Attr {
    CUdevice_attribute attr;
    int value = 0;
  };
  Attr attrs[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR},           // 0
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR},           // 1
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT},               // 2
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK},              // 3
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X},                    // 4
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y},                    // 5
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z},                    // 6
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X},                     // 7
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y},                     // 8
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z},                     // 9
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK},        // 10
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN},  // 11
      {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK},            // 12
      {CU_DEVICE_ATTRIBUTE_WARP_SIZE},                          // 13
      {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE},                      // 14
  };
  for (auto& a : attrs) {
    if (CUresult rc = d.cuDeviceGetAttribute(&a.value, a.attr, dev); rc != CUDA_SUCCESS)
      return call_failed(d, "cuDeviceGetAttribute", rc);
  }
  auto u = [&](int i) { return static_cast<std::uint32_t>(attrs[i].value); };
  info.arch = "sm_" + std::to_string(attrs[0].value) + std::to_string(attrs[1].value);
  info.compute_units = u(2);
  info.max_threads_per_block = u(3);
  info.max_block = {u(4), u(5), u(6)};
  info.max_grid = {u(7), u(8), u(9)};
  info.shared_bytes_per_block = u(10);
  info.shared_bytes_per_block_optin = std::max(u(11), u(10));
  info.registers_per_block = u(12);
  info.warp_size = u(13);
  info.min_subgroup_size = info.max_subgroup_size = info.warp_size;  // fixed by the hardware
  info.l2_bytes = u(14);
  set_last_level_cache(info, info.l2_bytes, CacheSizeSource::reported);  // L2 is the last level
  std::size_t total = 0;
  if (CUresult rc = d.cuDeviceTotalMem(&total, dev); rc != CUDA_SUCCESS)
    return call_failed(d, "cuDeviceTotalMem", rc);
  info.global_memory_bytes = total;
  int version = 0;
  if (CUresult rc = d.cuDriverGetVersion(&version); rc != CUDA_SUCCESS)
    return call_failed(d, "cuDriverGetVersion", rc);
  info.driver_version =
      "CUDA " + std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
  info.compiler_version = compiler_version();
  info.timer_resolution_ns = 500.0;  // cuEventElapsedTime: about 0.5 us
  info.power_settle_ms = kGpuPowerSettleMs;
  return info;
}

Result<int> device_count(const Driver& d) {
  int count = 0;
  if (CUresult rc = d.cuDeviceGetCount(&count); rc != CUDA_SUCCESS)
    return call_failed(d, "cuDeviceGetCount", rc);
  if (count == 0) return Status(StatusCode::unavailable, "no CUDA device");
  return count;
}

// The device of an application's context: asked with that context pushed on this thread's
// stack, then popped (the thread's binding is as it was).
Result<CUdevice> device_of(const Driver& d, CUcontext ctx) {
  if (CUresult rc = d.cuCtxPushCurrent(ctx); rc != CUDA_SUCCESS)
    return call_failed(d, "cuCtxPushCurrent (the application's context)", rc);
  CUdevice dev = 0;
  const CUresult rc = d.cuCtxGetDevice(&dev);
  CUcontext popped = nullptr;
  (void)d.cuCtxPopCurrent(&popped);
  if (rc != CUDA_SUCCESS) return call_failed(d, "cuCtxGetDevice", rc);
  return dev;
}

// A reference on the primary context of `dev`. A sticky error there (an earlier kernel of this
// process faulted) is device_lost: the primary context belongs to the whole process (the
// runtime API's, cuBLAS's...), so libtune never resets it; only the application may
// (cudaDeviceReset / cuDevicePrimaryCtxReset), then open again.
Result<CUcontext> retain_primary(const Driver& d, CUdevice dev) {
  CUcontext ctx = nullptr;
  const CUresult rc = d.cuDevicePrimaryCtxRetain(&ctx, dev);
  if (rc == CUDA_SUCCESS) return ctx;
  Status st = call_failed(d, "cuDevicePrimaryCtxRetain", rc);
  if (classify_result(rc) != ErrorClass::sticky) return st;
  return Status(StatusCode::device_lost,
                st.message() +
                    " (the process's primary context holds a sticky error; libtune never resets "
                    "a context it shares, and after an illegal address CUDA keeps the process "
                    "unusable until it is relaunched)");
}

}  // namespace

Result<std::vector<DeviceListing>> list(const Driver& d) {
  TUNE_ASSIGN_OR_RETURN(const int count, device_count(d));
  std::vector<DeviceListing> out;
  for (int i = 0; i < count; ++i) {
    CUdevice dev = 0;
    if (CUresult rc = d.cuDeviceGet(&dev, i); rc != CUDA_SUCCESS)
      return call_failed(d, "cuDeviceGet", rc);
    auto info = query_info(d, dev);
    if (!info.ok()) return info.status();
    out.push_back(gpu::listing_of(*info, i, "SMs"));
  }
  return out;
}

Result<std::unique_ptr<Device>> open_selected(const Driver& d, std::string_view selector) {
  TUNE_ASSIGN_OR_RETURN(const auto devices, list(d));
  TUNE_ASSIGN_OR_RETURN(const int index, gpu::select_device(devices, selector, "CUDA"));
  OpenOptions options;
  options.ordinal = index;
  return open_on_context(d, options);
}

// The primary context of `options.ordinal` (retained here, released by the CudaApi) or
// `options.context` (borrowed as is); neither is ever reset or destroyed.
Result<std::unique_ptr<Device>> open_on_context(const Driver& d, const OpenOptions& options) {
  TUNE_ASSIGN_OR_RETURN(const int count, device_count(d));
  CUdevice dev = 0;
  CUcontext ctx = static_cast<CUcontext>(options.context);
  const bool primary = ctx == nullptr;
  if (primary) {
    if (options.ordinal < 0 || options.ordinal >= count) {
      return Status(StatusCode::not_found, "no CUDA device with ordinal " +
                                               std::to_string(options.ordinal) + " (" +
                                               std::to_string(count) + " devices)");
    }
    if (CUresult rc = d.cuDeviceGet(&dev, options.ordinal); rc != CUDA_SUCCESS)
      return call_failed(d, "cuDeviceGet", rc);
  } else {
    TUNE_ASSIGN_OR_RETURN(dev, device_of(d, ctx));
  }
  TUNE_ASSIGN_OR_RETURN(DeviceInfo info, query_info(d, dev));
  if (primary) {
    TUNE_ASSIGN_OR_RETURN(ctx, retain_primary(d, dev));
  }
  auto api = std::make_unique<CudaApi>(d, dev, ctx, /*retained=*/primary);
  std::optional<gpu::Handle> stream;
  if (options.use_stream) stream = options.stream;
  TUNE_ASSIGN_OR_RETURN(auto made, gpu::GpuDevice::make(std::move(api), nvrtc_compiler(),
                                                        gpu::BinaryCache::open_default("cubin"),
                                                        std::move(info), stream));
  return std::unique_ptr<Device>(std::move(made));
}

}  // namespace detail

namespace {
// The process's driver, or why there is none.
Result<const detail::Driver*> loaded_driver() {
  Status why;
  const detail::Driver* d = detail::driver(&why);
  if (d == nullptr) return why;
  return d;
}
}  // namespace

Result<std::unique_ptr<Device>> open_device(std::string_view selector) {
  TUNE_ASSIGN_OR_RETURN(const detail::Driver* d, loaded_driver());
  return detail::open_selected(*d, selector);
}

Result<std::unique_ptr<Device>> open_device(const OpenOptions& options) {
  TUNE_ASSIGN_OR_RETURN(const detail::Driver* d, loaded_driver());
  return detail::open_on_context(*d, options);
}

Result<Buffer> wrap_buffer(Device& dev, std::uint64_t device_ptr, std::uint64_t bytes) {
  return gpu::wrap_buffer(dev, "cuda", device_ptr, bytes);
}

Result<std::vector<DeviceListing>> list_devices() {
  TUNE_ASSIGN_OR_RETURN(const detail::Driver* d, loaded_driver());
  return detail::list(*d);
}

Status driver_status() {
  Status why;
  if (detail::driver(&why) == nullptr) return why;
  return {};
}

void* native_function(const CompiledKernel& kernel) { return gpu::native_function(kernel, "cuda"); }

void* native_stream(const Device& device) { return gpu::native_stream(device, "cuda"); }

void* driver_symbol(const char* name) {
  const detail::Driver* d = detail::driver(nullptr);
  return d == nullptr ? nullptr : gpu::find_symbol(d->library, name);
}

}  // namespace tune::cuda

namespace tune::detail {
BackendEntry backend_entry_cuda() {
  return BackendEntry{"cuda", &tune::cuda::list_devices, &tune::cuda::open_device};
}
}  // namespace tune::detail
