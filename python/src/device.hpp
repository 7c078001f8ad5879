// libtune.Device: one tune::Device shared by the Python objects that use it.
//
// Ownership: held by shared_ptr from the Python Device object, every DeviceArray made on it and
// every Tuner that ran on it, so a Device outlives the Autotuners and buffers that need it
// whatever order Python collects them in. External CUDA memory (a PyTorch/CuPy tensor) is
// wrapped once per (address, size) and the wrapper kept: a wrapper is only an address range,
// never freed memory, so an allocation that reuses the address is the same range.
// Thread safety: every method may be called from any thread; none needs the GIL.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "tune/device.hpp"

namespace tune::python {

class PyDevice {
 public:
  explicit PyDevice(std::unique_ptr<Device> dev) : dev_(std::move(dev)) {}
  // Closing a device waits for its queue: the GIL is released meanwhile when held.
  ~PyDevice();
  PyDevice(const PyDevice&) = delete;
  PyDevice& operator=(const PyDevice&) = delete;

  // Opens `spec` as tune::open_device does ("", "vulkan", "cuda:1"). Blocking.
  static Result<std::shared_ptr<PyDevice>> open(const std::string& spec);
  // The CUDA device `ordinal` on its primary context (the CUDA runtime's, which PyTorch and
  // CuPy use), one per ordinal while any Python object holds it.
  static Result<std::shared_ptr<PyDevice>> cuda(int ordinal);

  Device& device() noexcept { return *dev_; }
  const DeviceInfo& info() const noexcept { return dev_->info(); }
  // The CUDA ordinal of this device ("cuda:N" in DeviceInfo::reopen_spec), -1 for others.
  int cuda_ordinal() const noexcept;

  // `bytes` of CUDA memory at `ptr` as a buffer libtune launches on and never frees
  // (tune::cuda::wrap_buffer); invalid_argument when it is not one allocation of this
  // device's context, unavailable in a build without the CUDA backend.
  Result<std::shared_ptr<DeviceBuffer>> wrap_external(std::uint64_t ptr, std::uint64_t bytes);

 private:
  std::unique_ptr<Device> dev_;
  std::mutex mu_;  // guards wrapped_
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::shared_ptr<DeviceBuffer>> wrapped_;
};

}  // namespace tune::python
