// InputRotation: copies of a kernel's input buffers that timed launches take in turn, so that
// each launch finds its inputs outside the last-level cache without a flush between launches
// (TimingPolicy::cache == TimingCache::rotate; nvbench's and Triton's rotating buffers).
//
// Inputs: every buffer argument that the resets do not name. reset_to_zero / restore_value
// name the buffers a kernel writes and needs put back; those stay the caller's, and their
// resets run before every launch as without rotation. An output the kernel overwrites without
// declaring it is copied too: harmless (each copy receives its own result) and it keeps its
// writes out of the cache as well. A buffer passed twice is copied once per set.
// Sets: set 0 is the caller's own arguments; sets 1..n-1 point at copies made with
// Device::copy when the rotation is made (queued on the device's queue, so ordered before the
// launches). n is the smallest count with n x (input bytes) >= kFlushCacheMultiple x
// DeviceInfo::llc_bytes, at least 2, so the sets together exceed the cache as the flush does.
// Fallback: when more than kMaxRotationSets sets would be needed (inputs so small that a
// flush costs less than the allocations), when the copies would take more than the cap, the device
// runs out of memory for them (out_of_resources), or no buffer is an input, the rotation is
// inactive and fallback() says why; timing then flushes.
//
// Ownership: owns the copies; they are freed with it, on the device that made them, which must
// outlive it. Not thread-safe: one tuning's timing thread uses it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tune/benchmark.hpp"
#include "tune/device.hpp"

namespace tune {

inline constexpr std::uint64_t kMaxRotationSets = 256;

class InputRotation {
 public:
  InputRotation() = default;
  InputRotation(InputRotation&&) noexcept = default;
  InputRotation& operator=(InputRotation&&) noexcept = default;
  InputRotation(const InputRotation&) = delete;
  InputRotation& operator=(const InputRotation&) = delete;

  // Plans and makes the copies for `args` on `dev`, within `max_bytes` of copies (0: a quarter
  // of DeviceInfo::global_memory_bytes, 1 GiB when unknown). A copy failure, or an allocation
  // failure other than out_of_resources, is returned as the device reported it, with context.
  static Result<InputRotation> make(Device& dev, ArgList args, const LaunchResets& resets,
                                    std::uint64_t max_bytes);

  bool active() const noexcept { return sets_.size() >= 2; }
  // Why the rotation is inactive ("" when active).
  const std::string& fallback() const noexcept { return fallback_; }
  // Argument sets in the rotation (0 when inactive).
  std::size_t sets() const noexcept { return sets_.size(); }
  // Bytes of one set's inputs, and of all the copies made.
  std::uint64_t input_bytes() const noexcept { return input_bytes_; }
  std::uint64_t copy_bytes() const noexcept {
    return input_bytes_ * (sets_.empty() ? 0 : sets_.size() - 1);
  }
  // The next set, in turn (set 0 first). Only when active().
  ArgList next() noexcept;

 private:
  std::vector<Buffer> copies_;
  std::vector<std::vector<ArgValue>> sets_;
  std::size_t next_ = 0;
  std::uint64_t input_bytes_ = 0;
  std::string fallback_;
};

// What kept the cache cold in the end: `wanted`, except flush for a rotation that fell back.
TimingCache timing_cache_used(TimingCache wanted, const InputRotation* rotation) noexcept;

}  // namespace tune
