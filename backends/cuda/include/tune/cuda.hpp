// The CUDA backend's public extras. Most programs open devices through
// tune::open_device("cuda[:index|name]") (tune/registry.hpp) and never include this header.
//
// The same verbs as tune/hip.hpp and tune/vulkan.hpp, in namespace tune::cuda: open_device,
// list_devices, driver_status, compiler_version, compile / compile_binary (without a device),
// native_function / native_stream (raw handles).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tune/cuda_hip.hpp"
#include "tune/device.hpp"
#include "tune/registry.hpp"

namespace tune::cuda {

// Opens a CUDA device: `selector` is an index or a name substring; empty: device 0.
// Same as tune::open_device("cuda:<selector>"). On the device's primary context, retained and
// never reset: device_lost when it holds a sticky error (tune/cuda_hip.hpp).
Result<std::unique_ptr<Device>> open_device(std::string_view selector = {});
// Every device the driver reports; unavailable (with the reason) without a driver.
Result<std::vector<DeviceListing>> list_devices();

// Ok when libcuda.so.1 loads, every entry point resolves and cuInit succeeds; otherwise
// unavailable with the reason ("no CUDA driver: ..."). Loads the driver once per process.
Status driver_status();

// "NVRTC 13.0".
std::string compiler_version();

// Compiles `source` with `config` for `arch` ("sm_80", "sm_90") exactly as a device of that
// architecture would, without any driver or GPU and without the binary cache. The CUBIN and
// the compiler log (ptxas resource lines included); compile_error with the log on failure,
// invalid_argument for an architecture NVRTC does not support. Thread-safe.
Result<RtcOutput> compile(std::string_view arch, const KernelSource& source, const Config& config);
// The CUBIN bytes only.
Result<std::string> compile_binary(std::string_view arch, const KernelSource& source,
                                   const Config& config);

// Raw handles for interop and benchmarks; nullptr when the object is not from this backend.
void* native_function(const CompiledKernel& kernel);  // CUfunction
void* native_stream(const Device& device);            // CUstream
// A driver entry point by its exported name ("cuLaunchKernel"), or nullptr.
void* driver_symbol(const char* name);

// --- Using libtune inside a CUDA application (the rules: tune/cuda_hip.hpp) --------------------
//
// A Device on the application's context, and optionally its stream as the device's queue.
// Handles are void* (CUcontext, CUstream) so that this header needs no cuda.h.
struct OpenOptions {
  // The device whose primary context is used (the CUDA runtime's context: cudaMalloc'd memory
  // and runtime streams live there). Retained at open and released with the Device; never
  // reset or destroyed, even when it holds a sticky error (open and every call report it).
  int ordinal = 0;
  // An application's CUcontext instead (the driver API's cuCtxCreate): borrowed, not retained;
  // the application keeps it alive until the Device is destroyed. Null: the primary context.
  void* context = nullptr;
  // With use_stream, the device's own queue is this CUstream of the application (nullptr: the
  // legacy default stream; CU_STREAM_PER_THREAD, (void*)2, the per-thread one) instead of a
  // non-blocking stream libtune creates: uploads, tuning and run(dev, args) are ordered on it
  // with the application's work. Tuning synchronises it. Never destroyed; synchronised when
  // the Device is destroyed.
  void* stream = nullptr;
  bool use_stream = false;
};
// invalid_argument / not_found for a bad ordinal, unavailable without a driver, device_lost for
// a primary context that already holds a sticky error. Blocking; thread-safe.
Result<std::unique_ptr<Device>> open_device(const OpenOptions& options);

// `bytes` of the application's device memory at `device_ptr` (a CUdeviceptr, or a pointer from
// cudaMalloc / cudaMallocAsync as an integer) as a Buffer that libtune uses but never frees.
// Checked to lie inside one allocation (cuMemGetAddressRange): invalid_argument otherwise or
// when `dev` is not a CUDA device. Destroy the Buffer before freeing the memory.
Result<Buffer> wrap_buffer(Device& dev, std::uint64_t device_ptr, std::uint64_t bytes);
// The same from a runtime-API pointer (cudaMalloc).
inline Result<Buffer> wrap_pointer(Device& dev, const void* ptr, std::uint64_t bytes) {
  return wrap_buffer(dev, reinterpret_cast<std::uintptr_t>(ptr), bytes);
}

}  // namespace tune::cuda
