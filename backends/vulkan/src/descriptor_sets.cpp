// Descriptor sets: one per submission, and the recorded dispatches' kept ones.
#include "descriptor_sets.hpp"

#include <algorithm>

#include "recorded_memo.hpp"
#include "vk_status.hpp"

namespace tune::vk {
namespace {

bool same_ranges(const std::vector<std::pair<std::uint32_t, VkDescriptorBufferInfo>>& a,
                 const std::vector<std::pair<std::uint32_t, VkDescriptorBufferInfo>>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
    return x.first == y.first && x.second.buffer == y.second.buffer &&
           x.second.offset == y.second.offset && x.second.range == y.second.range;
  });
}

}  // namespace

Result<VkDescriptorSet> make_descriptor_set(VkDevice device, VkDescriptorSetLayout layout,
                                            const BoundArgs& a, VkDescriptorPool* pool) {
  if (a.buffers.empty()) return VkDescriptorSet{VK_NULL_HANDLE};
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                            static_cast<std::uint32_t>(a.buffers.size())};
  auto dpi = vk_struct<VkDescriptorPoolCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
  dpi.maxSets = 1;
  dpi.poolSizeCount = 1;
  dpi.pPoolSizes = &size;
  TUNE_VK_RETURN_IF_ERROR(vkCreateDescriptorPool(device, &dpi, nullptr, pool),
                          "vkCreateDescriptorPool");
  auto dai = vk_struct<VkDescriptorSetAllocateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
  dai.descriptorPool = *pool;
  dai.descriptorSetCount = 1;
  dai.pSetLayouts = &layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  TUNE_VK_RETURN_IF_ERROR(vkAllocateDescriptorSets(device, &dai, &set), "vkAllocateDescriptorSets");
  std::vector<VkDescriptorBufferInfo> infos(a.buffers.size());
  std::vector<VkWriteDescriptorSet> writes(a.buffers.size());
  for (std::size_t i = 0; i < infos.size(); ++i) {
    const auto& [binding, buffer] = a.buffers[i];
    infos[i] = buffer;
    writes[i] = vk_struct<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
    writes[i].dstSet = set;
    writes[i].dstBinding = binding;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  vkUpdateDescriptorSets(device, static_cast<std::uint32_t>(writes.size()), writes.data(), 0,
                         nullptr);
  return set;
}

void RecordedSets::forget(const VulkanKernel* kernel, VkBuffer buffer) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  // Every thread's RecordedMemo stops matching: the object going away may be named in one.
  recorded_generation.fetch_add(1, std::memory_order_acq_rel);
  std::erase_if(sets_, [&](const RecordedSet& r) {
    if (kernel != nullptr && r.kernel != kernel) return false;
    if (buffer == VK_NULL_HANDLE) return true;
    return std::any_of(r.buffers.begin(), r.buffers.end(),
                       [&](const auto& b) { return b.second.buffer == buffer; });
  });
}

Result<VkDescriptorSet> RecordedSets::get(VkDevice device, const VulkanKernel& kernel,
                                          VkDescriptorSetLayout layout, const BoundArgs& a) {
  if (a.buffers.empty()) return VkDescriptorSet{VK_NULL_HANDLE};
  std::lock_guard<std::mutex> lock(mutex_);
  for (const RecordedSet& r : sets_)
    if (r.kernel == &kernel && same_ranges(r.buffers, a.buffers)) return r.set;
  RecordedSet r;
  r.kernel = &kernel;
  r.buffers = a.buffers;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  auto set = make_descriptor_set(device, layout, a, &pool);
  r.pool = DescriptorPool(device, pool);  // owns the pool even when the set failed
  if (!set.ok()) return set.status();
  r.set = *set;
  sets_.push_back(std::move(r));
  return *set;
}

}  // namespace tune::vk
