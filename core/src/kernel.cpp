#include "tune/kernel.hpp"

namespace tune {

Status KernelDef::zero_reset_buffers(Device& dev, ArgList args) const {
  LaunchResets resets;
  for (const auto& arg : reset_to_zero) {
    const int i = signature.index_of(arg);
    if (i < 0 || static_cast<std::size_t>(i) >= args.size() ||
        args[static_cast<std::size_t>(i)].buffer == nullptr)
      return Status(StatusCode::invalid_argument, "kernel '" + name + "': reset_to_zero entry '" +
                                                      arg +
                                                      "' is not a buffer argument of this call");
    resets.zero.push_back(args[static_cast<std::size_t>(i)].buffer);
  }
  return apply_resets(dev, resets);
}

}  // namespace tune
