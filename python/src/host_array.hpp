// NumPy arrays as libtune reads and writes them: C-contiguous, of a supported element type.
// Every function needs the GIL held.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tune/args.hpp"

namespace tune::python {

namespace py = pybind11;

struct HostArray {
  py::array array;  // the caller's array (kept alive while its data is read or written)
  ElemType type = ElemType::f32;
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;
};

// `obj` as a host array: TypeError for an unsupported dtype, ValueError for an array that is
// not C-contiguous or is empty; `what` names the argument.
HostArray host_array(py::handle obj, const std::string& what);

// A new NumPy array of `shape` holding `bytes` of elements of `t` (bfloat16 widened to
// float32: NumPy has no bfloat16).
py::array numpy_array(ElemType t, const std::vector<py::ssize_t>& shape, const std::byte* bytes);

// Anything array-like (a NumPy array, a PyTorch or CuPy tensor, on the GPU or not, a list) as a
// NumPy array on the host: references given to verify.
py::array to_host(py::handle obj);

}  // namespace tune::python
