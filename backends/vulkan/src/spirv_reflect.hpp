// A minimal SPIR-V reader: just what the Vulkan backend needs to build a pipeline layout and
// check a launch without the kernel's signature (bindings, push-constant members, shared
// memory, capabilities). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tune/status.hpp"
#include "tune/vulkan.hpp"

namespace tune::vk {

// One scalar member of the push-constant block, as the shader declares it.
struct PushMember {
  std::uint32_t offset = 0;
  std::uint32_t bytes = 0;  // 4 or 8
  bool is_float = false;
};

// One specialization constant the module declares (OpSpecConstant, OpSpecConstantTrue/False
// with a SpecId decoration): settable per pipeline through VkSpecializationInfo.
struct SpecConstant {
  // unsupported: 8- and 16-bit types, which a definition cannot set (refused when named).
  enum class Kind : std::uint8_t { boolean, signed_int, unsigned_int, floating, unsupported };
  std::uint32_t spec_id = 0;
  std::string name;  // its OpName; empty when the module was stripped of names
  Kind kind = Kind::unsigned_int;
  std::uint32_t bytes = 4;  // 4 (booleans are VkBool32) or 8
};

struct SpirvInfo {
  // Storage-buffer bindings of descriptor set 0, sorted and distinct. Buffer argument i binds
  // to binding i; a binding the optimiser removed (never used by this variant) is absent.
  std::vector<std::uint32_t> bindings;
  bool uses_other_sets = false;              // a descriptor set other than 0 (unsupported)
  bool uses_non_buffer_descriptors = false;  // images, samplers, uniform buffers (unsupported)
  std::vector<PushMember> push;              // in declaration order; empty when none is used
  std::uint32_t push_bytes = 0;              // end of the last member, rounded up to 4
  std::uint64_t shared_bytes = 0;            // Workgroup-storage variables, summed
  bool shared_bytes_known = true;            // false when an array length is a spec constant
  std::vector<std::uint32_t> capabilities;   // OpCapability operands
  // The workgroup size: LocalSize execution mode, and whether gl_WorkGroupSize is a
  // specialization-constant composite (layout(local_size_x_id = ...)), i.e. settable per
  // pipeline.
  std::uint32_t local_size[3] = {0, 0, 0};
  bool local_size_is_spec = false;
  // Per dimension, the SpecId that sets it; kFixed where the module fixes that dimension.
  static constexpr std::uint32_t kFixed = 0xffffffffu;
  std::uint32_t local_size_spec_id[3] = {kFixed, kFixed, kFixed};
  // Sorted by spec_id.
  std::vector<SpecConstant> spec_constants;
  std::uint32_t version = 0;        // the header's SPIR-V version word (0x00010500: 1.5)
  bool has_compute_main = false;    // OpEntryPoint GLCompute "main" of a function it defines
  bool uses_local_size_id = false;  // the LocalSizeId execution mode (needs maintenance4)
  // A cooperative-matrix type of workgroup scope (VK_NV_cooperative_matrix2): the workgroup
  // may then have cooperativeMatrixWorkgroupScopeMaxWorkgroupSize invocations at most.
  bool workgroup_scope_matrices = false;
  // 64-bit integer atomics (capability Int64Atomics) by where they act, each its own device
  // feature: buffers (StorageBuffer, Uniform, PhysicalStorageBuffer: shaderBufferInt64Atomics)
  // and workgroup memory (shaderSharedInt64Atomics). See resolve_int64_atomics for the
  // conservative cases.
  bool int64_atomics_buffer = false, int64_atomics_shared = false;
  // Float atomics by width, operation and where they act (each a feature of
  // VK_EXT_shader_atomic_float or _float2; resolve_float_atomics says how they are found).
  vulkan::ShaderFloatAtomics float_atomics_buffer, float_atomics_shared;
};

// Fails (internal) when `words` is not a well-formed SPIR-V module.
Result<SpirvInfo> reflect_spirv(std::span<const std::uint32_t> words);

}  // namespace tune::vk
