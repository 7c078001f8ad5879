#include "host_array.hpp"

#include <cstring>

#include "dtypes.hpp"

namespace tune::python {

HostArray host_array(py::handle obj, const std::string& what) {
  HostArray h;
  h.array = py::reinterpret_borrow<py::array>(obj);
  h.type = parse_elem_type(h.array.dtype(), what);
  if (!(h.array.flags() & py::array::c_style))
    throw py::value_error(what + ": the array is not C-contiguous (numpy.ascontiguousarray)");
  h.count = static_cast<std::uint64_t>(h.array.size());
  h.bytes = h.count * size_of(h.type);
  if (h.count == 0) throw py::value_error(what + ": the array is empty");
  return h;
}

py::array numpy_array(ElemType t, const std::vector<py::ssize_t>& shape, const std::byte* bytes) {
  py::array out(numpy_dtype(t), shape);
  const auto n = static_cast<std::size_t>(out.size());
  auto* dst = static_cast<std::byte*>(out.mutable_data());
  if (t != ElemType::bf16) {
    std::memcpy(dst, bytes, n * size_of(t));
    return out;
  }
  for (std::size_t i = 0; i < n; ++i) {  // bf16 is the high half of a float32
    std::uint32_t bits = 0;
    std::memcpy(reinterpret_cast<std::byte*>(&bits) + 2, bytes + 2 * i, 2);
    std::memcpy(dst + 4 * i, &bits, 4);
  }
  return out;
}

py::array to_host(py::handle obj) {
  py::module_ np = py::module_::import("numpy");
  if (py::isinstance<py::array>(obj)) return py::reinterpret_borrow<py::array>(obj);
  py::object o = py::reinterpret_borrow<py::object>(obj);
  if (py::hasattr(o, "detach") && py::hasattr(o, "cpu")) {  // a PyTorch tensor
    o = o.attr("detach")();
    if (py::str(o.attr("dtype")).cast<std::string>() == "torch.bfloat16") o = o.attr("float")();
    return np.attr("asarray")(o.attr("cpu")().attr("numpy")());
  }
  if (py::hasattr(o, "__cuda_array_interface__") && py::hasattr(o, "get"))  // CuPy
    return np.attr("asarray")(o.attr("get")());
  return np.attr("asarray")(o);
}

}  // namespace tune::python
