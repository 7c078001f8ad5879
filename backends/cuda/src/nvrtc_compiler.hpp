// NVRTC as an RtcCompiler: CUDA C++ straight to a CUBIN for one exact sm_XY. NVRTC's API is
// thread-safe, so compiles run concurrently without a lock.
#pragma once

#include <memory>

#include "rtc.hpp"

namespace tune::cuda::detail {

// The process-wide NVRTC compiler (stateless; shared by every CUDA device).
std::shared_ptr<gpu::RtcCompiler> nvrtc_compiler();

}  // namespace tune::cuda::detail
