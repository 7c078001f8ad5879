// RecordedMemo: what one thread's last dispatch recorded into an application's command buffer
// bound, so that the next recording of the same dispatch skips binding.
//
// A program that records the same dispatch frame after frame passes the same kernel, launch
// dimensions and argument values every time. VulkanDevice::launch_on keeps one memo per thread:
// when a recording matches the previous one on that thread (same device, kernel, dims and
// bitwise-equal arguments), it reuses the bound push constants and descriptor set, without
// walking the arguments, taking the recorded-set lock or scanning the recorded sets (issue 13's
// host-time figure; bench_vulkan --interleaved measures it).
//
// Validity: the memo names buffers and kernels by address. Every time a recorded descriptor set
// is forgotten anywhere in the process (a buffer or kernel destroyed, a device closed) the
// process-wide generation moves on and every memo stops matching, so a freed object whose
// address is reused is never mistaken for the old one.
//
// Thread safety: a memo is thread_local; the generation is an atomic.
#pragma once

#include <atomic>
#include <cstdint>
#include "argument_binding.hpp"
#include "tune/backend/args_snapshot.hpp"
#include "tune/device.hpp"

namespace tune::vk {

class VulkanKernel;

// Moves on (release) whenever a recorded descriptor set may have been destroyed.
inline std::atomic<std::uint64_t> recorded_generation{0};

struct RecordedMemo {
  const void* device = nullptr;
  const VulkanKernel* kernel = nullptr;
  std::uint64_t generation = ~std::uint64_t{0};
  LaunchDims dims;
  ArgsSnapshot args;  // fixed capacity: remembering allocates nothing
  BoundArgs bound;    // what binding `args` gave (its vectors keep their capacity)
  VkDescriptorSet set = VK_NULL_HANDLE;

  bool matches(const void* dev, const VulkanKernel* k, const LaunchDims& d, ArgList a) const {
    if (dev != device || k != kernel) return false;
    if (generation != recorded_generation.load(std::memory_order_acquire)) return false;
    if (d.grid != dims.grid || d.block != dims.block || d.shared_bytes != dims.shared_bytes ||
        d.cluster != dims.cluster)
      return false;
    return args.equals(a);
  }

  // Records what binding gave; `gen` is recorded_generation read before binding began, so a
  // set forgotten meanwhile leaves the memo stale rather than wrong.
  void remember(const void* dev, const VulkanKernel* k, std::uint64_t gen, const LaunchDims& d,
                ArgList a, VkDescriptorSet s) {
    device = dev;
    kernel = k;
    generation = gen;
    dims = d;
    set = s;
    if (!args.assign(a)) device = nullptr;  // too many arguments to remember: never matches
  }
};

}  // namespace tune::vk
