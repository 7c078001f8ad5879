// The HIP backend's public extras. Most programs open devices through
// tune::open_device("hip[:index|name]") (tune/registry.hpp) and never include this header.
//
// The same verbs as tune/cuda.hpp and tune/vulkan.hpp, in namespace tune::hip: open_device,
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

namespace tune::hip {

// Opens a HIP device: `selector` is an index or a name substring; empty: device 0.
// Same as tune::open_device("hip:<selector>").
Result<std::unique_ptr<Device>> open_device(std::string_view selector = {});
// Every device the runtime reports; unavailable (with the reason) without one.
Result<std::vector<DeviceListing>> list_devices();

// Ok when the HIP runtime sees at least one device; else unavailable ("no HIP device").
Status driver_status();

// "hiprtc 5.2".
std::string compiler_version();

// Compiles `source` with `config` for `arch` ("gfx90a", "gfx1030") exactly as a device of that
// architecture would, without a GPU and without the binary cache: the code object (HSACO) and
// the log; compile_error with the log on failure. TUNE_WARP_SIZE is 32 for gfx10/gfx11
// (wave32) and 64 otherwise. Thread-safe (hiprtc calls are serialised).
Result<RtcOutput> compile(std::string_view arch, const KernelSource& source, const Config& config);
// The code object bytes only.
Result<std::string> compile_binary(std::string_view arch, const KernelSource& source,
                                   const Config& config);

// Raw handles (hipFunction_t, hipStream_t); nullptr when the object is not from this backend.
void* native_function(const CompiledKernel& kernel);
void* native_stream(const Device& device);

// --- Using libtune inside a HIP application (the rules: tune/cuda_hip.hpp; compile-tested only:
// no AMD GPU exists on any machine we have, so this path has never run) --------------------------
struct OpenOptions {
  // The device (HIP's context is the device's primary one, shared with the application).
  // Negative: the calling thread's current device (hipGetDevice).
  int ordinal = -1;
  // With use_stream, the device's queue is this hipStream_t of the application (nullptr: the
  // null stream; hipStreamPerThread the per-thread one), borrowed and never destroyed.
  void* stream = nullptr;
  bool use_stream = false;
};
Result<std::unique_ptr<Device>> open_device(const OpenOptions& options);
// `bytes` of the application's memory at `device_ptr` (hipDeviceptr_t / hipMalloc'd pointer as
// an integer), never freed by libtune; checked with hipMemGetAddressRange.
Result<Buffer> wrap_buffer(Device& dev, std::uint64_t device_ptr, std::uint64_t bytes);
inline Result<Buffer> wrap_pointer(Device& dev, const void* ptr, std::uint64_t bytes) {
  return wrap_buffer(dev, reinterpret_cast<std::uintptr_t>(ptr), bytes);
}

}  // namespace tune::hip
