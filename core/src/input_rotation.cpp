#include "input_rotation.hpp"

#include <algorithm>

#include "tune/backend/last_level_cache.hpp"
#include "tune/log.hpp"

namespace tune {
namespace {

bool is_reset(const LaunchResets& resets, const DeviceBuffer* b) {
  if (std::find(resets.zero.begin(), resets.zero.end(), b) != resets.zero.end()) return true;
  return std::any_of(resets.restore.begin(), resets.restore.end(),
                     [&](const BufferRestore& r) { return r.dst == b; });
}

}  // namespace

Result<InputRotation> InputRotation::make(Device& dev, ArgList args, const LaunchResets& resets,
                                          std::uint64_t max_bytes) {
  InputRotation rot;
  // The inputs, each buffer once, in argument order.
  std::vector<DeviceBuffer*> inputs;
  for (const ArgValue& a : args) {
    if (a.kind != ArgKind::buffer || a.buffer == nullptr || is_reset(resets, a.buffer)) continue;
    if (std::find(inputs.begin(), inputs.end(), a.buffer) != inputs.end()) continue;
    inputs.push_back(a.buffer);
    rot.input_bytes_ += a.buffer->size_bytes();
  }
  if (rot.input_bytes_ == 0) {
    rot.fallback_ = "no input buffer to rotate (every buffer argument is reset before launches)";
    return rot;
  }
  const DeviceInfo& info = dev.info();
  const std::uint64_t target = kFlushCacheMultiple * std::max<std::uint64_t>(info.llc_bytes, 1);
  const std::uint64_t n =
      std::max<std::uint64_t>(2, (target + rot.input_bytes_ - 1) / rot.input_bytes_);
  if (n > kMaxRotationSets) {
    rot.fallback_ = "inputs of " + byte_size_text(rot.input_bytes_) + " need " + std::to_string(n) +
                    " sets to exceed twice the " + byte_size_text(info.llc_bytes) +
                    " last-level cache, more than " + std::to_string(kMaxRotationSets);
    return rot;
  }
  if (max_bytes == 0)
    max_bytes = info.global_memory_bytes > 0 ? info.global_memory_bytes / 4 : 1ull << 30;
  const std::uint64_t need = (n - 1) * rot.input_bytes_;
  if (need > max_bytes) {
    rot.fallback_ = "rotating " + std::to_string(n) + " sets of " +
                    byte_size_text(rot.input_bytes_) + " of inputs (together twice the " +
                    byte_size_text(info.llc_bytes) + " last-level cache) needs " +
                    byte_size_text(need) + " of copies, over the " + byte_size_text(max_bytes) +
                    " cap (BenchOptions::expert.rotate_max_bytes)";
    return rot;
  }
  rot.sets_.emplace_back(args.begin(), args.end());  // set 0: the caller's own buffers
  for (std::uint64_t s = 1; s < n; ++s) {
    std::vector<ArgValue> set(args.begin(), args.end());
    for (DeviceBuffer* in : inputs) {
      auto copy = dev.alloc(in->size_bytes());
      if (!copy.ok() && copy.status().code() == StatusCode::out_of_resources) {
        // Memory the cap allowed but the device does not have: flush instead, like the cap.
        rot.fallback_ = "allocating rotating input copy " + std::to_string(s) + " of " +
                        std::to_string(n - 1) + " failed: " + copy.status().message();
        TUNE_RETURN_IF_ERROR(dev.synchronize());  // the copies queued so far are done with
        rot.copies_.clear();
        rot.sets_.clear();
        return rot;
      }
      if (!copy.ok())
        return Status(copy.status())
            .with_context("allocating rotating input copy " + std::to_string(s));
      TUNE_RETURN_IF_ERROR(dev.copy(**copy, *in, in->size_bytes()));
      for (ArgValue& a : set)
        if (a.kind == ArgKind::buffer && a.buffer == in) a.buffer = copy->get();
      rot.copies_.push_back(std::move(*copy));
    }
    rot.sets_.push_back(std::move(set));
  }
  return rot;
}

ArgList InputRotation::next() noexcept {
  const std::vector<ArgValue>& set = sets_[next_];
  next_ = (next_ + 1) % sets_.size();
  return set;
}

TimingCache timing_cache_used(TimingCache wanted, const InputRotation* rotation) noexcept {
  if (wanted != TimingCache::rotate) return wanted;
  return rotation != nullptr && rotation->active() ? TimingCache::rotate : TimingCache::flush;
}

}  // namespace tune
