// SubmissionQueue: the device's one compute queue, its command pool and the submissions in
// flight. Work is recorded into a one-time command buffer from begin(), handed to submit()
// with what it uses (a Submission: its descriptor pool, query pool, staging buffers), and
// freed once its fence has signalled (retire_completed(), wait_all(), or the destructor).
// Every command buffer starts with a barrier on everything submitted before it and ends with
// one that makes device writes visible to the host: the backend never overlaps its own work.
//
// Ownership: owns the command pool and every in-flight submission's resources (staging
// buffers go back through DeviceMemory). The VkDevice must outlive it; destroy it only once
// the device is idle.
// Thread safety: none of its own: the caller holds one lock (VulkanDevice::queue_mu_) around
// every call and every begin..submit..wait sequence. lost() may be read without it.
// Blocking: begin() waits for everything when too many submissions are in flight; wait_fence()
// and wait_all() block up to their timeouts; the rest returns at once.
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "device_memory.hpp"
#include "tune/status.hpp"
#include "vk_handles.hpp"

namespace tune::vk {

// One recorded command buffer and what its commands use; freed together.
struct Submission {
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  VkDescriptorPool descriptors = VK_NULL_HANDLE;
  VkQueryPool queries = VK_NULL_HANDLE;
  std::vector<RawBuffer> staging;
};

// How submissions share a queue with an application (vulkan::ExternalDevice::lock_queue):
// lock() before and unlock() after every vkQueueSubmit. Empty functions: the queue is ours.
struct QueueLock {
  std::function<void()> lock, unlock;
};

// How long a synchronisation point (not a timed launch) waits for work submitted earlier.
inline constexpr double kSyncTimeoutMs = 120000.0;

class SubmissionQueue {
 public:
  // Queue 0 of `family` of a device libtune created, or `shared` (an application's queue of
  // that family, submitted to under `queue_lock`).
  static Result<std::unique_ptr<SubmissionQueue>> create(VkDevice device, std::uint32_t family,
                                                         const DeviceMemory& memory,
                                                         VkQueue shared = VK_NULL_HANDLE,
                                                         QueueLock queue_lock = {});
  ~SubmissionQueue();
  SubmissionQueue(const SubmissionQueue&) = delete;
  SubmissionQueue& operator=(const SubmissionQueue&) = delete;

  // A command buffer ready for recording, ordered after everything submitted before.
  Result<VkCommandBuffer> begin();
  // Ends and submits `s.cmd`; `s` joins the in-flight list (its resources are freed when its
  // fence has signalled; on failure at once). Returns the fence.
  Result<VkFence> submit(Submission s);
  // timeout, naming `what`, when `fence` has not signalled within `timeout_ms`.
  Status wait_fence(VkFence fence, double timeout_ms, std::string_view what);
  // Waits for every submission in flight and frees them.
  Status wait_all(double timeout_ms);
  // Frees the submissions whose fences have signalled.
  void retire_completed();
  // Frees what `s` holds (not yet submitted, or finished).
  void release(Submission& s) noexcept;

  VkQueue queue() const noexcept { return queue_; }
  // VK_ERROR_DEVICE_LOST was seen: nothing more can be submitted.
  bool lost() const noexcept { return lost_.load(std::memory_order_relaxed); }
  void mark_lost() noexcept { lost_ = true; }

 private:
  SubmissionQueue(VkDevice device, const DeviceMemory& memory) : device_(device), memory_(memory) {}

  VkDevice device_;
  const DeviceMemory& memory_;
  VkQueue queue_ = VK_NULL_HANDLE;
  QueueLock lock_;
  CommandPool pool_;
  std::vector<Submission> inflight_;
  std::atomic<bool> lost_{false};
};

// A global memory barrier: everything before `src` completes and its writes are visible to
// everything after in `dst`. Coarse on purpose: the backend never overlaps its own commands.
void full_barrier(VkCommandBuffer cmd, VkPipelineStageFlags src, VkPipelineStageFlags dst,
                  VkAccessFlags dst_access);
// full_barrier from all commands to all commands, for reads and writes.
void all_commands_barrier(VkCommandBuffer cmd);

}  // namespace tune::vk
