#include "device.hpp"

#include <pybind11/pybind11.h>

#include <charconv>
#include <string_view>

#include "tune/registry.hpp"
#if defined(TUNE_HAVE_CUDA)
#include "tune/cuda.hpp"
#endif

namespace tune::python {

namespace py = pybind11;

PyDevice::~PyDevice() {
  if (PyGILState_Check() == 0) return;
  py::gil_scoped_release nogil;
  wrapped_.clear();
  dev_.reset();
}

Result<std::shared_ptr<PyDevice>> PyDevice::open(const std::string& spec) {
  auto dev = tune::open_device(spec);
  if (!dev.ok()) return dev.status();
  return std::make_shared<PyDevice>(std::move(*dev));
}

Result<std::shared_ptr<PyDevice>> PyDevice::cuda(int ordinal) {
#if defined(TUNE_HAVE_CUDA)
  // Weak: the device is closed once no Python object uses it, never at static destruction
  // (after the driver may have been unloaded).
  static std::mutex mu;
  static std::map<int, std::weak_ptr<PyDevice>> open;
  std::lock_guard lock(mu);
  if (auto dev = open[ordinal].lock()) return dev;
  auto dev = tune::cuda::open_device(tune::cuda::OpenOptions{.ordinal = ordinal});
  if (!dev.ok()) return dev.status();
  auto shared = std::make_shared<PyDevice>(std::move(*dev));
  open[ordinal] = shared;
  return shared;
#else
  (void)ordinal;
  return Status(StatusCode::unavailable, "libtune was built without the CUDA backend");
#endif
}

int PyDevice::cuda_ordinal() const noexcept {
  const std::string_view spec = info().reopen_spec;
  constexpr std::string_view prefix = "cuda:";
  if (info().backend != "cuda" || !spec.starts_with(prefix)) return -1;
  int n = -1;
  std::from_chars(spec.data() + prefix.size(), spec.data() + spec.size(), n);
  return n;
}

Result<std::shared_ptr<DeviceBuffer>> PyDevice::wrap_external(std::uint64_t ptr,
                                                              std::uint64_t bytes) {
#if defined(TUNE_HAVE_CUDA)
  if (info().backend != "cuda")
    return Status(StatusCode::invalid_argument,
                  "CUDA memory given to a " + info().backend + " device (" + info().name +
                      "): open the tensor's device with libtune.cuda_device()");
  const std::pair key{ptr, bytes};
  std::lock_guard lock(mu_);
  if (auto it = wrapped_.find(key); it != wrapped_.end()) return it->second;
  auto buf = tune::cuda::wrap_buffer(*dev_, ptr, bytes);
  if (!buf.ok()) return buf.status();
  // Bounded: a long-running program that sees many addresses keeps at most this many.
  if (wrapped_.size() >= 4096) wrapped_.clear();
  return wrapped_[key] = std::shared_ptr<DeviceBuffer>(std::move(*buf));
#else
  (void)ptr;
  (void)bytes;
  return Status(StatusCode::unavailable,
                "CUDA memory given to libtune built without the CUDA backend");
#endif
}

}  // namespace tune::python
