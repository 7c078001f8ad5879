// One call's Python arguments bound to the kernel's signature as tune::ArgValues.
//
// Buffers come from three places: a DeviceArray (used as it is), GPU memory of another library
// (a PyTorch/CuPy tensor: wrapped, never copied or freed; the launch goes on the producer's
// stream), or a NumPy array (copied to a fresh device buffer before the call and, when the
// kernel writes it, back after). Scalars are converted to the declared type with a range check.
//
// bind() needs the GIL; prepare() and finish() run with it released (they wait on the device)
// and touch no Python object's reference count: arrays are kept alive by the CallArgs and their
// data read through raw pointers.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <optional>
#include <vector>

#include "device.hpp"
#include "kernel.hpp"

namespace tune::python {

namespace py = pybind11;

class CallArgs {
 public:
  // TypeError / ValueError naming the argument: count, kind, dtype, device, contiguity, range.
  static CallArgs bind(const std::shared_ptr<PyDevice>& dev, const ArgMeta& meta,
                       const py::args& args);

  // Allocates and uploads the NumPy arrays' copies; wraps external memory.
  Status prepare(PyDevice& dev);
  // Downloads the copies the kernel writes (ArgMeta::outputs) into the caller's writable
  // arrays when `write_back`, then drops every buffer of the call. Blocks until the call's
  // work is done.
  Status finish(PyDevice& dev, bool write_back);
  // Whether a NumPy array was copied to the device for this call.
  bool has_copies() const noexcept { return !copies_.empty(); }

  ArgList values() const noexcept { return values_; }
  // The shape of each argument (empty for scalars): what verify gives its outputs.
  std::vector<std::vector<py::ssize_t>> shapes;
  // The stream of the first external array, when there is one.
  std::optional<std::uint64_t> stream;

 private:
  struct HostCopy {
    std::size_t arg = 0;
    py::array array;            // the caller's: keeps src and dst valid
    const void* src = nullptr;  // its data
    void* dst = nullptr;        // its data when written back after the call, else null
    std::uint64_t bytes = 0;
  };
  struct External {
    std::size_t arg = 0;
    std::uint64_t ptr = 0, bytes = 0;
    py::object keepalive;
  };
  std::vector<ArgValue> values_;
  std::vector<std::shared_ptr<DeviceBuffer>> buffers_;  // per argument; null for scalars
  std::vector<HostCopy> copies_;
  std::vector<External> externals_;
};

}  // namespace tune::python
