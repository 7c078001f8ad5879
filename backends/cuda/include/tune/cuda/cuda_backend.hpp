// The CUDA backend's public extras: compiling without a device (NVRTC only), the driver's
// availability, and raw handles for interop and benchmarks. Opening devices goes through
// tune::open_device("cuda[:index|name]").
#pragma once

#include <string>
#include <string_view>

#include "tune/device.hpp"
#include "tune/gpu/rtc.hpp"

namespace tune::cuda {

// "NVRTC 13.0".
std::string nvrtc_version();

// Compiles `source` with `config` for `arch` ("sm_80", "sm_90") exactly as a device of that
// architecture would, without any driver or GPU and without the binary cache. The CUBIN and
// the compiler log (ptxas resource lines included); compile_error with the log on failure,
// invalid_argument for an architecture NVRTC does not support. Thread-safe.
Result<gpu::RtcOutput> nvrtc_compile(std::string_view arch, const KernelSource& source,
                                     const Config& config);
// The CUBIN bytes only.
Result<std::string> nvrtc_compile_for(std::string_view arch, const KernelSource& source,
                                      const Config& config);

// Ok when libcuda.so.1 loads, every entry point resolves and cuInit succeeds; otherwise
// unavailable with the reason ("no CUDA driver: ..."). Loads the driver once per process.
Status driver_status();

// Raw handles for interop and benchmarks; nullptr when the object is not from this backend.
void* native_function(const CompiledKernel& kernel);  // CUfunction
void* native_stream(const Device& device);            // CUstream
// A driver entry point by its exported name ("cuLaunchKernel"), or nullptr.
void* driver_symbol(const char* name);

}  // namespace tune::cuda
