// For tests that compile and launch a bundled kernel themselves, outside an Autotuner: finding
// it by name, and zeroing what it accumulates into before each launch, as the Autotuner does.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tune/kernels/bundled.hpp"
#include "tune/tune.hpp"

namespace tune::testing {

// The kernel called `name` in `ks` (names are unique), or nullptr when it is not there.
inline const kernels::BundledKernel* find_kernel(const std::vector<kernels::BundledKernel>& ks,
                                                 std::string_view name) {
  for (const auto& k : ks)
    if (k.name == name) return &k;
  return nullptr;
}

// Zeroes the buffers a kernel accumulates into (KernelDef::reset_to_zero). internal when one of
// those names is not a buffer argument in `args`; else what Device::fill returns.
inline Status reset_outputs(Device& dev, const KernelDef& def, ArgList args) {
  for (const auto& name : def.reset_to_zero) {
    const int i = def.signature.index_of(name);
    if (i < 0 || args[static_cast<std::size_t>(i)].buffer == nullptr)
      return Status(StatusCode::internal, "reset_to_zero names no buffer: " + name);
    DeviceBuffer& b = *args[static_cast<std::size_t>(i)].buffer;
    TUNE_RETURN_IF_ERROR(dev.fill(b, 0, b.size_bytes() & ~std::uint64_t{3}));
  }
  return Status::ok_status();
}

}  // namespace tune::testing
