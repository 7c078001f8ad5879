// Opening devices by backend name. Backends are compiled in by CMake (TUNE_BACKENDS) and
// listed in a table generated at configure time; this header names no backend.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tune/device.hpp"

namespace tune {

struct DeviceListing {
  std::string backend;
  int index = 0;
  std::string name;
  std::string detail;  // type, driver, architecture: one human line
};

// Backends compiled into this build, in default preference order ("cuda", "hip", "vulkan").
std::vector<std::string> compiled_backends();

// Devices one backend can see. unavailable (with the reason) when its driver is missing.
Result<std::vector<DeviceListing>> list_devices(std::string_view backend);

// Opens a device. `spec` is "backend" or "backend:selector" where the selector is an index
// or a name substring. An empty spec reads TUNE_DEVICE (same form), else TUNE_BACKEND, else
// tries each compiled backend in preference order and returns the first that opens; the
// error then lists why each backend could not.
Result<std::unique_ptr<Device>> open_device(std::string_view spec = {});

}  // namespace tune
