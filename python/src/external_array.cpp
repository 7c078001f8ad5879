#include "external_array.hpp"

#include "dtypes.hpp"

namespace tune::python {
namespace {

// DLPack's ABI (dlpack.h, v0.x: the unversioned "dltensor" capsule every producer exports).
struct DLDevice {
  std::int32_t device_type;
  std::int32_t device_id;
};
struct DLDataType {
  std::uint8_t code;
  std::uint8_t bits;
  std::uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  std::int32_t ndim;
  DLDataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;
  std::uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor*);
};
constexpr std::int32_t kDLCUDA = 2;
constexpr std::int32_t kDLCUDAManaged = 13;

// C-contiguous: each stride (in elements) is the product of the later dimensions.
bool c_contiguous(const std::vector<py::ssize_t>& shape, const std::vector<std::int64_t>& strides) {
  std::int64_t want = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && strides[i] != want) return false;
    want *= shape[i];
  }
  return true;
}

void finish(ExternalArray& a, const std::string& what) {
  a.count = 1;
  for (auto d : a.shape) a.count *= static_cast<std::uint64_t>(d);
  a.bytes = a.count * size_of(a.type);
  if (a.count == 0) throw py::value_error(what + ": the array is empty");
}

// The current stream of a device: torch._C._cuda_getCurrentRawStream (what Triton calls: no
// Stream object made), else torch.cuda.current_stream().cuda_stream.
std::uint64_t torch_current_stream(int device_id) {
  if (device_id < 0)
    device_id = py::module_::import("torch").attr("cuda").attr("current_device")().cast<int>();
  static py::object* raw = [] {
    py::module_ c = py::module_::import("torch._C");
    return new py::object(py::hasattr(c, "_cuda_getCurrentRawStream")
                              ? c.attr("_cuda_getCurrentRawStream")
                              : py::object(py::none()));
  }();
  if (!raw->is_none()) return (*raw)(device_id).cast<std::uint64_t>();
  py::object torch = py::module_::import("torch");
  return torch.attr("cuda")
      .attr("current_stream")(device_id)
      .attr("cuda_stream")
      .cast<std::uint64_t>();
}

// The current PyTorch stream of a tensor's device, for producers whose interface has no
// stream (PyTorch's __cuda_array_interface__ is version 2).
std::optional<std::uint64_t> torch_stream(py::handle obj, int device_id) {
  const auto module = py::str(py::type::of(obj).attr("__module__")).cast<std::string>();
  if (!module.starts_with("torch")) return std::nullopt;
  return torch_current_stream(device_id);
}

int dlpack_device_id(py::handle obj) {
  if (!py::hasattr(obj, "__dlpack_device__")) return -1;
  auto dev = obj.attr("__dlpack_device__")().cast<py::tuple>();
  const int type = dev[0].cast<int>();
  return type == kDLCUDA || type == kDLCUDAManaged ? dev[1].cast<int>() : -1;
}

ExternalArray from_cuda_array_interface(py::handle obj, const std::string& what) {
  py::dict cai = obj.attr("__cuda_array_interface__");
  ExternalArray a;
  a.type = elem_type_of_typestr(cai["typestr"].cast<std::string>(), what);
  for (auto d : cai["shape"].cast<py::tuple>()) a.shape.push_back(d.cast<py::ssize_t>());
  if (cai.contains("strides") && !cai["strides"].is_none()) {
    std::vector<std::int64_t> strides;
    for (auto s : cai["strides"].cast<py::tuple>())
      strides.push_back(s.cast<std::int64_t>() / static_cast<std::int64_t>(size_of(a.type)));
    if (!c_contiguous(a.shape, strides))
      throw py::value_error(what + ": the tensor is not contiguous (.contiguous())");
  }
  a.ptr = cai["data"].cast<py::tuple>()[0].cast<std::uint64_t>();
  a.device_id = dlpack_device_id(obj);
  if (cai.contains("stream") && !cai["stream"].is_none())
    a.stream = cai["stream"].cast<std::uint64_t>();
  else
    a.stream = torch_stream(obj, a.device_id);
  finish(a, what);
  return a;
}

ExternalArray from_dlpack(py::handle obj, const std::string& what) {
  auto dev = obj.attr("__dlpack_device__")().cast<py::tuple>();
  const int type = dev[0].cast<int>();
  if (type != kDLCUDA && type != kDLCUDAManaged)
    throw py::value_error(what + ": a DLPack array on device type " + std::to_string(type) +
                          ", not CUDA memory (pass host data as a NumPy array)");
  ExternalArray a;
  a.device_id = dev[1].cast<int>();
  a.stream = torch_stream(obj, a.device_id);
  // Taken without a stream: the producer does not order anything for us; the launch goes on
  // the producer's stream found above instead.
  py::capsule cap = obj.attr("__dlpack__")();
  auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap.ptr(), "dltensor"));
  if (t == nullptr) throw py::error_already_set();
  const DLTensor& d = t->dl_tensor;
  a.type = elem_type_of_dlpack(d.dtype.code, d.dtype.bits, d.dtype.lanes, what);
  a.shape.assign(d.shape, d.shape + d.ndim);
  if (d.strides != nullptr && !c_contiguous(a.shape, {d.strides, d.strides + d.ndim}))
    throw py::value_error(what + ": the tensor is not contiguous (.contiguous())");
  a.ptr = reinterpret_cast<std::uintptr_t>(d.data) + d.byte_offset;
  a.keepalive = std::move(cap);  // not consumed: its destructor runs the producer's deleter
  finish(a, what);
  return a;
}

// PyTorch's element types by identity (torch.float32 is one object), made on first use and
// kept for the process (leaked: never released after the interpreter).
ElemType torch_elem_type(py::handle dtype, const std::string& what) {
  static py::dict* types = [] {
    py::module_ torch = py::module_::import("torch");
    auto* d = new py::dict();
    const std::pair<const char*, ElemType> names[] = {
        {"float16", ElemType::f16}, {"bfloat16", ElemType::bf16}, {"float32", ElemType::f32},
        {"float64", ElemType::f64}, {"int8", ElemType::i8},       {"uint8", ElemType::u8},
        {"int16", ElemType::i16},   {"int32", ElemType::i32},     {"int64", ElemType::i64}};
    for (const auto& [name, type] : names) (*d)[torch.attr(name)] = static_cast<int>(type);
    return d;
  }();
  if (!types->contains(dtype))
    throw py::type_error(what + ": unsupported dtype '" + py::str(dtype).cast<std::string>() + "'");
  return static_cast<ElemType>((*types)[dtype].cast<int>());
}

// A CUDA torch.Tensor read through its own C-level methods: cheaper per call than the Python
// property __cuda_array_interface__ (the cost of every hit from Python), and bfloat16 too.
ExternalArray from_torch(py::handle t, const std::string& what) {
  ExternalArray a;
  a.type = torch_elem_type(t.attr("dtype"), what);
  if (!t.attr("is_contiguous")().cast<bool>())
    throw py::value_error(what + ": the tensor is not contiguous (.contiguous())");
  for (auto d : t.attr("shape")) a.shape.push_back(d.cast<py::ssize_t>());
  a.ptr = t.attr("data_ptr")().cast<std::uint64_t>();
  a.device_id = t.attr("get_device")().cast<int>();
  a.stream = torch_current_stream(a.device_id);
  finish(a, what);
  return a;
}

bool is_cuda_torch_tensor(py::handle obj) {
  static const py::handle tensor_type = [] {
    py::module_ torch = py::module_::import("torch");
    return py::object(torch.attr("Tensor")).release();  // kept for the process
  }();
  return py::isinstance(obj, tensor_type) && obj.attr("is_cuda").cast<bool>();
}

}  // namespace

std::optional<ExternalArray> external_array(py::handle obj, const std::string& what) {
  // Only once PyTorch is imported by the program: libtune never imports it on its own.
  if (PyDict_GetItemString(PyImport_GetModuleDict(), "torch") != nullptr &&
      is_cuda_torch_tensor(obj))
    return from_torch(obj, what);
  if (py::hasattr(obj, "__cuda_array_interface__")) {
    try {
      return from_cuda_array_interface(obj, what);
    } catch (py::error_already_set&) {
      // PyTorch refuses the interface for bfloat16 (AttributeError/TypeError): DLPack has it.
      if (!py::hasattr(obj, "__dlpack__")) throw;
    }
  }
  if (py::hasattr(obj, "__dlpack__") && py::hasattr(obj, "__dlpack_device__"))
    return from_dlpack(obj, what);
  return std::nullopt;
}

std::uint64_t stream_handle(py::handle obj) {
  if (py::hasattr(obj, "cuda_stream")) return obj.attr("cuda_stream").cast<std::uint64_t>();
  if (py::hasattr(obj, "ptr")) return obj.attr("ptr").cast<std::uint64_t>();
  return obj.cast<std::uint64_t>();
}

}  // namespace tune::python
