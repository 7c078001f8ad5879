// Specialization: the VkSpecializationInfo one pipeline is created with. The workgroup size
// goes to the constants the shader takes each dimension of its size from (the GLSL rule:
// layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2)); for a precompiled module
// (KernelSource::spirv), each definition of the variant (tune/definitions.hpp) also sets the
// module's specialization constant of the same name (its OpName), parsed as that constant's
// type. A definition the module has no constant for is ignored, as an unused macro is.
//
// Thread safety: a value type; make_specialization is a pure function.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "spirv_reflect.hpp"
#include "tune/definitions.hpp"
#include "tune/device.hpp"
#include "tune/status.hpp"

namespace tune::vk {

class Specialization {
 public:
  // Points into this object: valid while it lives and is not moved. Null when nothing is set.
  const VkSpecializationInfo* info();
  std::size_t size() const noexcept { return entries_.size(); }

  // Appends constant `spec_id` with the `bytes` bytes at `value` (little-endian hosts).
  void set(std::uint32_t spec_id, const void* value, std::uint32_t bytes);
  // The 32-bit value set for `spec_id`; nullopt when none is.
  std::optional<std::uint32_t> u32(std::uint32_t spec_id) const;

 private:
  std::vector<VkSpecializationMapEntry> entries_;
  std::vector<std::uint8_t> data_;
  VkSpecializationInfo info_{};
};

// The workgroup size `block` (when set and the shader takes it from specialization constants),
// then, when `named` is true, every definition that names one of the module's constants.
// invalid_argument naming the constant and the value when a value does not parse as its type
// (an integer out of its range, a fraction for an integer, a boolean other than 0 / 1 / true /
// false) or when a definition names a constant the workgroup size sets.
Result<Specialization> make_specialization(const SpirvInfo& si, const Dim3& block,
                                           const std::vector<Definition>& defs, bool named);

// The workgroup size a pipeline of `si` created with `spec` runs: per dimension, the value
// `spec` sets for the constant that dimension comes from (the block, or a precompiled module's
// named constant), else the module's own.
Dim3 module_block(const SpirvInfo& si, const Specialization& spec);

}  // namespace tune::vk
