// GPU arrays of other libraries (PyTorch, CuPy, Numba...) read through their
// __cuda_array_interface__ (version 2 or 3) or DLPack (__dlpack__ / __dlpack_device__): the
// address, size, element type, device and the stream the producer's work is ordered on. The
// memory stays the producer's: libtune wraps it (PyDevice::wrap_external) and never frees it.
// Every function needs the GIL held.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tune/args.hpp"

namespace tune::python {

namespace py = pybind11;

struct ExternalArray {
  std::uint64_t ptr = 0;
  std::uint64_t bytes = 0;
  ElemType type = ElemType::f32;
  std::uint64_t count = 0;
  std::vector<py::ssize_t> shape;
  int device_id = -1;  // the CUDA ordinal, -1 when the object does not say
  // The producer's stream: the interface's `stream` (version 3), else the current PyTorch
  // stream of a PyTorch tensor; none when the object says nothing (the legacy default stream
  // is then used). 1 and 2 are CUDA's legacy and per-thread default streams, as in CUDA.
  std::optional<std::uint64_t> stream;
  py::object keepalive;  // the DLPack capsule, released (and its deleter run) with this
};

// The array `obj` exposes, or nullopt when it has neither interface (a NumPy array, a scalar).
// TypeError for an unsupported dtype, ValueError for a non-contiguous or empty array or one in
// host memory (a DLPack CPU tensor); `what` names the argument.
std::optional<ExternalArray> external_array(py::handle obj, const std::string& what);

// A stream given by the caller: an int (a CUstream as an integer; 0 the legacy default), or an
// object with `cuda_stream` (torch.cuda.Stream) or `ptr` (cupy.cuda.Stream).
std::uint64_t stream_handle(py::handle obj);

}  // namespace tune::python
