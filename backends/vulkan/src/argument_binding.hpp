// Argument binding: a launch's arguments checked against one compiled shader's interface
// (spirv_reflect.hpp's SpirvInfo) and turned into what a dispatch records.
//
// Buffer argument i is binding i and scalar argument i push-constant member i, as far as the
// SPIR-V still declares them: a binding or a whole push-constant block that a variant never
// uses (its uses compiled out by the variant's macros) is optimised away, and its arguments are
// checked but not bound. What the shader does declare must match the call exactly. Scalars are
// packed 32-bit (8/16-bit integers widened) at 4-byte alignment, 64-bit at 8.
//
// Ownership: BoundArgs holds the buffers' VkBuffer handles (with the offset and range a
// wrapped application buffer binds), borrowed for one launch.
// Thread safety: reentrant (no state of its own). Blocking: none.
// Allocation: none when `out` already has the capacity (a BoundArgs reused for the same
// kernel's launches: a dispatch recorded into an application's command buffer allocates
// nothing); error messages are built only on the error path.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "spirv_reflect.hpp"
#include "tune/args.hpp"
#include "tune/device.hpp"

namespace tune::vk {

// The buffers and packed push constants of one launch.
struct BoundArgs {
  // (binding, buffer range), by binding
  std::vector<std::pair<std::uint32_t, VkDescriptorBufferInfo>> buffers;
  std::vector<std::uint8_t> push;  // the push-constant block's bytes
};

// The VkBuffer range of a buffer argument; nullopt for a buffer that is not the device's.
using BufferLookup = std::function<std::optional<VkDescriptorBufferInfo>(const DeviceBuffer&)>;

// Fills `*out` (its previous contents replaced, its capacity kept); invalid_argument, naming
// the argument, for anything that does not match the shader.
Status bind_arguments(const SpirvInfo& si, ArgList args, const BufferLookup& lookup,
                      BoundArgs* out);

// Why the module's interface is not exactly the one `sig` implies, or empty when it is: a
// launch with arguments of those kinds and types must bind (bind_arguments' rules), every
// buffer argument i must be binding i, and with any scalar argument the push-constant block
// must hold one member per scalar. A module compiled with some of them unused passes a
// launch but not this: what the binary cache keeps on disk must match it (what is on disk
// may have been put there by someone else).
std::string interface_mismatch(const SpirvInfo& si, const KernelSignature& sig);

}  // namespace tune::vk
