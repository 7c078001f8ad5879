// ComputePipeline: the Vulkan objects one compiled kernel runs with, once its SPIR-V has been
// checked against the device (check_spirv): its descriptor-set layout (storage buffers at the
// bindings the SPIR-V still declares), its pipeline layout (with the push-constant block) and
// its compute pipeline, created from SPIR-V through the device's VkPipelineCache (the
// transient shader module is destroyed once the pipeline exists).
//
// Ownership: the returned handles own their objects (vk_handles.hpp); the VkDevice must
// outlive them. Thread safety: reentrant (VkPipelineCache is internally synchronised).
// Blocking: pipeline creation runs the driver's compiler on the calling thread.
#pragma once

#include <vulkan/vulkan.h>

#include <string>

#include "device_facts.hpp"
#include "shader_compiler.hpp"
#include "specialization.hpp"
#include "spirv_reflect.hpp"
#include "tune/device.hpp"
#include "vk_handles.hpp"

namespace tune::vk {

struct ComputePipeline {
  DescriptorSetLayout set_layout;
  PipelineLayout layout;
  Pipeline pipeline;
};

// Checks that need the SPIR-V, before its pipeline is created: the device features it needs
// (unavailable naming the capability and `device_name`), the interface shape this backend binds
// (storage buffers in set 0), a fixed workgroup dimension unlike `block`'s, workgroup-scope
// cooperative matrices (the device's scope and largest workgroup), and the shared-memory and
// push-constant limits of `caps`.
Status check_spirv(const SpirvInfo& si, const Dim3& block, const DeviceCaps& caps,
                   const std::string& device_name);

// The pipeline of `spirv` with the specialization constants `spec` sets (make_specialization:
// the workgroup size and, for a precompiled module, the named constants), its subgroup size
// required to be `subgroup_size` when not 0 (checked against the device beforehand:
// check_subgroup_size). The failed call's Status otherwise (compile_error when the pipeline
// itself fails); `*device_lost` is set when its creation reported VK_ERROR_DEVICE_LOST (the
// caller marks its queue lost).
Result<ComputePipeline> create_compute_pipeline(VkDevice device, VkPipelineCache cache,
                                                const ShaderCompiler::Spirv& spirv,
                                                Specialization& spec, std::uint32_t subgroup_size,
                                                bool* device_lost);

}  // namespace tune::vk
