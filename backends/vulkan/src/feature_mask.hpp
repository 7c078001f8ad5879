// The capabilities of an application's VkDevice (vulkan_interop.cpp): what the physical device
// has (query_caps) masked by what the application enabled on its VkDevice
// (vulkan::EnabledFeatures), since a shader may use only features enabled at vkCreateDevice.
// Pure: tested on snapshots of real devices (vulkan_feature_mask_test.cpp).
#pragma once

#include "device_facts.hpp"
#include "tune/vulkan_interop.hpp"

namespace tune::vk {

// Keeps each optional feature of `caps` only where `enabled` has it too (nothing is taken on
// trust: a feature enabled but absent stays off): the lists that hang on a feature (the
// matrix shapes, the subgroup-size range, the workgroup-scope limit) go with it, and every
// VK_NV_cooperative_matrix2 feature goes without VK_KHR_cooperative_matrix. Uniform-buffer
// 16/8-bit access is always off (EnabledFeatures has no field for it; libtune binds storage
// buffers only).
void mask_by_enabled_features(const vulkan::EnabledFeatures& enabled, DeviceCaps& caps);

}  // namespace tune::vk
