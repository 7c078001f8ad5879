#include "tune/kernel.hpp"

namespace tune {

Result<LaunchResets> KernelDef::zero_resets(ArgList args) const {
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
  return resets;
}

Status KernelDef::zero_reset_buffers(Device& dev, ArgList args) const {
  TUNE_ASSIGN_OR_RETURN(LaunchResets resets, zero_resets(args));
  return apply_resets(dev, resets);
}

}  // namespace tune
