#include "submission_queue.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>

#include "vk_status.hpp"

namespace tune::vk {
namespace {

// Submissions kept in flight before begin() waits for them all.
constexpr std::size_t kMaxInflight = 64;

std::uint64_t ms_to_ns(double ms) {
  if (!(ms > 0)) return 0;
  const double ns = ms * 1e6;
  return ns >= 1.8e19 ? std::numeric_limits<std::uint64_t>::max() : static_cast<std::uint64_t>(ns);
}

}  // namespace

void full_barrier(VkCommandBuffer cmd, VkPipelineStageFlags src, VkPipelineStageFlags dst,
                  VkAccessFlags dst_access) {
  VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, VK_ACCESS_MEMORY_WRITE_BIT,
                    dst_access};
  vkCmdPipelineBarrier(cmd, src, dst, 0, 1, &b, 0, nullptr, 0, nullptr);
}

void all_commands_barrier(VkCommandBuffer cmd) {
  full_barrier(cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
               VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT);
}

Result<std::unique_ptr<SubmissionQueue>> SubmissionQueue::create(VkDevice device,
                                                                 std::uint32_t family,
                                                                 const DeviceMemory& memory,
                                                                 VkQueue shared,
                                                                 QueueLock queue_lock) {
  std::unique_ptr<SubmissionQueue> q(new SubmissionQueue(device, memory));
  if (shared != VK_NULL_HANDLE)
    q->queue_ = shared;
  else
    vkGetDeviceQueue(device, family, 0, &q->queue_);
  q->lock_ = std::move(queue_lock);
  auto pci = vk_struct<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
  pci.flags =
      VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT | VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
  pci.queueFamilyIndex = family;
  TUNE_VK_RETURN_IF_ERROR(vkCreateCommandPool(device, &pci, nullptr, q->pool_.receive(device)),
                          "vkCreateCommandPool");
  return q;
}

SubmissionQueue::~SubmissionQueue() {
  for (auto& s : inflight_) release(s);
}

Result<VkCommandBuffer> SubmissionQueue::begin() {
  if (inflight_.size() >= kMaxInflight) TUNE_RETURN_IF_ERROR(wait_all(kSyncTimeoutMs));
  auto ai = vk_struct<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
  ai.commandPool = pool_.get();
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  TUNE_VK_RETURN_IF_ERROR(vkAllocateCommandBuffers(device_, &ai, &cmd), "vkAllocateCommandBuffers");
  auto bi = vk_struct<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  VkResult r = vkBeginCommandBuffer(cmd, &bi);
  if (r != VK_SUCCESS) {
    vkFreeCommandBuffers(device_, pool_.get(), 1, &cmd);
    return make_error("vkBeginCommandBuffer", r);
  }
  // Order against every earlier submission (memory dependencies do not cross submissions
  // by themselves).
  all_commands_barrier(cmd);
  return cmd;
}

Result<VkFence> SubmissionQueue::submit(Submission s) {
  // Make device writes visible to the host once the fence has signalled.
  full_barrier(s.cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_HOST_BIT,
               VK_ACCESS_HOST_READ_BIT);
  VkResult r = vkEndCommandBuffer(s.cmd);
  if (r != VK_SUCCESS) {
    release(s);
    return make_error("vkEndCommandBuffer", r);
  }
  auto fci = vk_struct<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
  r = vkCreateFence(device_, &fci, nullptr, &s.fence);
  if (r != VK_SUCCESS) {
    release(s);
    return make_error("vkCreateFence", r);
  }
  auto si = vk_struct<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
  si.commandBufferCount = 1;
  si.pCommandBuffers = &s.cmd;
  if (lock_.lock) lock_.lock();
  r = vkQueueSubmit(queue_, 1, &si, s.fence);
  if (lock_.unlock) lock_.unlock();
  if (r != VK_SUCCESS) {
    release(s);
    if (r == VK_ERROR_DEVICE_LOST) mark_lost();
    return make_error("vkQueueSubmit", r, StatusCode::launch_failed);
  }
  VkFence fence = s.fence;
  inflight_.push_back(std::move(s));
  return fence;
}

Status SubmissionQueue::wait_fence(VkFence fence, double timeout_ms, std::string_view what) {
  VkResult r = vkWaitForFences(device_, 1, &fence, VK_TRUE, ms_to_ns(timeout_ms));
  if (r == VK_SUCCESS) return Status::ok_status();
  if (r == VK_TIMEOUT) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f ms", timeout_ms);
    return Status(StatusCode::timeout, std::string(what) + ": vkWaitForFences: VK_TIMEOUT, " +
                                           "the work did not finish within " + buf);
  }
  if (r == VK_ERROR_DEVICE_LOST) mark_lost();
  Status s = make_error("vkWaitForFences", r, StatusCode::launch_failed);
  s.with_context(what);
  return s;
}

Status SubmissionQueue::wait_all(double timeout_ms) {
  for (auto& s : inflight_) TUNE_RETURN_IF_ERROR(wait_fence(s.fence, timeout_ms, "wait"));
  for (auto& s : inflight_) release(s);
  inflight_.clear();
  return Status::ok_status();
}

void SubmissionQueue::retire_completed() {
  auto done = [&](Submission& s) {
    if (vkGetFenceStatus(device_, s.fence) != VK_SUCCESS) return false;
    release(s);
    return true;
  };
  inflight_.erase(std::remove_if(inflight_.begin(), inflight_.end(), done), inflight_.end());
}

void SubmissionQueue::release(Submission& s) noexcept {
  if (s.cmd != VK_NULL_HANDLE) vkFreeCommandBuffers(device_, pool_.get(), 1, &s.cmd);
  if (s.fence != VK_NULL_HANDLE) vkDestroyFence(device_, s.fence, nullptr);
  if (s.descriptors != VK_NULL_HANDLE) vkDestroyDescriptorPool(device_, s.descriptors, nullptr);
  if (s.queries != VK_NULL_HANDLE) vkDestroyQueryPool(device_, s.queries, nullptr);
  for (auto& raw : s.staging) memory_.destroy(raw);
  s = Submission{};
}

}  // namespace tune::vk
