// Listing and opening CUDA devices over one driver table: the public calls (tune/cuda.hpp)
// pass the process's driver (cuda_driver.hpp's driver()); tests pass a fake table to watch what
// libtune asks of the driver (tests/cuda/context_fake_driver_test.cpp).
//
// Contexts: a device works on the primary context of its ordinal (retained, released with the
// device) or on an application's CUcontext (borrowed). Neither is ever reset or destroyed, and
// the calling thread's current context is as it was after every call (cuCtxPushCurrent /
// cuCtxPopCurrent around the work). Thread-safe; blocking (driver queries).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "cuda_driver.hpp"
#include "tune/cuda.hpp"

namespace tune::cuda::detail {

Result<std::vector<DeviceListing>> list(const Driver& d);
// `selector`: an index or a name substring (empty: device 0), on its primary context.
Result<std::unique_ptr<Device>> open_selected(const Driver& d, std::string_view selector);
Result<std::unique_ptr<Device>> open_on_context(const Driver& d, const OpenOptions& options);

}  // namespace tune::cuda::detail
