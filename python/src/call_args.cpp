#include "call_args.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

#include "device_array.hpp"
#include "dtypes.hpp"
#include "external_array.hpp"
#include "host_array.hpp"

namespace tune::python {
namespace {

template <class T>
std::uint64_t int_bits(py::handle v, const std::string& what) {
  if (py::isinstance<py::float_>(v) || !py::hasattr(v, "__index__"))
    throw py::type_error(what + ": expected an int, not " + py::repr(v).cast<std::string>());
  py::int_ i = py::reinterpret_borrow<py::object>(v).attr("__index__")();
  auto out_of_range = [&] {
    PyErr_Clear();
    return py::value_error(what + ": " + py::str(i).cast<std::string>() + " is out of range");
  };
  T value{};
  if constexpr (std::is_signed_v<T>) {
    int overflow = 0;
    const long long x = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
    if (overflow != 0 || x < std::numeric_limits<T>::min() || x > std::numeric_limits<T>::max())
      throw out_of_range();
    value = static_cast<T>(x);
  } else {
    const unsigned long long x = PyLong_AsUnsignedLongLong(i.ptr());
    if (PyErr_Occurred() != nullptr || x > std::numeric_limits<T>::max()) throw out_of_range();
    value = static_cast<T>(x);
  }
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof value);
  return bits;
}

ArgValue scalar(const ArgDecl& d, py::handle v, const std::string& what) {
  ArgValue a;
  a.kind = ArgKind::scalar;
  a.type = d.type;
  switch (d.type) {
    case ElemType::i8:
      a.bits = int_bits<std::int8_t>(v, what) & 0xff;
      break;
    case ElemType::u8:
      a.bits = int_bits<std::uint8_t>(v, what);
      break;
    case ElemType::i16:
      a.bits = int_bits<std::int16_t>(v, what) & 0xffff;
      break;
    case ElemType::u16:
      a.bits = int_bits<std::uint16_t>(v, what);
      break;
    case ElemType::i32:
      a.bits = int_bits<std::int32_t>(v, what) & 0xffffffffu;
      break;
    case ElemType::u32:
      a.bits = int_bits<std::uint32_t>(v, what);
      break;
    case ElemType::i64:
      a.bits = int_bits<std::int64_t>(v, what);
      break;
    case ElemType::u64:
      a.bits = int_bits<std::uint64_t>(v, what);
      break;
    case ElemType::f32: {
      const auto f = static_cast<float>(v.cast<double>());
      std::memcpy(&a.bits, &f, sizeof f);
      break;
    }
    case ElemType::f64: {
      const auto f = v.cast<double>();
      std::memcpy(&a.bits, &f, sizeof f);
      break;
    }
    case ElemType::f16: {  // NumPy rounds to half
      py::object h = py::module_::import("numpy").attr("float16")(v);
      a.bits = h.attr("view")("uint16").attr("item")().cast<std::uint64_t>();
      break;
    }
    case ElemType::bf16: {  // round to nearest even on the float32 bits
      const auto f = static_cast<float>(v.cast<double>());
      std::uint32_t u = 0;
      std::memcpy(&u, &f, sizeof u);
      a.bits = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
      break;
    }
  }
  return a;
}

void check_type(const ArgDecl& d, ElemType got, const std::string& what) {
  if (got != d.type)
    throw py::type_error(what + ": dtype " + numpy_name(got) + " does not match the declared " +
                         numpy_name(d.type));
}

}  // namespace

CallArgs CallArgs::bind(const std::shared_ptr<PyDevice>& dev, const ArgMeta& meta,
                        const py::args& args) {
  if (args.size() != meta.decls.size())
    throw py::type_error("the kernel takes " + std::to_string(meta.decls.size()) + " arguments, " +
                         std::to_string(args.size()) + " were given");
  CallArgs c;
  c.values_.resize(args.size());
  c.buffers_.resize(args.size());
  c.shapes.resize(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ArgDecl& d = meta.decls[i];
    const std::string what = "argument '" + d.name + "'";
    py::handle v = args[i];
    if (d.kind == ArgKind::scalar) {
      c.values_[i] = scalar(d, v, what);
      continue;
    }
    std::uint64_t count = 0;
    if (py::isinstance<DeviceArray>(v)) {
      const auto& a = v.cast<const DeviceArray&>();
      if (a.device() != dev)
        throw py::value_error(what + ": the DeviceArray belongs to another device");
      check_type(d, a.type(), what);
      c.buffers_[i] = a.shared_buffer();
      c.shapes[i] = a.shape();
      count = a.count();
    } else if (py::isinstance<py::array>(v)) {
      HostArray h = host_array(v, what);
      check_type(d, h.type, what);
      const bool output =
          std::find(meta.outputs.begin(), meta.outputs.end(), i) != meta.outputs.end();
      c.shapes[i].assign(h.array.shape(), h.array.shape() + h.array.ndim());
      count = h.count;
      const bool write_back = output && h.array.writeable();
      c.copies_.push_back(
          {i, h.array, h.array.data(), write_back ? h.array.mutable_data() : nullptr, h.bytes});
    } else if (auto e = external_array(v, what)) {
      check_type(d, e->type, what);
      const int ordinal = dev->cuda_ordinal();
      if (e->device_id >= 0 && ordinal >= 0 && e->device_id != ordinal)
        throw py::value_error(what + " is on cuda:" + std::to_string(e->device_id) +
                              " but the device is cuda:" + std::to_string(ordinal) +
                              " (libtune.cuda_device(" + std::to_string(e->device_id) + "))");
      // The first external array's stream; 0 (the legacy default stream, which the device's
      // own non-blocking stream would not be ordered with) when it names none.
      if (!c.stream) c.stream = e->stream.value_or(0);
      c.shapes[i] = e->shape;
      count = e->count;
      c.externals_.push_back({i, e->ptr, e->bytes, std::move(e->keepalive)});
    } else {
      throw py::type_error(what +
                           ": expected a NumPy array, a libtune.DeviceArray or a CUDA "
                           "tensor (__cuda_array_interface__ / DLPack), not " +
                           py::repr(py::type::of(v)).cast<std::string>());
    }
    c.values_[i].kind = ArgKind::buffer;
    c.values_[i].type = d.type;
    c.values_[i].count = count;
  }
  for (std::size_t i = 0; i < args.size(); ++i)
    if (c.buffers_[i]) c.values_[i].buffer = c.buffers_[i].get();
  return c;
}

Status CallArgs::prepare(PyDevice& dev) {
  for (auto& h : copies_) {
    auto buf = dev.device().alloc(h.bytes);
    if (!buf.ok()) return buf.status();
    buffers_[h.arg] = std::shared_ptr<DeviceBuffer>(std::move(*buf));
    TUNE_RETURN_IF_ERROR(dev.device().upload(*buffers_[h.arg], h.src, h.bytes));
    values_[h.arg].buffer = buffers_[h.arg].get();
  }
  for (auto& e : externals_) {
    auto buf = dev.wrap_external(e.ptr, e.bytes);
    if (!buf.ok()) return buf.status();
    buffers_[e.arg] = std::move(*buf);
    values_[e.arg].buffer = buffers_[e.arg].get();
  }
  return Status();
}

Status CallArgs::finish(PyDevice& dev, bool write_back) {
  Status st;
  for (auto& h : copies_)
    if (write_back && h.dst != nullptr && st.ok() && buffers_[h.arg])
      st = dev.device().download(*buffers_[h.arg], h.dst, h.bytes);
  for (auto& b : buffers_) b.reset();
  return st;
}

}  // namespace tune::python
