// libtune.DeviceArray: a buffer of libtune's device holding an array (from NumPy, or empty),
// passed to a Tuner without a copy per call: how a Vulkan program keeps its data on the GPU.
// Holds its PyDevice, so the buffer is freed before the device. Thread safety: upload and
// download are ordered on the device's queue; methods need the GIL and release it while they
// wait on the device.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <vector>

#include "device.hpp"

namespace tune::python {

namespace py = pybind11;

class DeviceArray {
 public:
  DeviceArray(std::shared_ptr<PyDevice> dev, std::shared_ptr<DeviceBuffer> buffer, ElemType type,
              std::vector<py::ssize_t> shape);
  // Freeing the buffer may wait on the device: the GIL is released meanwhile when held.
  ~DeviceArray();
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  // A new buffer of `dev` holding `array`'s data.
  static std::shared_ptr<DeviceArray> from_numpy(std::shared_ptr<PyDevice> dev, py::handle array);
  // A new zero-filled buffer of `shape` and `dtype`.
  static std::shared_ptr<DeviceArray> zeros(std::shared_ptr<PyDevice> dev, py::handle shape,
                                            py::handle dtype);

  // Downloads the contents as a new NumPy array (bfloat16 as float32). Blocks.
  py::array numpy() const;
  // Uploads `array` (same element type and size).
  void upload(py::handle array);

  const std::shared_ptr<PyDevice>& device() const noexcept { return dev_; }
  const std::shared_ptr<DeviceBuffer>& shared_buffer() const noexcept { return buffer_; }
  ElemType type() const noexcept { return type_; }
  const std::vector<py::ssize_t>& shape() const noexcept { return shape_; }
  std::uint64_t count() const noexcept;

 private:
  std::shared_ptr<PyDevice> dev_;
  std::shared_ptr<DeviceBuffer> buffer_;
  ElemType type_;
  std::vector<py::ssize_t> shape_;
};

}  // namespace tune::python
