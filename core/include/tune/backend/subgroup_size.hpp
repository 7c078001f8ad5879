// The one check of LaunchOptions::subgroup_size, for backend authors and the tuner: every
// backend refuses the same requests with the same reason, whether a variant comes through the
// Autotuner or straight to Device::compile. Pure; thread-safe.
#pragma once

#include <cstdint>

#include "tune/device_info.hpp"
#include "tune/status.hpp"

namespace tune {

// ok when `requested` is 0 (the device's choice) or a power of two in the device's
// [min_subgroup_size, max_subgroup_size]; else unavailable, naming the request, the device
// and the range it allows (or that it allows none).
Status check_subgroup_size(std::uint32_t requested, const DeviceInfo& info);

}  // namespace tune
