// spv_cap::unenabled: the names of the SPIR-V capabilities Vulkan gates behind a feature,
// extension or property that libtune neither enables nor checks (refused, named in the message),
// Generated from the Vulkan registry of
// Debian 12 (vk.xml 1.3.239, its <spirvcapabilities>) and the SPIR-V grammar of spirv-headers:
// every capability the registry gates, less the core ones (enabled by a Vulkan version) and
// those libtune checks (spv_cap::kNamed); tests/vulkan/vulkan_facts_test.cpp reads both files
// and checks the list against them.
#include <algorithm>

#include "spirv_capabilities.hpp"

namespace tune::vk::spv_cap {
namespace {

constexpr UnenabledCapability kUnenabled[] = {
    {2, "Geometry"},
    {3, "Tessellation"},
    {23, "TessellationPointSize"},
    {24, "GeometryPointSize"},
    {25, "ImageGatherExtended"},
    {27, "StorageImageMultisample"},
    {28, "UniformBufferArrayDynamicIndexing"},
    {29, "SampledImageArrayDynamicIndexing"},
    {30, "StorageBufferArrayDynamicIndexing"},
    {31, "StorageImageArrayDynamicIndexing"},
    {32, "ClipDistance"},
    {33, "CullDistance"},
    {34, "ImageCubeArray"},
    {35, "SampleRateShading"},
    {41, "SparseResidency"},
    {42, "MinLod"},
    {45, "SampledCubeArray"},
    {48, "ImageMSArray"},
    {52, "InterpolationFunction"},
    {53, "TransformFeedback"},
    {54, "GeometryStreams"},
    {57, "MultiViewport"},
    {69, "ShaderLayer"},
    {70, "ShaderViewportIndex"},
    {4165, "CoreBuiltinsARM"},
    {4422, "FragmentShadingRateKHR"},
    {4423, "SubgroupBallotKHR"},
    {4427, "DrawParameters"},
    {4428, "WorkgroupMemoryExplicitLayoutKHR"},
    {4429, "WorkgroupMemoryExplicitLayout8BitAccessKHR"},
    {4430, "WorkgroupMemoryExplicitLayout16BitAccessKHR"},
    {4431, "SubgroupVoteKHR"},
    {4435, "StoragePushConstant16"},
    {4436, "StorageInputOutput16"},
    {4439, "MultiView"},
    {4441, "VariablePointersStorageBuffer"},
    {4442, "VariablePointers"},
    {4447, "SampleMaskPostDepthCoverage"},
    {4450, "StoragePushConstant8"},
    {4464, "DenormPreserve"},
    {4465, "DenormFlushToZero"},
    {4466, "SignedZeroInfNanPreserve"},
    {4467, "RoundingModeRTE"},
    {4468, "RoundingModeRTZ"},
    {4472, "RayQueryKHR"},
    {4478, "RayTraversalPrimitiveCullingKHR"},
    {4479, "RayTracingKHR"},
    {5009, "ImageGatherBiasLodAMD"},
    {5010, "FragmentMaskAMD"},
    {5013, "StencilExportEXT"},
    {5015, "ImageReadWriteLodAMD"},
    {5016, "Int64ImageEXT"},
    {5055, "ShaderClockKHR"},
    {5249, "SampleMaskOverrideCoverageNV"},
    {5251, "GeometryShaderPassthroughNV"},
    {5254, "ShaderViewportIndexLayerEXT"},
    {5254, "ShaderViewportIndexLayerNV"},
    {5255, "ShaderViewportMaskNV"},
    {5260, "PerViewAttributesNV"},
    {5265, "FragmentFullyCoveredEXT"},
    {5266, "MeshShadingNV"},
    {5282, "ImageFootprintNV"},
    {5283, "MeshShadingEXT"},
    {5284, "FragmentBarycentricKHR"},
    {5284, "FragmentBarycentricNV"},
    {5288, "ComputeDerivativeGroupQuadsNV"},
    {5291, "FragmentDensityEXT"},
    {5291, "ShadingRateNV"},
    {5297, "GroupNonUniformPartitionedNV"},
    {5302, "RuntimeDescriptorArray"},
    {5303, "InputAttachmentArrayDynamicIndexing"},
    {5304, "UniformTexelBufferArrayDynamicIndexing"},
    {5305, "StorageTexelBufferArrayDynamicIndexing"},
    {5306, "UniformBufferArrayNonUniformIndexing"},
    {5307, "SampledImageArrayNonUniformIndexing"},
    {5308, "StorageBufferArrayNonUniformIndexing"},
    {5309, "StorageImageArrayNonUniformIndexing"},
    {5310, "InputAttachmentArrayNonUniformIndexing"},
    {5311, "UniformTexelBufferArrayNonUniformIndexing"},
    {5312, "StorageTexelBufferArrayNonUniformIndexing"},
    {5340, "RayTracingNV"},
    {5341, "RayTracingMotionBlurNV"},
    {5347, "PhysicalStorageBufferAddresses"},
    {5350, "ComputeDerivativeGroupLinearNV"},
    {5363, "FragmentShaderSampleInterlockEXT"},
    {5372, "FragmentShaderShadingRateInterlockEXT"},
    {5373, "ShaderSMBuiltinsNV"},
    {5378, "FragmentShaderPixelInterlockEXT"},
    {5379, "DemoteToHelperInvocationEXT"},
    {5381, "RayTracingOpacityMicromapEXT"},
    {5383, "ShaderInvocationReorderNV"},
    {5584, "IntegerFunctions2INTEL"},
    {6020, "RayCullMaskKHR"},
};

}  // namespace

std::span<const UnenabledCapability> unenabled() { return kUnenabled; }

const UnenabledCapability* find_unenabled(std::uint32_t cap) {
  auto it =
      std::lower_bound(std::begin(kUnenabled), std::end(kUnenabled), cap,
                       [](const UnenabledCapability& u, std::uint32_t c) { return u.cap < c; });
  return it != std::end(kUnenabled) && it->cap == cap ? &*it : nullptr;
}

}  // namespace tune::vk::spv_cap
