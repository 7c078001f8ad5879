// The VkDevice libtune creates for itself (not an application's: vulkan_interop.cpp): one
// compute queue, and exactly the optional features kernels may need that query_caps found on
// the physical device (16/8-bit storage, float16/int8, int64/float64/int16, the Vulkan memory
// model, subgroup size control, maintenance4, VK_NV_cooperative_matrix, VK_KHR_cooperative_matrix,
// VK_NV_cooperative_matrix2 and VK_KHR_shader_bfloat16). Blocking: one vkCreateDevice.
#pragma once

#include <vulkan/vulkan.h>

#include "device_facts.hpp"

namespace tune::vk {

// vkCreateDevice's result; `*out` is the device when VK_SUCCESS. Ownership passes to the caller.
VkResult create_vk_device(VkPhysicalDevice physical, const DeviceCaps& caps, VkDevice* out);

}  // namespace tune::vk
