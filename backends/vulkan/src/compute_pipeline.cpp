// ComputePipeline: layouts and the compute pipeline of one kernel.
#include "compute_pipeline.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "spirv_capabilities.hpp"
#include "vk_status.hpp"

namespace tune::vk {
namespace {

// The bindings the SPIR-V still declares: one whose every use a variant's macros removed was
// optimised away with its variable, leaving a hole that no descriptor fills.
Status create_layouts(VkDevice device, const SpirvInfo& si, DescriptorSetLayout* set_layout,
                      PipelineLayout* layout) {
  std::vector<VkDescriptorSetLayoutBinding> bindings(si.bindings.size());
  for (std::size_t i = 0; i < bindings.size(); ++i) {
    bindings[i] = {si.bindings[i], VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                   VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  }
  auto dli = vk_struct<VkDescriptorSetLayoutCreateInfo>(
      VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
  dli.bindingCount = static_cast<std::uint32_t>(bindings.size());
  dli.pBindings = bindings.data();
  TUNE_VK_RETURN_IF_ERROR(
      vkCreateDescriptorSetLayout(device, &dli, nullptr, set_layout->receive(device)),
      "vkCreateDescriptorSetLayout");
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, si.push_bytes};
  const VkDescriptorSetLayout set = set_layout->get();
  auto pli = vk_struct<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
  pli.setLayoutCount = 1;
  pli.pSetLayouts = &set;
  pli.pushConstantRangeCount = si.push_bytes > 0 ? 1 : 0;
  pli.pPushConstantRanges = &range;
  TUNE_VK_RETURN_IF_ERROR(vkCreatePipelineLayout(device, &pli, nullptr, layout->receive(device)),
                          "vkCreatePipelineLayout");
  return Status::ok_status();
}

}  // namespace

namespace {

// The module's 64-bit integer atomics act where the device allows them (Int64Atomics is one
// capability for two features).
Status check_int64_atomics(const SpirvInfo& si, const DeviceCaps& caps,
                           const std::string& device_name) {
  const char* feature = nullptr;
  const char* where = nullptr;
  if (si.int64_atomics_buffer && !caps.int64_atomics_buffer) {
    feature = "shaderBufferInt64Atomics";
    where = "buffers";
  } else if (si.int64_atomics_shared && !caps.int64_atomics_shared) {
    feature = "shaderSharedInt64Atomics";
    where = "shared memory";
  } else {
    return Status::ok_status();
  }
  return Status(StatusCode::unavailable,
                std::string("the shader performs 64-bit integer atomics on ") + where +
                    ", which needs " + feature + ": " + device_name + " does not support it");
}

// The module's float atomics act where the device allows them, at their width and operation
// (each its own feature; a capability such as AtomicFloat32AddEXT is satisfied by either place's).
Status check_float_atomics(const SpirvInfo& si, const DeviceCaps& caps,
                           const std::string& device_name) {
  for (const bool shared : {false, true}) {
    const FloatAtomicFeature* missing =
        shared ? first_missing(si.float_atomics_shared, caps.float_atomics_shared)
               : first_missing(si.float_atomics_buffer, caps.float_atomics_buffer);
    if (missing == nullptr) continue;
    return Status(StatusCode::unavailable, "the shader performs " + std::to_string(missing->bits) +
                                               "-bit float atomic " + missing->operation +
                                               (shared ? " on shared memory" : " on buffers") +
                                               ", which needs " + feature_name(*missing, shared) +
                                               " (" + extension_name(missing->extension) +
                                               "): " + device_name + " does not support it");
  }
  return Status::ok_status();
}

// Every capability the module declares, and every one those imply, is one the device has.
Status check_capabilities(const SpirvInfo& si, const DeviceCaps& caps,
                          const std::string& device_name) {
  for (std::uint32_t cap : si.capabilities) {
    const std::optional<std::uint32_t> missing = missing_capability(caps, cap);
    if (!missing) continue;
    const std::string implied = *missing == cap ? ""
                                                : " (the shader declares capability " +
                                                      capability_name(cap) + ", which implies it)";
    const std::string why =
        spv_cap::known(*missing)
            ? "which " + device_name + " does not support"
            : "which libtune does not support (it neither enables nor checks what Vulkan "
              "requires for it)";
    return Status(StatusCode::unavailable, "the shader needs SPIR-V capability " +
                                               capability_name(*missing) + ", " + why + implied);
  }
  return Status::ok_status();
}

// A dimension of the workgroup size that no specialization constant sets must be the block's.
Status check_fixed_dimensions(const SpirvInfo& si, const Dim3& block) {
  if (!block.any_set()) return Status::ok_status();
  const std::uint32_t asked[3] = {block.x, block.y, block.z};
  std::string differs;  // "y at 1 (asked 2)", per such dimension
  for (int d = 0; d < 3; ++d) {
    if (si.local_size_spec_id[d] != SpirvInfo::kFixed || si.local_size[d] == asked[d]) continue;
    differs += std::string(differs.empty() ? "" : ", ") + "xyz"[d] + " at " +
               std::to_string(si.local_size[d]) + " (asked " + std::to_string(asked[d]) + ")";
  }
  if (differs.empty()) return Status::ok_status();
  return Status(StatusCode::invalid_argument,
                "the shader fixes its workgroup size's " + differs + " but the config asks " +
                    to_string(block) +
                    ": declare layout(local_size_x_id = 0, local_size_y_id = 1, "
                    "local_size_z_id = 2) in;");
}

// Workgroup-scope cooperative matrices need the device's workgroup scope and a workgroup no
// larger than it allows.
Status check_workgroup_matrices(const SpirvInfo& si, const Dim3& block, const DeviceCaps& caps,
                                const std::string& device_name) {
  if (!si.workgroup_scope_matrices) return Status::ok_status();
  if (!caps.coopmat2.workgroup_scope) {
    return Status(StatusCode::unavailable,
                  "the shader uses workgroup-scope cooperative matrices, which " + device_name +
                      " does not support (VK_NV_cooperative_matrix2's "
                      "cooperativeMatrixWorkgroupScope)");
  }
  const Dim3 size =
      block.any_set() ? block : Dim3{si.local_size[0], si.local_size[1], si.local_size[2]};
  if (size.product() <= caps.coopmat2_max_workgroup) return Status::ok_status();
  return Status(StatusCode::out_of_resources,
                "the shader uses workgroup-scope cooperative matrices in a workgroup of " +
                    std::to_string(size.product()) + " invocations; " + device_name + " allows " +
                    std::to_string(caps.coopmat2_max_workgroup) +
                    " at most (cooperativeMatrixWorkgroupScopeMaxWorkgroupSize)");
}

// Shared memory (less what workgroup-scope matrices reserve) and the push-constant block
// within the device's limits.
Status check_sizes(const SpirvInfo& si, const DeviceCaps& caps) {
  const auto& l = caps.props.limits;
  const std::uint32_t reserved =
      si.workgroup_scope_matrices
          ? std::min(caps.coopmat2_reserved_shared, l.maxComputeSharedMemorySize)
          : 0u;
  if (si.shared_bytes > l.maxComputeSharedMemorySize - reserved) {
    return Status(StatusCode::out_of_resources,
                  "the shader uses " + std::to_string(si.shared_bytes) +
                      " bytes of shared memory; maxComputeSharedMemorySize is " +
                      std::to_string(l.maxComputeSharedMemorySize) +
                      (reserved == 0 ? std::string()
                                     : ", " + std::to_string(reserved) +
                                           " of it reserved for workgroup-scope matrices"));
  }
  if (si.push_bytes > l.maxPushConstantsSize) {
    return Status(StatusCode::out_of_resources,
                  "the push-constant block takes " + std::to_string(si.push_bytes) +
                      " bytes; maxPushConstantsSize is " + std::to_string(l.maxPushConstantsSize));
  }
  return Status::ok_status();
}

}  // namespace

Status check_spirv(const SpirvInfo& si, const Dim3& block, const DeviceCaps& caps,
                   const std::string& device_name) {
  TUNE_RETURN_IF_ERROR(check_capabilities(si, caps, device_name));
  if (si.uses_other_sets || si.uses_non_buffer_descriptors) {
    return Status(StatusCode::invalid_argument,
                  "the Vulkan backend binds storage buffers in descriptor set 0 only (no other "
                  "sets, uniform buffers, images or samplers)");
  }
  TUNE_RETURN_IF_ERROR(check_int64_atomics(si, caps, device_name));
  TUNE_RETURN_IF_ERROR(check_float_atomics(si, caps, device_name));
  TUNE_RETURN_IF_ERROR(check_fixed_dimensions(si, block));
  TUNE_RETURN_IF_ERROR(check_workgroup_matrices(si, block, caps, device_name));
  return check_sizes(si, caps);
}

Result<ComputePipeline> create_compute_pipeline(VkDevice device, VkPipelineCache cache,
                                                const ShaderCompiler::Spirv& spirv,
                                                Specialization& spec, std::uint32_t subgroup_size,
                                                bool* device_lost) {
  const SpirvInfo& si = spirv.info;
  auto smi = vk_struct<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
  smi.codeSize = spirv.words.size() * sizeof(std::uint32_t);
  smi.pCode = spirv.words.data();
  ShaderModule module;
  TUNE_VK_RETURN_IF_ERROR(vkCreateShaderModule(device, &smi, nullptr, module.receive(device)),
                          "vkCreateShaderModule");
  ComputePipeline out;
  TUNE_RETURN_IF_ERROR(create_layouts(device, si, &out.set_layout, &out.layout));

  auto cpi = vk_struct<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
  cpi.stage = vk_struct<VkPipelineShaderStageCreateInfo>(
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO);
  cpi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cpi.stage.module = module.get();
  cpi.stage.pName = "main";
  cpi.stage.pSpecializationInfo = spec.info();
  auto required = vk_struct<VkPipelineShaderStageRequiredSubgroupSizeCreateInfo>(
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO);
  required.requiredSubgroupSize = subgroup_size;
  if (subgroup_size != 0) cpi.stage.pNext = &required;
  cpi.layout = out.layout.get();
  VkResult r =
      vkCreateComputePipelines(device, cache, 1, &cpi, nullptr, out.pipeline.receive(device));
  if (r != VK_SUCCESS) {
    if (r == VK_ERROR_DEVICE_LOST) *device_lost = true;
    return make_error("vkCreateComputePipelines", r, StatusCode::compile_error);
  }
  return out;
}

}  // namespace tune::vk
