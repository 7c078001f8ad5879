#include "device_array.hpp"

#include "dtypes.hpp"
#include "errors.hpp"
#include "host_array.hpp"

namespace tune::python {

DeviceArray::DeviceArray(std::shared_ptr<PyDevice> dev, std::shared_ptr<DeviceBuffer> buffer,
                         ElemType type, std::vector<py::ssize_t> shape)
    : dev_(std::move(dev)), buffer_(std::move(buffer)), type_(type), shape_(std::move(shape)) {}

DeviceArray::~DeviceArray() {
  if (PyGILState_Check() == 0) return;
  py::gil_scoped_release nogil;
  buffer_.reset();
  dev_.reset();
}

std::uint64_t DeviceArray::count() const noexcept {
  std::uint64_t n = 1;
  for (auto d : shape_) n *= static_cast<std::uint64_t>(d);
  return n;
}

std::shared_ptr<DeviceArray> DeviceArray::from_numpy(std::shared_ptr<PyDevice> dev,
                                                     py::handle array) {
  if (!py::isinstance<py::array>(array))
    throw py::type_error("DeviceArray: expected a NumPy array, not " +
                         py::repr(array).cast<std::string>());
  HostArray h = host_array(array, "DeviceArray");
  std::vector<py::ssize_t> shape(h.array.shape(), h.array.shape() + h.array.ndim());
  Result<Buffer> buf = Status();
  {
    py::gil_scoped_release nogil;
    buf = dev->device().alloc(h.bytes);
    if (buf.ok()) {
      Status st = dev->device().upload(**buf, h.array.data(), h.bytes);
      if (!st.ok()) buf = st;
    }
  }
  return std::make_shared<DeviceArray>(std::move(dev), check(std::move(buf)), h.type,
                                       std::move(shape));
}

std::shared_ptr<DeviceArray> DeviceArray::zeros(std::shared_ptr<PyDevice> dev, py::handle shape,
                                                py::handle dtype) {
  const ElemType t = parse_elem_type(dtype, "DeviceArray");
  std::vector<py::ssize_t> dims;
  if (py::isinstance<py::int_>(shape))
    dims.push_back(shape.cast<py::ssize_t>());
  else
    for (auto d : shape) dims.push_back(d.cast<py::ssize_t>());
  std::uint64_t n = 1;
  for (auto d : dims) n *= static_cast<std::uint64_t>(d);
  if (n == 0) throw py::value_error("DeviceArray: the shape has no elements");
  const std::uint64_t bytes = n * size_of(t);
  Result<Buffer> buf = Status();
  {
    py::gil_scoped_release nogil;
    buf = dev->device().alloc(bytes);
    // fill() works in 4-byte units: the tail of an odd-sized buffer is zeroed by upload.
    if (buf.ok()) {
      Status st = dev->device().fill(**buf, 0, LaunchResets::zero_bytes(**buf));
      if (st.ok() && bytes % 4 != 0) {
        const std::uint32_t zero = 0;
        st = dev->device().upload(**buf, &zero, bytes % 4, bytes - bytes % 4);
      }
      if (!st.ok()) buf = st;
    }
  }
  return std::make_shared<DeviceArray>(std::move(dev), check(std::move(buf)), t, std::move(dims));
}

py::array DeviceArray::numpy() const {
  std::vector<std::byte> host(count() * size_of(type_));
  Status st;
  {
    py::gil_scoped_release nogil;
    st = dev_->device().download(*buffer_, host.data(), host.size());
  }
  check(st);
  return numpy_array(type_, shape_, host.data());
}

void DeviceArray::upload(py::handle array) {
  if (!py::isinstance<py::array>(array))
    throw py::type_error("DeviceArray.upload: expected a NumPy array");
  HostArray h = host_array(array, "DeviceArray.upload");
  if (h.type != type_ || h.count != count())
    throw py::value_error("DeviceArray.upload: the array's dtype and size must be the buffer's (" +
                          numpy_name(type_) + ", " + std::to_string(count()) + " elements)");
  Status st;
  {
    py::gil_scoped_release nogil;
    st = dev_->device().upload(*buffer_, h.array.data(), h.bytes);
  }
  check(st);
}

}  // namespace tune::python
