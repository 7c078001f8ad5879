// The HIP backend's public extras: compiling without a device (hiprtc only), the runtime's
// availability, and raw handles for interop and benchmarks. Opening devices goes through
// tune::open_device("hip[:index|name]").
#pragma once

#include <string>
#include <string_view>

#include "tune/device.hpp"
#include "tune/gpu/rtc.hpp"

namespace tune::hip {

// "hiprtc 5.2".
std::string hiprtc_version();

// Compiles `source` with `config` for `arch` ("gfx90a", "gfx1030") exactly as a device of that
// architecture would, without a GPU and without the binary cache: the code object (HSACO) and
// the log; compile_error with the log on failure. TUNE_WARP_SIZE is 32 for gfx10/gfx11
// (wave32) and 64 otherwise. Thread-safe (hiprtc calls are serialised).
Result<gpu::RtcOutput> hiprtc_compile(std::string_view arch, const KernelSource& source,
                                      const Config& config);
Result<std::string> hiprtc_compile_for(std::string_view arch, const KernelSource& source,
                                       const Config& config);

// Ok when the HIP runtime sees at least one device; else unavailable ("no HIP device").
Status runtime_status();

// Raw handles (hipFunction_t, hipStream_t); nullptr when the object is not from this backend.
void* native_function(const CompiledKernel& kernel);
void* native_stream(const Device& device);

}  // namespace tune::hip
