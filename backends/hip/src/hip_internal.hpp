// Internal to the HIP backend.
#pragma once

#include <memory>

#include "rtc.hpp"

namespace tune::hip::detail {

// The process-wide hiprtc compiler, shared by every HIP device.
std::shared_ptr<gpu::RtcCompiler> hiprtc_compiler();

}  // namespace tune::hip::detail
