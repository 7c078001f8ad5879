// See feature_mask.hpp.
#include "feature_mask.hpp"

namespace tune::vk {
namespace {

// VK_NV_cooperative_matrix2's features as far as the application enabled them (none without
// VK_KHR_cooperative_matrix).
void mask_cooperative_matrix2(const vulkan::EnabledFeatures::CooperativeMatrix2& on,
                              DeviceCaps& caps) {
  DeviceCaps::Coopmat2& c = caps.coopmat2;
  const bool khr = caps.coopmat_khr;
  c.workgroup_scope = khr && c.workgroup_scope && on.workgroup_scope;
  c.flexible_dimensions = khr && c.flexible_dimensions && on.flexible_dimensions;
  c.reductions = khr && c.reductions && on.reductions;
  c.conversions = khr && c.conversions && on.conversions;
  c.per_element_operations = khr && c.per_element_operations && on.per_element_operations;
  c.tensor_addressing = khr && c.tensor_addressing && on.tensor_addressing;
  c.block_loads = khr && c.block_loads && on.block_loads;
  if (!c.workgroup_scope) caps.coopmat2_max_workgroup = 0;
  if (!c.flexible_dimensions) {
    caps.coopmat2_shapes_f16.clear();
    caps.coopmat2_shapes_bf16.clear();
  }
}

}  // namespace

void mask_by_enabled_features(const vulkan::EnabledFeatures& f, DeviceCaps& caps) {
  caps.int64 = caps.int64 && f.shader_int64;
  caps.float64 = caps.float64 && f.shader_float64;
  caps.int16 = caps.int16 && f.shader_int16;
  caps.float16 = caps.float16 && f.shader_float16;
  caps.int8 = caps.int8 && f.shader_int8;
  caps.storage16 = caps.storage16 && f.storage_buffer_16bit;
  caps.uniform_storage16 = false;
  caps.storage8 = caps.storage8 && f.storage_buffer_8bit;
  caps.uniform_storage8 = false;
  caps.memory_model = caps.memory_model && f.vulkan_memory_model;
  caps.int64_atomics_buffer = caps.int64_atomics_buffer && f.shader_buffer_int64_atomics;
  caps.int64_atomics_shared = caps.int64_atomics_shared && f.shader_shared_int64_atomics;
  caps.float_atomics_buffer = masked_by(caps.float_atomics_buffer, f.shader_buffer_float_atomics);
  caps.float_atomics_shared = masked_by(caps.float_atomics_shared, f.shader_shared_float_atomics);
  caps.integer_dot_product = caps.integer_dot_product && f.shader_integer_dot_product;
  if (!f.cooperative_matrix_nv) {
    caps.coopmat_nv = false;
    caps.coopmat_shapes_f16.clear();
  }
  caps.maintenance4 = caps.maintenance4 && f.maintenance4;
  caps.coopmat_khr = caps.coopmat_khr && f.cooperative_matrix_khr;
  mask_cooperative_matrix2(f.cooperative_matrix2_nv, caps);
  caps.bfloat16.type = caps.bfloat16.type && f.shader_bfloat16_khr.type;
  caps.bfloat16.dot_product = caps.bfloat16.dot_product && f.shader_bfloat16_khr.dot_product;
  caps.bfloat16.cooperative_matrix =
      caps.bfloat16.cooperative_matrix && f.shader_bfloat16_khr.cooperative_matrix;
  if (!f.subgroup_size_control) {
    caps.subgroup_size_control = false;
    caps.min_subgroup_size = caps.max_subgroup_size = 0;
  }
}

}  // namespace tune::vk
