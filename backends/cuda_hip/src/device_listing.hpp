// The registry's view of CUDA and HIP devices: choosing one by selector, and its listing line.
// Pure (no driver calls).
#pragma once

#include <string_view>
#include <vector>

#include "tune/device.hpp"
#include "tune/registry.hpp"

namespace tune::gpu {

// The index of the device a registry selector names: empty = 0, a number = that index, else
// the first device whose name contains the selector. not_found names what was asked.
Result<int> select_device(const std::vector<DeviceListing>& devices, std::string_view selector,
                          std::string_view backend);

// The registry line of a device: "sm_90, 132 SMs, 143771 MiB, CUDA 13.0, NVRTC 13.0"; `units`
// names its compute units ("SMs", "CUs").
DeviceListing listing_of(const DeviceInfo& info, int index, std::string_view units);

}  // namespace tune::gpu
