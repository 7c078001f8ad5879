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

// Readable name of a SPIR-V capability number ("StorageBuffer16BitAccess"; the number itself
// where no name is known).
std::string capability_name(std::uint32_t cap);

// SPIR-V capability numbers the backend checks against device features.
namespace spv_cap {
inline constexpr std::uint32_t kFloat16 = 9;
inline constexpr std::uint32_t kFloat64 = 10;
inline constexpr std::uint32_t kInt64 = 11;
inline constexpr std::uint32_t kInt64Atomics = 12;
inline constexpr std::uint32_t kInt16 = 22;
inline constexpr std::uint32_t kInt8 = 39;
inline constexpr std::uint32_t kGroupNonUniform = 61;
inline constexpr std::uint32_t kGroupNonUniformVote = 62;
inline constexpr std::uint32_t kGroupNonUniformArithmetic = 63;
inline constexpr std::uint32_t kGroupNonUniformBallot = 64;
inline constexpr std::uint32_t kGroupNonUniformShuffle = 65;
inline constexpr std::uint32_t kGroupNonUniformShuffleRelative = 66;
inline constexpr std::uint32_t kGroupNonUniformClustered = 67;
inline constexpr std::uint32_t kGroupNonUniformQuad = 68;
inline constexpr std::uint32_t kStorageBuffer16BitAccess = 4433;
inline constexpr std::uint32_t kUniformAndStorageBuffer16BitAccess = 4434;
inline constexpr std::uint32_t kStorageBuffer8BitAccess = 4448;
inline constexpr std::uint32_t kUniformAndStorageBuffer8BitAccess = 4449;
inline constexpr std::uint32_t kBFloat16TypeKHR = 5116;
inline constexpr std::uint32_t kBFloat16DotProductKHR = 5117;
inline constexpr std::uint32_t kBFloat16CooperativeMatrixKHR = 5118;
inline constexpr std::uint32_t kVulkanMemoryModel = 5345;
inline constexpr std::uint32_t kVulkanMemoryModelDeviceScope = 5346;
inline constexpr std::uint32_t kCooperativeMatrixNV = 5357;
inline constexpr std::uint32_t kCooperativeMatrixReductionsNV = 5430;
inline constexpr std::uint32_t kCooperativeMatrixConversionsNV = 5431;
inline constexpr std::uint32_t kCooperativeMatrixPerElementOperationsNV = 5432;
inline constexpr std::uint32_t kCooperativeMatrixTensorAddressingNV = 5433;
inline constexpr std::uint32_t kCooperativeMatrixBlockLoadsNV = 5434;
inline constexpr std::uint32_t kTensorAddressingNV = 5439;
inline constexpr std::uint32_t kAtomicFloat32MinMaxEXT = 5612;
inline constexpr std::uint32_t kAtomicFloat64MinMaxEXT = 5613;
inline constexpr std::uint32_t kAtomicFloat16MinMaxEXT = 5616;
inline constexpr std::uint32_t kDotProductInputAllKHR = 6016;
inline constexpr std::uint32_t kDotProductInput4x8BitKHR = 6017;
inline constexpr std::uint32_t kDotProductInput4x8BitPackedKHR = 6018;
inline constexpr std::uint32_t kDotProductKHR = 6019;
inline constexpr std::uint32_t kCooperativeMatrixKHR = 6022;
inline constexpr std::uint32_t kAtomicFloat32AddEXT = 6033;
inline constexpr std::uint32_t kAtomicFloat64AddEXT = 6034;
inline constexpr std::uint32_t kAtomicFloat16AddEXT = 6095;

// Every number above: the capabilities libtune checks against the device's features.
inline constexpr std::uint32_t kNamed[] = {kFloat16,
                                           kFloat64,
                                           kInt64,
                                           kInt64Atomics,
                                           kInt16,
                                           kInt8,
                                           kGroupNonUniform,
                                           kGroupNonUniformVote,
                                           kGroupNonUniformArithmetic,
                                           kGroupNonUniformBallot,
                                           kGroupNonUniformShuffle,
                                           kGroupNonUniformShuffleRelative,
                                           kGroupNonUniformClustered,
                                           kGroupNonUniformQuad,
                                           kStorageBuffer16BitAccess,
                                           kUniformAndStorageBuffer16BitAccess,
                                           kStorageBuffer8BitAccess,
                                           kUniformAndStorageBuffer8BitAccess,
                                           kBFloat16TypeKHR,
                                           kBFloat16DotProductKHR,
                                           kBFloat16CooperativeMatrixKHR,
                                           kVulkanMemoryModel,
                                           kVulkanMemoryModelDeviceScope,
                                           kCooperativeMatrixNV,
                                           kCooperativeMatrixReductionsNV,
                                           kCooperativeMatrixConversionsNV,
                                           kCooperativeMatrixPerElementOperationsNV,
                                           kCooperativeMatrixTensorAddressingNV,
                                           kCooperativeMatrixBlockLoadsNV,
                                           kTensorAddressingNV,
                                           kCooperativeMatrixKHR,
                                           kAtomicFloat32MinMaxEXT,
                                           kAtomicFloat64MinMaxEXT,
                                           kAtomicFloat16MinMaxEXT,
                                           kDotProductInputAllKHR,
                                           kDotProductInput4x8BitKHR,
                                           kDotProductInput4x8BitPackedKHR,
                                           kDotProductKHR,
                                           kAtomicFloat32AddEXT,
                                           kAtomicFloat64AddEXT,
                                           kAtomicFloat16AddEXT};

// The capabilities a Vulkan version enables with no feature to ask (Vulkan's registry), with
// the minor version of Vulkan 1.x that does: with kNamed, the only ones libtune lets a module
// declare. Any other (gated by a feature, extension or property libtune neither enables nor
// checks, or unknown to Vulkan) is refused naming it, rather than handed to the driver as
// invalid usage. Matrix, Shader, InputAttachment, Sampled1D, Image1D, SampledBuffer,
// ImageBuffer, StorageImageExtendedFormats, ImageQuery, DerivativeControl,
// StorageImage{Read,Write}WithoutFormat (a feature before 1.3), DeviceGroup, ShaderNonUniform.
struct CoreCapability {
  std::uint32_t cap;
  std::uint32_t minor;
};
inline constexpr CoreCapability kCore[] = {{0, 0},  {1, 0},  {40, 0},   {43, 0},  {44, 0},
                                           {46, 0}, {47, 0}, {49, 0},   {50, 0},  {51, 0},
                                           {55, 3}, {56, 3}, {4437, 1}, {5301, 2}};

// `cap`'s entry of kCore; nullptr when it is not core.
const CoreCapability* find_core(std::uint32_t cap);

// Whether libtune checks `cap` against the device (kNamed) or takes it as core (kCore).
bool known(std::uint32_t cap);

// Names of the capabilities Vulkan's registry gates that libtune does not check, for the
// refusal's message (spirv_unenabled.cpp says where the list comes from).
struct UnenabledCapability {
  std::uint32_t cap;
  const char* name;
};
std::span<const UnenabledCapability> unenabled();              // sorted by cap
const UnenabledCapability* find_unenabled(std::uint32_t cap);  // nullptr when not one of them

// The capabilities that declaring `cap` implicitly declares (the SPIR-V grammar's
// "capabilities" of its enumerant; Shader, core in Vulkan compute, left out): a module that
// declares `cap` needs them too. Empty for the numbers not listed above.
std::span<const std::uint32_t> implied(std::uint32_t cap);
}  // namespace spv_cap

}  // namespace tune::vk
