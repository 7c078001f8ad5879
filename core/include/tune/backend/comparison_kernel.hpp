// Device::compare for backend authors: the host fallback, and a comparison kernel compiled and
// launched through the device's own compile() and launch(), so that a backend needs only the
// kernel's source in its language.
//
// The kernel's contract (one source per language, the same for CUDA and HIP):
//   macro ELEM_KIND: 0 f32, 1 f16, 2 bf16, 3 i32, 4 u32; its block is config block.x
//   (kComparisonBlock), its entry `tune_compare` ("main" in GLSL);
//   arguments: actual (u32 buffer), expected (u32 buffer), result (u32 buffer of 4), n (u32,
//   elements), abs_tol (f32), rel_tol (f32);
//   result: [0] max abs error and [1] max rel error as float bits (non-negative, so unsigned
//   atomicMax orders them), [2] mismatches, [3] first bad index (0xffffffff: none), each
//   combined atomically per block; compare_host's rule evaluated in f32.
// 16-bit elements are read in pairs from 32-bit words: a 16-bit buffer with an odd count is
// compared only when its size is a whole number of words.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "tune/device.hpp"

namespace tune {

inline constexpr std::uint32_t kComparisonBlock = 256;

// Downloads spec.count elements of both buffers and compares them on the host (Device::compare's
// default). Blocks.
Result<Comparison> compare_by_download(Device& dev, const DeviceBuffer& actual,
                                       const DeviceBuffer& expected, const CompareSpec& spec);

// One device's comparison kernel: a variant per element type, compiled on first use and kept.
// Types the kernel does not cover (f64, 8/16-bit and 64-bit integers), more than 2^32 - 2
// elements or a 16-bit buffer of odd size fall back to compare_by_download.
// Thread safety: compare() may be called from several threads (compiles are serialised).
// Ownership: the compiled variants belong to this object, which must die before its device.
class ComparisonKernel {
 public:
  explicit ComparisonKernel(KernelSource source) : source_(std::move(source)) {}
  Result<Comparison> compare(Device& dev, const DeviceBuffer& actual, const DeviceBuffer& expected,
                             const CompareSpec& spec);
  // Destroys the compiled variants (a device's destructor, before what they use goes).
  void release();

 private:
  Result<const CompiledKernel*> variant(Device& dev, int kind);

  KernelSource source_;
  std::mutex mu_;
  std::map<int, std::unique_ptr<CompiledKernel>> variants_;
};

}  // namespace tune
