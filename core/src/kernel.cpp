#include "tune/kernel.hpp"

#include <cstdint>

namespace tune {

Status KernelDef::zero_reset_buffers(Device& dev, ArgList args) const {
  for (const auto& arg : reset_to_zero) {
    const int i = signature.index_of(arg);
    if (i < 0 || static_cast<std::size_t>(i) >= args.size() ||
        args[static_cast<std::size_t>(i)].buffer == nullptr)
      return Status(StatusCode::invalid_argument, "kernel '" + name + "': reset_to_zero entry '" +
                                                      arg +
                                                      "' is not a buffer argument of this call");
    DeviceBuffer& b = *args[static_cast<std::size_t>(i)].buffer;
    // Device::fill writes whole 32-bit words.
    TUNE_RETURN_IF_ERROR(dev.fill(b, 0, b.size_bytes() & ~std::uint64_t{3}));
  }
  return {};
}

}  // namespace tune
