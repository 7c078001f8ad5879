// Device selection by registry selector, and the registry's listing line.
#include "device_listing.hpp"

#include <charconv>
#include <string>

namespace tune::gpu {

Result<int> select_device(const std::vector<DeviceListing>& devices, std::string_view selector,
                          std::string_view backend) {
  if (selector.empty()) return 0;
  int index = 0;
  const char* end = selector.data() + selector.size();
  if (std::from_chars(selector.data(), end, index).ptr == end) {
    if (index < 0 || index >= static_cast<int>(devices.size())) {
      return Status(StatusCode::not_found, std::string(backend) + " device index " +
                                               std::string(selector) + " out of range (" +
                                               std::to_string(devices.size()) + " devices)");
    }
    return index;
  }
  for (const auto& d : devices)
    if (d.name.find(selector) != std::string::npos) return d.index;
  return Status(StatusCode::not_found, "no " + std::string(backend) + " device name contains '" +
                                           std::string(selector) + "'");
}

DeviceListing listing_of(const DeviceInfo& info, int index, std::string_view units) {
  return {info.backend, index, info.name,
          info.arch + ", " + std::to_string(info.compute_units) + " " + std::string(units) + ", " +
              std::to_string(info.global_memory_bytes >> 20) + " MiB, " + info.driver_version +
              ", " + info.compiler_version};
}

}  // namespace tune::gpu
