// The CUDA backend's public extras. Most programs open devices through
// tune::open_device("cuda[:index|name]") (tune/registry.hpp) and never include this header.
//
// The same verbs as tune/hip.hpp and tune/vulkan.hpp, in namespace tune::cuda: open_device,
// list_devices, driver_status, compiler_version, compile / compile_binary (without a device),
// native_function / native_stream (raw handles).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tune/cuda_hip.hpp"
#include "tune/device.hpp"
#include "tune/registry.hpp"

namespace tune::cuda {

// Opens a CUDA device: `selector` is an index or a name substring; empty: device 0.
// Same as tune::open_device("cuda:<selector>").
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

}  // namespace tune::cuda
