// measure_flush_effect: does the cache flush before each timed launch make the launch cold?
//
// Times a read kernel (libtune's own, in the device's language) over a buffer of half the
// last-level cache, so that a warm read finds all of it cached: warm (each repetition right
// after the previous one read the buffer, no flush), cold (the backend's flush before each
// repetition, as tuning does with TimingCache::flush) and rotating (each repetition reads the
// next of the InputRotation copies, as with TimingCache::rotate). On a GPU whose flush works
// the cold read is clearly slower than the warm one; on a CPU device (lavapipe) the effect
// may be small or absent, which says the host's caches, not libtune's flush, decide there.
// `tune flush-check` prints it. Blocks; uses the device's queue like any timing.
// Internal (not installed): the library, tests and studies include it.
#pragma once

#include <cstdint>
#include <string>

#include "tune/device.hpp"

namespace tune {

struct FlushCheckOptions {
  std::uint64_t buffer_bytes = 0;  // the buffer read; 0: half of DeviceInfo::llc_bytes
  int reps = 30;                   // timed repetitions of each kind (medians are reported)
  double works_ratio = 1.10;       // cold / warm at least this: the flush works
};

struct FlushCheck {
  std::uint64_t llc_bytes = 0;
  CacheSizeSource llc_source = CacheSizeSource::default_size;
  std::uint64_t flush_bytes = 0;   // what the flush writes (flush_bytes_for)
  std::uint64_t buffer_bytes = 0;  // what the kernel reads
  int reps = 0;
  double warm_ns = 0, cold_ns = 0;  // medians
  // The rotating copies: argument sets, and the median (0 when rotation fell back, with the
  // reason in rotate_fallback).
  std::size_t rotate_sets = 0;
  double rotate_ns = 0;
  std::string rotate_fallback;
  double works_ratio = 0;

  double cold_ratio() const noexcept { return warm_ns > 0 ? cold_ns / warm_ns : 0; }
  double rotate_ratio() const noexcept { return warm_ns > 0 ? rotate_ns / warm_ns : 0; }
  bool flush_works() const noexcept { return cold_ratio() >= works_ratio; }
  bool rotate_works() const noexcept { return rotate_ratio() >= works_ratio; }
  // A few lines for people (`tune flush-check`).
  std::string to_string() const;
};

// invalid_argument for reps < 1, a buffer under 4 bytes or over 2^32 words; a device failure
// as the device reported it, with context.
Result<FlushCheck> measure_flush_effect(Device& dev, const FlushCheckOptions& opts = {});

}  // namespace tune
