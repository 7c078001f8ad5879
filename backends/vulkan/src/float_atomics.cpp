// See float_atomics.hpp.
#include "float_atomics.hpp"

#include "vk_status.hpp"

namespace tune::vk {
namespace {

constexpr FloatAtomicExtension kFirst = FloatAtomicExtension::shader_atomic_float;
constexpr FloatAtomicExtension kSecond = FloatAtomicExtension::shader_atomic_float2;

constexpr FloatAtomicFeature kFeatures[] = {
    {&FloatAtomics::float16, 16, "load, store or exchange", "Atomics", kSecond, 0},
    {&FloatAtomics::float16_add, 16, "add", "AtomicAdd", kSecond, spv_cap::kAtomicFloat16AddEXT},
    {&FloatAtomics::float16_min_max, 16, "min or max", "AtomicMinMax", kSecond,
     spv_cap::kAtomicFloat16MinMaxEXT},
    {&FloatAtomics::float32, 32, "load, store or exchange", "Atomics", kFirst, 0},
    {&FloatAtomics::float32_add, 32, "add", "AtomicAdd", kFirst, spv_cap::kAtomicFloat32AddEXT},
    {&FloatAtomics::float32_min_max, 32, "min or max", "AtomicMinMax", kSecond,
     spv_cap::kAtomicFloat32MinMaxEXT},
    {&FloatAtomics::float64, 64, "load, store or exchange", "Atomics", kFirst, 0},
    {&FloatAtomics::float64_add, 64, "add", "AtomicAdd", kFirst, spv_cap::kAtomicFloat64AddEXT},
    {&FloatAtomics::float64_min_max, 64, "min or max", "AtomicMinMax", kSecond,
     spv_cap::kAtomicFloat64MinMaxEXT},
};

}  // namespace

std::span<const FloatAtomicFeature> float_atomic_features() { return kFeatures; }

const FloatAtomicFeature* feature_of_capability(std::uint32_t cap) {
  for (const FloatAtomicFeature& f : kFeatures)
    if (f.capability != 0 && f.capability == cap) return &f;
  return nullptr;
}

std::string feature_name(const FloatAtomicFeature& f, bool shared) {
  return std::string(shared ? "shaderShared" : "shaderBuffer") + "Float" + std::to_string(f.bits) +
         f.suffix;
}

const char* extension_name(FloatAtomicExtension e) {
  return e == kFirst ? VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME
                     : VK_EXT_SHADER_ATOMIC_FLOAT_2_EXTENSION_NAME;
}

bool uses_extension(const FloatAtomics& a, FloatAtomicExtension e) {
  for (const FloatAtomicFeature& f : kFeatures)
    if (f.extension == e && a.*f.member) return true;
  return false;
}

const FloatAtomicFeature* first_missing(const FloatAtomics& need, const FloatAtomics& have) {
  for (const FloatAtomicFeature& f : kFeatures)
    if (need.*f.member && !(have.*f.member)) return &f;
  return nullptr;
}

void from_vk(const VkPhysicalDeviceShaderAtomicFloatFeaturesEXT& f1,
             const VkPhysicalDeviceShaderAtomicFloat2FeaturesEXT& f2, FloatAtomics& buffer,
             FloatAtomics& shared) {
  buffer.float32 = is_true(f1.shaderBufferFloat32Atomics);
  buffer.float32_add = is_true(f1.shaderBufferFloat32AtomicAdd);
  buffer.float64 = is_true(f1.shaderBufferFloat64Atomics);
  buffer.float64_add = is_true(f1.shaderBufferFloat64AtomicAdd);
  shared.float32 = is_true(f1.shaderSharedFloat32Atomics);
  shared.float32_add = is_true(f1.shaderSharedFloat32AtomicAdd);
  shared.float64 = is_true(f1.shaderSharedFloat64Atomics);
  shared.float64_add = is_true(f1.shaderSharedFloat64AtomicAdd);
  buffer.float16 = is_true(f2.shaderBufferFloat16Atomics);
  buffer.float16_add = is_true(f2.shaderBufferFloat16AtomicAdd);
  buffer.float16_min_max = is_true(f2.shaderBufferFloat16AtomicMinMax);
  buffer.float32_min_max = is_true(f2.shaderBufferFloat32AtomicMinMax);
  buffer.float64_min_max = is_true(f2.shaderBufferFloat64AtomicMinMax);
  shared.float16 = is_true(f2.shaderSharedFloat16Atomics);
  shared.float16_add = is_true(f2.shaderSharedFloat16AtomicAdd);
  shared.float16_min_max = is_true(f2.shaderSharedFloat16AtomicMinMax);
  shared.float32_min_max = is_true(f2.shaderSharedFloat32AtomicMinMax);
  shared.float64_min_max = is_true(f2.shaderSharedFloat64AtomicMinMax);
}

void to_vk(const FloatAtomics& buffer, const FloatAtomics& shared,
           VkPhysicalDeviceShaderAtomicFloatFeaturesEXT& f1,
           VkPhysicalDeviceShaderAtomicFloat2FeaturesEXT& f2) {
  f1.shaderBufferFloat32Atomics = vk_bool(buffer.float32);
  f1.shaderBufferFloat32AtomicAdd = vk_bool(buffer.float32_add);
  f1.shaderBufferFloat64Atomics = vk_bool(buffer.float64);
  f1.shaderBufferFloat64AtomicAdd = vk_bool(buffer.float64_add);
  f1.shaderSharedFloat32Atomics = vk_bool(shared.float32);
  f1.shaderSharedFloat32AtomicAdd = vk_bool(shared.float32_add);
  f1.shaderSharedFloat64Atomics = vk_bool(shared.float64);
  f1.shaderSharedFloat64AtomicAdd = vk_bool(shared.float64_add);
  f2.shaderBufferFloat16Atomics = vk_bool(buffer.float16);
  f2.shaderBufferFloat16AtomicAdd = vk_bool(buffer.float16_add);
  f2.shaderBufferFloat16AtomicMinMax = vk_bool(buffer.float16_min_max);
  f2.shaderBufferFloat32AtomicMinMax = vk_bool(buffer.float32_min_max);
  f2.shaderBufferFloat64AtomicMinMax = vk_bool(buffer.float64_min_max);
  f2.shaderSharedFloat16Atomics = vk_bool(shared.float16);
  f2.shaderSharedFloat16AtomicAdd = vk_bool(shared.float16_add);
  f2.shaderSharedFloat16AtomicMinMax = vk_bool(shared.float16_min_max);
  f2.shaderSharedFloat32AtomicMinMax = vk_bool(shared.float32_min_max);
  f2.shaderSharedFloat64AtomicMinMax = vk_bool(shared.float64_min_max);
}

FloatAtomics masked_by(const FloatAtomics& device, const FloatAtomics& enabled) {
  FloatAtomics out;
  for (const FloatAtomicFeature& f : kFeatures)
    out.*f.member = device.*f.member && enabled.*f.member;
  return out;
}

}  // namespace tune::vk
