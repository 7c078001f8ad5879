// GpuApi: the thin adaptor over a vendor runtime whose shape CUDA's driver API and HIP's
// module API share (contexts aside). GpuDevice (gpu_device.hpp) and the objects it composes
// hold all the logic — buffers, compile-and-load, launch, event timing, error mapping — once for
// both vendors; a backend only forwards each call to its driver and names it.
//
// Every method returns the vendor's raw result code (0 = success) so that GpuDevice can name
// the call and classify the error in one place. Handles are the vendor's opaque pointers
// (CUmodule, hipFunction_t, ...) carried as void*; device pointers as 64-bit integers.
// Thread safety: methods may be called from any thread inside enter_current() / leave_current()
// on that thread; the adaptor itself holds no mutable state beyond what its driver guards.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "tune/args.hpp"
#include "tune/config.hpp"
#include "tune/device.hpp"

namespace tune::gpu {

using DevPtr = std::uint64_t;
using Handle = void*;

// Calls GpuDevice makes, for error messages ("cuLaunchKernel" / "hipModuleLaunchKernel").
enum class Call : std::uint8_t {
  enter_current,
  mem_alloc,
  mem_free,
  memcpy_htod,
  memcpy_dtoh,
  memcpy_dtod,
  memset_d32,
  memset_d8,
  stream_create,
  stream_destroy,
  stream_sync,
  module_load,
  module_unload,
  module_get_function,
  module_get_global,
  func_get_attribute,
  func_set_max_dynamic_shared,
  launch,
  event_create,
  event_destroy,
  event_record,
  event_query,
  event_elapsed,
  stream_is_capturing,
  stream_wait_event,
  mem_get_address_range,
  encode_tensor_map,
  count_,
};

enum class FuncAttr : std::uint8_t { num_regs, local_bytes, shared_bytes, max_threads };

// How GpuDevice reacts to a failed call.
enum class ErrorClass : std::uint8_t {
  not_ready,         // event_query: still running
  out_of_memory,     // -> out_of_resources
  out_of_resources,  // launch: too many registers/threads/shared memory for this variant
  sticky,            // the context is corrupt (illegal address, trap...) -> device_lost
  bad_image,         // module_load: the binary does not fit this device -> compile_error
  other,             // -> the status GpuDevice picks for the call
};

// Adaptor helper: runs `fn(&v)` with a vendor-typed out-parameter `v` (CUmodule, void*,
// CUdeviceptr...) and stores it into a Handle or DevPtr. Returns fn's result code.
template <class Vendor, class Out, class Fn>
int out_param(Out* out, Fn&& fn) {
  Vendor v{};
  const int rc = static_cast<int>(fn(&v));
  if constexpr (std::is_pointer_v<Vendor> && std::is_integral_v<Out>) {
    *out = static_cast<Out>(reinterpret_cast<std::uintptr_t>(v));
  } else {
    *out = static_cast<Out>(v);
  }
  return rc;
}

// What enter_current() changed on the calling thread, for leave_current() to undo.
struct SavedCurrent {
  bool changed = false;
  std::intptr_t previous = 0;  // the vendor's previous binding where it must be kept (HIP)
};

class GpuApi {
 public:
  virtual ~GpuApi() = default;

  virtual const char* call_name(Call c) const noexcept = 0;
  // "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)".
  virtual std::string error_text(int code) const = 0;
  virtual ErrorClass classify(int code) const noexcept = 0;

  // Binds this device's context to the calling thread for one libtune call, leaving in
  // `saved` what leave_current() needs to give the thread back the binding it had (CUDA:
  // cuCtxPushCurrent, undone by cuCtxPopCurrent; HIP: hipSetDevice, undone by hipSetDevice of
  // the previous device). Nothing changes (saved->changed false) when the context is already
  // current: one thread-local read, the usual case on a hit. GpuDevice calls these through
  // CurrentScope (current_scope.hpp) only.
  virtual int enter_current(SavedCurrent* saved) = 0;
  virtual void leave_current(const SavedCurrent& saved) noexcept = 0;
  // For loading a module while some stream captures a graph: a capture begun in global (or, on
  // this thread, thread-local) mode forbids "potentially unsafe" calls such as module loading,
  // and a refused call would invalidate the application's capture. Sets the calling thread's
  // capture-interaction mode to relaxed and stores the previous one in `previous`
  // (cuThreadExchangeStreamCaptureMode / hipThreadExchangeStreamCaptureMode);
  // restore_capture_mode puts it back. Thread-local, cheap; no effect without a capture.
  virtual int relax_capture_mode(int* previous) = 0;
  virtual void restore_capture_mode(int previous) noexcept = 0;

  virtual int mem_alloc(DevPtr* ptr, std::size_t bytes) = 0;
  virtual int mem_free(DevPtr ptr) = 0;
  // Asynchronous on `stream`; pageable host memory is staged before the call returns.
  virtual int memcpy_htod(DevPtr dst, const void* src, std::size_t bytes, Handle stream) = 0;
  virtual int memcpy_dtoh(void* dst, DevPtr src, std::size_t bytes, Handle stream) = 0;
  virtual int memcpy_dtod(DevPtr dst, DevPtr src, std::size_t bytes, Handle stream) = 0;
  virtual int memset_d32(DevPtr dst, std::uint32_t value, std::size_t count, Handle stream) = 0;
  virtual int memset_d8(DevPtr dst, std::uint8_t value, std::size_t count, Handle stream) = 0;

  virtual int stream_create(Handle* stream) = 0;
  virtual int stream_destroy(Handle stream) = 0;
  virtual int stream_sync(Handle stream) = 0;

  virtual int module_load(Handle* module, const void* image) = 0;
  virtual int module_unload(Handle module) = 0;
  virtual int module_get_function(Handle* function, Handle module, const char* name) = 0;
  // The address and size of a module global (__constant__ / __device__ variable) by symbol.
  virtual int module_get_global(DevPtr* ptr, std::size_t* bytes, Handle module,
                                const char* name) = 0;
  // An attribute the runtime does not report reads as 0 with success.
  virtual int func_get_attribute(int* value, FuncAttr attr, Handle function) = 0;
  virtual int func_set_max_dynamic_shared(Handle function, int bytes) = 0;
  virtual int launch(Handle function, const Dim3& grid, const Dim3& block,
                     std::uint32_t shared_bytes, Handle stream, void** params) = 0;
  // Thread-block clusters (LaunchDims::cluster): whether this vendor has them, and a launch in
  // clusters of `cluster` blocks (cuLaunchKernelEx with the cluster-dimension attribute).
  // GpuDevice calls launch_cluster only where has_clusters() and the cluster exceeds one block.
  // Only CUDA implements them.
  // A function's parameters, by index: offset and size in bytes; non-zero past the last one.
  // Only where the driver exposes it (CUDA 12.4's cuFuncGetParamInfo); HIP has none.
  virtual bool has_param_info() const noexcept { return false; }
  virtual int func_param_info(Handle /*function*/, std::size_t /*index*/, std::size_t* /*offset*/,
                              std::size_t* /*bytes*/) {
    return -1;
  }
  virtual bool has_clusters() const noexcept { return false; }
  virtual int launch_cluster(Handle function, const Dim3& grid, const Dim3& block,
                             const Dim3& cluster, std::uint32_t shared_bytes, Handle stream,
                             void** params) {
    (void)function, (void)grid, (void)block, (void)cluster, (void)shared_bytes, (void)stream,
        (void)params;
    return -1;
  }

  virtual int event_create(Handle* event) = 0;
  virtual int event_destroy(Handle event) = 0;
  virtual int event_record(Handle event, Handle stream) = 0;
  virtual int event_query(Handle event) = 0;
  virtual int event_elapsed_ms(float* ms, Handle start, Handle end) = 0;

  // Interop with an application's streams (LaunchTarget::stream; nullptr is the legacy
  // default stream). `capturing` is set when work queued on `stream` now would be captured
  // into a graph (a capture invalidated but not yet ended counts, and so does the legacy
  // stream while a blocking stream captures in global mode).
  virtual int stream_is_capturing(bool* capturing, Handle stream) = 0;
  // An event without timing, for ordering only.
  virtual int event_create_ordering(Handle* event) = 0;
  virtual int stream_wait_event(Handle stream, Handle event) = 0;
  // The allocation holding `ptr`: its base and size (cuMemGetAddressRange).
  virtual int mem_get_address_range(DevPtr* base, std::size_t* bytes, DevPtr ptr) = 0;

  // TMA tensor maps (KernelSource::tensor_maps): whether this vendor has them, and the
  // encoding of one (128 bytes into `map`, 64-byte aligned) over a `rows` x `cols` row-major
  // matrix of `type` at `ptr` with the spec's box and swizzle (cuTensorMapEncodeTiled). Pure
  // host work. Only CUDA implements them.
  virtual bool has_tensor_maps() const noexcept { return false; }
  virtual int encode_tensor_map(void* map, const TensorMapSpec& spec, ElemType type, DevPtr ptr,
                                std::uint64_t rows, std::uint64_t cols) {
    (void)map, (void)spec, (void)type, (void)ptr, (void)rows, (void)cols;
    return -1;
  }
};

}  // namespace tune::gpu
