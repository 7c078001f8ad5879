// Float atomics: the eighteen features of VK_EXT_shader_atomic_float and
// VK_EXT_shader_atomic_float2 that a compute shader's float atomics on buffers and shared
// memory need (one per width, operation and place), their Vulkan names, and their exchange with
// the extensions' feature structures. Image atomics are left out: libtune binds no images.
// Pure functions and constant data; thread-safe.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <span>
#include <string>

#include "spirv_capabilities.hpp"
#include "tune/vulkan.hpp"

namespace tune::vk {

using FloatAtomics = vulkan::ShaderFloatAtomics;

// The extension that defines a feature.
enum class FloatAtomicExtension : std::uint8_t { shader_atomic_float, shader_atomic_float2 };

// One feature per place: a member of FloatAtomics and what it allows.
struct FloatAtomicFeature {
  bool FloatAtomics::*member;
  unsigned bits;          // 16, 32 or 64
  const char* operation;  // "load, store or exchange", "add", "min or max"
  const char* suffix;     // of its Vulkan name: "Atomics", "AtomicAdd", "AtomicMinMax"
  FloatAtomicExtension extension;
  std::uint32_t capability;  // the SPIR-V capability it enables (spv_cap); 0: none needed
};

// The nine, by width then operation.
std::span<const FloatAtomicFeature> float_atomic_features();

// The feature (of either place) that enables SPIR-V capability `cap`; nullptr for another cap.
const FloatAtomicFeature* feature_of_capability(std::uint32_t cap);

// Its Vulkan name on buffers or in shared memory: "shaderSharedFloat16AtomicMinMax".
std::string feature_name(const FloatAtomicFeature& f, bool shared);

// Its extension's name: "VK_EXT_shader_atomic_float".
const char* extension_name(FloatAtomicExtension e);

// Whether `a` has one of `e`'s features.
bool uses_extension(const FloatAtomics& a, FloatAtomicExtension e);

// The features `need` has and `have` lacks: the first, nullptr when none.
const FloatAtomicFeature* first_missing(const FloatAtomics& need, const FloatAtomics& have);

// Read from / written to the extensions' structures (buffer and shared features; the image
// ones are neither read nor set).
void from_vk(const VkPhysicalDeviceShaderAtomicFloatFeaturesEXT& f1,
             const VkPhysicalDeviceShaderAtomicFloat2FeaturesEXT& f2, FloatAtomics& buffer,
             FloatAtomics& shared);
void to_vk(const FloatAtomics& buffer, const FloatAtomics& shared,
           VkPhysicalDeviceShaderAtomicFloatFeaturesEXT& f1,
           VkPhysicalDeviceShaderAtomicFloat2FeaturesEXT& f2);

// The device's features `device` as far as `enabled` (what an application enabled) has them.
FloatAtomics masked_by(const FloatAtomics& device, const FloatAtomics& enabled);

}  // namespace tune::vk
