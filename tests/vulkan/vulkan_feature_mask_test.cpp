// What an application's VkDevice offers libtune (backends/vulkan/src/feature_mask.hpp): the
// physical device's capabilities masked by vulkan::EnabledFeatures, field by field, on a
// snapshot of an H200 with every optional feature. No device is needed.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "device_facts.hpp"
#include "device_snapshots.hpp"
#include "feature_mask.hpp"
#include "spirv_capabilities.hpp"
#include "spirv_reflect.hpp"
#include "tune/vulkan_interop.hpp"

namespace {

using namespace tune;
using namespace tune::vk;
using namespace tune::vk::snapshots;

// Every field of vulkan::EnabledFeatures on.
vulkan::EnabledFeatures all_enabled() {
  vulkan::EnabledFeatures f;
  f.shader_int64 = f.shader_float64 = f.shader_int16 = f.shader_float16 = f.shader_int8 = true;
  f.storage_buffer_16bit = f.storage_buffer_8bit = f.vulkan_memory_model = true;
  f.shader_buffer_int64_atomics = f.shader_shared_int64_atomics = true;
  f.cooperative_matrix_nv = f.subgroup_size_control = f.maintenance4 = true;
  f.cooperative_matrix_khr = true;
  f.cooperative_matrix2_nv = {true, true, true, true, true, true, true};
  f.shader_bfloat16_khr = {true, true, true};
  for (const FloatAtomicFeature& a : float_atomic_features())
    f.shader_buffer_float_atomics.*a.member = f.shader_shared_float_atomics.*a.member = true;
  f.shader_integer_dot_product = true;
  return f;
}

// The H200 with every optional feature the backend knows of (uniform-buffer 16/8-bit access,
// every subgroup operation and a subgroup-size range included).
DeviceCaps every_feature() {
  DeviceCaps c = h200_with_coopmat2();
  c.uniform_storage16 = c.uniform_storage8 = true;
  c.subgroup_ops = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_VOTE_BIT |
                   VK_SUBGROUP_FEATURE_ARITHMETIC_BIT | VK_SUBGROUP_FEATURE_BALLOT_BIT |
                   VK_SUBGROUP_FEATURE_SHUFFLE_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT |
                   VK_SUBGROUP_FEATURE_CLUSTERED_BIT | VK_SUBGROUP_FEATURE_QUAD_BIT;
  c.subgroup_size_control = true;
  c.min_subgroup_size = c.max_subgroup_size = 32;
  for (const FloatAtomicFeature& a : float_atomic_features())
    c.float_atomics_buffer.*a.member = c.float_atomics_shared.*a.member = true;
  c.integer_dot_product = true;
  return c;
}

// One EnabledFeatures field turned off, and what the application's device must then lack: the
// capabilities (with those implying them) and the matrix offers.
struct FeatureOff {
  std::string field;
  std::function<void(vulkan::EnabledFeatures&)> off;
  std::vector<std::uint32_t> lost;
  bool subgroup_matrices = false, f16_workgroup = false, bf16_workgroup = false;
};

std::vector<FeatureOff> each_feature_off() {
  using F = vulkan::EnabledFeatures;
  namespace c = spv_cap;
  return {
      {"shader_int64", [](F& f) { f.shader_int64 = false; }, {c::kInt64, c::kInt64Atomics}},
      // Int64Atomics stays with either of its two features (where the atomics act is checked
      // per module: vulkan_atomics_test.cpp).
      {"shader_buffer_int64_atomics", [](F& f) { f.shader_buffer_int64_atomics = false; }, {}},
      {"shader_shared_int64_atomics", [](F& f) { f.shader_shared_int64_atomics = false; }, {}},
      {"shader_float64", [](F& f) { f.shader_float64 = false; }, {c::kFloat64}},
      {"shader_integer_dot_product",
       [](F& f) { f.shader_integer_dot_product = false; },
       {c::kDotProductInputAllKHR, c::kDotProductInput4x8BitKHR, c::kDotProductInput4x8BitPackedKHR,
        c::kDotProductKHR}},
      // (The float atomics' fields, place by place: the last test case.)
      {"shader_int16", [](F& f) { f.shader_int16 = false; }, {c::kInt16}},
      {"shader_float16", [](F& f) { f.shader_float16 = false; }, {c::kFloat16}, true, true, true},
      {"shader_int8",
       [](F& f) { f.shader_int8 = false; },
       {c::kInt8, c::kDotProductInput4x8BitKHR}},
      {"storage_buffer_16bit",
       [](F& f) { f.storage_buffer_16bit = false; },
       {c::kStorageBuffer16BitAccess},
       true,
       true,
       true},
      {"storage_buffer_8bit",
       [](F& f) { f.storage_buffer_8bit = false; },
       {c::kStorageBuffer8BitAccess}},
      {"vulkan_memory_model",
       [](F& f) { f.vulkan_memory_model = false; },
       {c::kVulkanMemoryModel, c::kVulkanMemoryModelDeviceScope},
       true,
       true,
       true},
      {"cooperative_matrix_nv",
       [](F& f) { f.cooperative_matrix_nv = false; },
       {c::kCooperativeMatrixNV},
       true},
      {"subgroup_size_control", [](F& f) { f.subgroup_size_control = false; }, {}},
      {"maintenance4", [](F& f) { f.maintenance4 = false; }, {}, false, true, true},
      {"cooperative_matrix_khr",
       [](F& f) { f.cooperative_matrix_khr = false; },
       {c::kCooperativeMatrixKHR, c::kBFloat16CooperativeMatrixKHR,
        c::kCooperativeMatrixReductionsNV, c::kCooperativeMatrixConversionsNV,
        c::kCooperativeMatrixPerElementOperationsNV, c::kCooperativeMatrixTensorAddressingNV,
        c::kCooperativeMatrixBlockLoadsNV, c::kTensorAddressingNV},
       false,
       true,
       true},
      {"cooperative_matrix2_nv.workgroup_scope",
       [](F& f) { f.cooperative_matrix2_nv.workgroup_scope = false; },
       {},
       false,
       true,
       true},
      {"cooperative_matrix2_nv.flexible_dimensions",
       [](F& f) { f.cooperative_matrix2_nv.flexible_dimensions = false; },
       {},
       false,
       true,
       true},
      {"cooperative_matrix2_nv.reductions",
       [](F& f) { f.cooperative_matrix2_nv.reductions = false; },
       {c::kCooperativeMatrixReductionsNV}},
      {"cooperative_matrix2_nv.conversions",
       [](F& f) { f.cooperative_matrix2_nv.conversions = false; },
       {c::kCooperativeMatrixConversionsNV}},
      {"cooperative_matrix2_nv.per_element_operations",
       [](F& f) { f.cooperative_matrix2_nv.per_element_operations = false; },
       {c::kCooperativeMatrixPerElementOperationsNV}},
      {"cooperative_matrix2_nv.tensor_addressing",
       [](F& f) { f.cooperative_matrix2_nv.tensor_addressing = false; },
       {c::kCooperativeMatrixTensorAddressingNV, c::kTensorAddressingNV},
       false,
       true,
       true},
      {"cooperative_matrix2_nv.block_loads",
       [](F& f) { f.cooperative_matrix2_nv.block_loads = false; },
       {c::kCooperativeMatrixBlockLoadsNV}},
      {"shader_bfloat16_khr.type",
       [](F& f) { f.shader_bfloat16_khr.type = false; },
       {c::kBFloat16TypeKHR, c::kBFloat16DotProductKHR, c::kBFloat16CooperativeMatrixKHR},
       false,
       false,
       true},
      {"shader_bfloat16_khr.dot_product",
       [](F& f) { f.shader_bfloat16_khr.dot_product = false; },
       {c::kBFloat16DotProductKHR}},
      {"shader_bfloat16_khr.cooperative_matrix",
       [](F& f) { f.shader_bfloat16_khr.cooperative_matrix = false; },
       {c::kBFloat16CooperativeMatrixKHR},
       false,
       false,
       true},
  };
}

bool uniform_access(std::uint32_t cap) {
  return cap == spv_cap::kUniformAndStorageBuffer16BitAccess ||
         cap == spv_cap::kUniformAndStorageBuffer8BitAccess;
}

}  // namespace

TEST_CASE("device facts: an application's device offers what the application enabled, no more") {
  const DeviceCaps device = every_feature();
  const DeviceInfo unmasked = device_info(device, "");
  REQUIRE_FALSE(unmasked.matrix_shapes_f16.empty());
  REQUIRE_FALSE(unmasked.workgroup_matrix_f16.empty());
  REQUIRE_FALSE(unmasked.workgroup_matrix_bf16.empty());
  for (std::uint32_t cap : spv_cap::kNamed) REQUIRE(supports_capability(device, cap));

  // Everything enabled: nothing lost but uniform-buffer 16/8-bit access (no field for it).
  DeviceCaps all = device;
  mask_by_enabled_features(all_enabled(), all);
  for (std::uint32_t cap : spv_cap::kNamed) {
    CAPTURE(capability_name(cap));
    CHECK(supports_capability(all, cap) == !uniform_access(cap));
  }
  const DeviceInfo info = device_info(all, "");
  CHECK(info.matrix_shapes_f16.size() == unmasked.matrix_shapes_f16.size());
  CHECK(info.workgroup_matrix_f16.size() == unmasked.workgroup_matrix_f16.size());
  CHECK(info.workgroup_matrix_bf16.size() == unmasked.workgroup_matrix_bf16.size());
  CHECK(info.min_subgroup_size == 32);
  CHECK(all.coopmat2_max_workgroup == 256);

  // Each field off alone: exactly its capabilities and the offers that need it go.
  for (const FeatureOff& one : each_feature_off()) {
    CAPTURE(one.field);
    vulkan::EnabledFeatures f = all_enabled();
    one.off(f);
    DeviceCaps c = device;
    mask_by_enabled_features(f, c);
    for (std::uint32_t cap : spv_cap::kNamed) {
      CAPTURE(capability_name(cap));
      const bool lost = std::find(one.lost.begin(), one.lost.end(), cap) != one.lost.end();
      CHECK(supports_capability(c, cap) == !(lost || uniform_access(cap)));
    }
    const DeviceInfo masked = device_info(c, "");
    CHECK(masked.matrix_shapes_f16.empty() == one.subgroup_matrices);
    CHECK(masked.workgroup_matrix_f16.empty() == one.f16_workgroup);
    CHECK(masked.workgroup_matrix_bf16.empty() == one.bf16_workgroup);
    // The limits and lists that hang on a feature go with it, whatever device_info reads.
    CHECK(c.int64_atomics_buffer == (one.field != "shader_buffer_int64_atomics"));
    CHECK(c.int64_atomics_shared == (one.field != "shader_shared_int64_atomics"));
    const bool sizes = one.field != "subgroup_size_control";
    CHECK(c.subgroup_size_control == sizes);
    CHECK((masked.min_subgroup_size == 32) == sizes);
    CHECK((masked.max_subgroup_size == 32) == sizes);
    const bool khr = one.field == "cooperative_matrix_khr";
    CHECK((c.coopmat2_max_workgroup == 256) ==
          !(khr || one.field == "cooperative_matrix2_nv.workgroup_scope"));
    const bool shapes = !(khr || one.field == "cooperative_matrix2_nv.flexible_dimensions");
    CHECK(c.coopmat2_shapes_f16.empty() == !shapes);
    CHECK(c.coopmat2_shapes_bf16.empty() == !shapes);
    CHECK(c.coopmat_shapes_f16.empty() == (one.field == "cooperative_matrix_nv"));
  }

  // Enabled but absent: nothing is taken on trust.
  DeviceCaps bare = lavapipe();
  mask_by_enabled_features(all_enabled(), bare);
  CHECK_FALSE(supports_capability(bare, spv_cap::kBFloat16TypeKHR));
  CHECK_FALSE(supports_capability(bare, spv_cap::kCooperativeMatrixKHR));
  CHECK(device_info(bare, "").workgroup_matrix_f16.empty());
}

// Each float-atomic feature of each place goes alone when the application leaves it off; a
// capability goes only when neither place's feature is on.
TEST_CASE("device facts: float atomics as the application enabled them, place by place") {
  const DeviceCaps device = every_feature();
  // The capability of each (width, operation) feature; none for load, store and exchange.
  auto capability_of = [](const FloatAtomicFeature& a) -> std::uint32_t {
    const std::string op = a.suffix;
    if (op == "AtomicAdd")
      return a.bits == 16   ? spv_cap::kAtomicFloat16AddEXT
             : a.bits == 32 ? spv_cap::kAtomicFloat32AddEXT
                            : spv_cap::kAtomicFloat64AddEXT;
    if (op == "AtomicMinMax")
      return a.bits == 16   ? spv_cap::kAtomicFloat16MinMaxEXT
             : a.bits == 32 ? spv_cap::kAtomicFloat32MinMaxEXT
                            : spv_cap::kAtomicFloat64MinMaxEXT;
    return 0;
  };
  for (const FloatAtomicFeature& a : float_atomic_features()) {
    for (const bool shared : {false, true}) {
      CAPTURE(feature_name(a, shared));
      vulkan::EnabledFeatures f = all_enabled();
      // Through a named reference: GCC 12 writes `(c ? x : y).*m` into a temporary copy.
      FloatAtomics& place = shared ? f.shader_shared_float_atomics : f.shader_buffer_float_atomics;
      place.*a.member = false;
      DeviceCaps c = device;
      mask_by_enabled_features(f, c);
      for (const FloatAtomicFeature& b : float_atomic_features()) {
        CHECK(c.float_atomics_buffer.*b.member == (shared || &b != &a));
        CHECK(c.float_atomics_shared.*b.member == (!shared || &b != &a));
      }
      if (const std::uint32_t cap = capability_of(a)) CHECK(supports_capability(c, cap));
    }
    vulkan::EnabledFeatures f = all_enabled();
    f.shader_buffer_float_atomics.*a.member = f.shader_shared_float_atomics.*a.member = false;
    DeviceCaps c = device;
    mask_by_enabled_features(f, c);
    for (std::uint32_t cap : spv_cap::kNamed) {
      CAPTURE(capability_name(cap));
      CHECK(supports_capability(c, cap) == (cap != capability_of(a) && !uniform_access(cap)));
    }
  }
  // Enabled but absent: lavapipe's 16- and 64-bit ones stay off.
  DeviceCaps bare = lavapipe();
  mask_by_enabled_features(all_enabled(), bare);
  CHECK(bare.float_atomics_buffer.float32_add);
  CHECK_FALSE(bare.float_atomics_buffer.float64_add);
  CHECK_FALSE(bare.float_atomics_shared.float16);
}
