// Backend kit: the registry entry a backend provides.
//
// Every backend folder defines, in namespace tune::detail, `BackendEntry backend_entry_<name>()`
// (backends/README.md); the table that open_device() and list_devices() (tune/registry.hpp)
// search is generated from the selected backends at configure time.
#pragma once

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "tune/device.hpp"
#include "tune/registry.hpp"
#include "tune/status.hpp"

namespace tune::detail {

struct BackendEntry {
  const char* name;
  Result<std::vector<DeviceListing>> (*list)();
  Result<std::unique_ptr<Device>> (*open)(std::string_view selector);
};

// The backends compiled into this build, in preference order (the generated backend_table.cpp).
std::span<const BackendEntry> backend_table();

}  // namespace tune::detail
