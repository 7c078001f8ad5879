// TMA tensor maps (KernelSource::tensor_maps, CUDA only): a variant's map specs, fixed when it
// is compiled, and the maps encoded from each launch's arguments (cuTensorMapEncodeTiled), the
// last one per map kept so that a launch on the same buffer and sizes reuses it.
//
// Ownership: a GpuKernel owns its TensorMaps. Thread safety: encode() may be called from
// several threads at once (launches on application streams run without the device's queue
// lock): its own mutex guards the encoded maps. Blocking: none (encoding is host work).
// Allocation: none when encode() succeeds (its messages are built only on failure).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "gpu_api.hpp"
#include "tune/device.hpp"

namespace tune::gpu {

class GpuDevice;

// Tensor maps per variant: a launch encodes them into a stack array of this size (a hit
// allocates nothing); the bundled wgmma kernels use two.
constexpr std::size_t kMaxTensorMaps = 8;

// One encoded TMA tensor map as a kernel parameter (CUtensorMap: 128 bytes, 64-byte aligned),
// with what it was encoded from.
struct EncodedTensorMap {
  alignas(64) std::uint64_t bytes[16] = {};
  DevPtr ptr = 0;
  std::uint64_t rows = 0, cols = 0;
  ElemType type = ElemType::u8;
  bool valid = false;
};

// The specs `source.tensor_maps` gives for `config` (none without the callback), checked
// before compiling: invalid_argument when the vendor has no tensor maps (`backend` named) or
// more than kMaxTensorMaps are asked; callback_failed when the callback throws. `variant`
// ("entry{config}") names the variant.
Result<std::vector<TensorMapSpec>> tensor_map_specs(const GpuApi& api, std::string_view backend,
                                                    const KernelSource& source,
                                                    const Config& config,
                                                    const std::string& variant);

class TensorMaps {
 public:
  explicit TensorMaps(std::vector<TensorMapSpec> specs)
      : specs_(std::move(specs)), encoded_(specs_.size()) {}

  std::size_t size() const noexcept { return specs_.size(); }
  // The maps for `args` into `out` (one per spec), re-encoded only when the buffer, its
  // element type or the sizes changed since the last launch. invalid_argument naming the map
  // (of `kernel`, "entry{config}") and the culprit for an argument that does not fit TMA;
  // `device` checks its buffers are its own and names the driver's failures.
  Status encode(GpuDevice& device, const std::string& kernel, ArgList args,
                EncodedTensorMap* out) const;

 private:
  std::vector<TensorMapSpec> specs_;
  mutable std::mutex mutex_;  // guards encoded_
  mutable std::vector<EncodedTensorMap> encoded_;
};

}  // namespace tune::gpu
