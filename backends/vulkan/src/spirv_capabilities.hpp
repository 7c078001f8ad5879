// What libtune knows of SPIR-V capabilities: the numbers it checks against a device's
// features (spv_cap::kNamed), those a Vulkan version enables with no feature to ask (kCore),
// the ones it refuses by name (spirv_unenabled.cpp), what declaring one implies, and their
// readable names for messages. Which device feature satisfies which capability is the device's
// side (device_facts.hpp, float_atomics.hpp). Pure data and functions; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace tune::vk {

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
