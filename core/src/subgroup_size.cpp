// See tune/backend/subgroup_size.hpp.
#include "tune/backend/subgroup_size.hpp"

#include <bit>
#include <string>

namespace tune {

Status check_subgroup_size(std::uint32_t requested, const DeviceInfo& info) {
  if (requested == 0) return Status::ok_status();
  const std::string what = "subgroup_size " + std::to_string(requested) + " on " + info.name;
  if (info.max_subgroup_size == 0) {
    return Status(
        StatusCode::unavailable,
        what + ": the device does not let kernels choose their subgroup size" +
            (info.backend == "vulkan" ? " (needs Vulkan 1.3 subgroupSizeControl with compute in "
                                        "requiredSubgroupSizeStages)"
                                      : ""));
  }
  if (!std::has_single_bit(requested) || requested < info.min_subgroup_size ||
      requested > info.max_subgroup_size) {
    const std::string range = info.min_subgroup_size == info.max_subgroup_size
                                  ? "only " + std::to_string(info.min_subgroup_size)
                                  : "powers of two from " + std::to_string(info.min_subgroup_size) +
                                        " to " + std::to_string(info.max_subgroup_size);
    return Status(StatusCode::unavailable, what + ": the device allows " + range);
  }
  return Status::ok_status();
}

}  // namespace tune
