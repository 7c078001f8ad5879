// The Python module `libtune`: a thin layer over the C++ core (README, "From Python").
// Each class lives in its own file; this one only declares them to Python.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "convert.hpp"
#include "device.hpp"
#include "device_array.hpp"
#include "errors.hpp"
#include "kernel.hpp"
#include "tune/registry.hpp"
#include "tune/version.hpp"
#include "tuner.hpp"

namespace py = pybind11;
using namespace tune::python;

namespace {

std::shared_ptr<PyDevice> open_device(const std::string& spec) {
  tune::Result<std::shared_ptr<PyDevice>> dev = tune::Status();
  {
    py::gil_scoped_release nogil;
    dev = PyDevice::open(spec);
  }
  return check(std::move(dev));
}

std::shared_ptr<PyDevice> cuda_device(py::object which) {
  int ordinal = 0;
  if (py::isinstance<py::int_>(which)) {
    ordinal = which.cast<int>();
  } else if (!which.is_none()) {  // a tensor (its DLPack device) or a torch.device
    if (py::hasattr(which, "__dlpack_device__"))
      ordinal = which.attr("__dlpack_device__")().cast<py::tuple>()[1].cast<int>();
    else if (py::hasattr(which, "index") && !which.attr("index").is_none())
      ordinal = which.attr("index").cast<int>();
  }
  tune::Result<std::shared_ptr<PyDevice>> dev = tune::Status();
  {
    py::gil_scoped_release nogil;
    dev = PyDevice::cuda(ordinal);
  }
  return check(std::move(dev));
}

}  // namespace

namespace {

// The module's functions: backends, open_device, cuda_device, pow2, and grid_1d.
void bind_functions(py::module_& m) {
  m.def("backends", &tune::compiled_backends, "Backends compiled into this build.");
  m.def(
      "has_postgresql",
      [] {
#if defined(TUNE_HAVE_POSTGRESQL)
        return true;
#else
        return false;
#endif
      },
      "Whether this build has the PostgreSQL component (Tuner(store='postgresql://...')).");
  m.def("open_device", &open_device, py::arg("spec") = "",
        "Opens a device: 'vulkan', 'cuda:1', 'vulkan:llvmpipe'; '' reads TUNE_DEVICE, else the "
        "first backend that opens.");
  m.def("cuda_device", &cuda_device, py::arg("device") = py::none(),
        "The CUDA device of an ordinal, a tensor or a torch.device, on the primary context "
        "(the one PyTorch and CuPy use); one per ordinal.");
  m.def(
      "pow2", [](const std::string& arg) { return py::make_tuple(arg, "pow2"); }, py::arg("arg"),
      "A key entry: the argument rounded up to a power of two.");

  py::class_<Grid1D>(m, "grid_1d",
                     "dims for an elementwise kernel: grid.x = ceil(size / product of per_block), "
                     "the block from the configuration; no Python call per launch.")
      .def(py::init([](std::string size, std::vector<std::string> per_block) {
             return Grid1D{std::move(size), std::move(per_block)};
           }),
           py::arg("size"), py::arg("per_block") = std::vector<std::string>{"block.x"});
}

// Device and DeviceArray.
void bind_devices(py::module_& m) {
  py::class_<PyDevice, std::shared_ptr<PyDevice>>(m, "Device", "A device libtune tunes on.")
      .def(py::init(&open_device), py::arg("spec") = "")
      .def_property_readonly("info", [](const PyDevice& d) { return device_info_dict(d.info()); })
      .def_property_readonly("backend", [](const PyDevice& d) { return d.info().backend; })
      .def_property_readonly("name", [](const PyDevice& d) { return d.info().name; })
      .def(
          "array",
          [](const std::shared_ptr<PyDevice>& d, py::handle a) {
            return DeviceArray::from_numpy(d, a);
          },
          py::arg("array"), "A DeviceArray holding a copy of a NumPy array.")
      .def(
          "zeros",
          [](const std::shared_ptr<PyDevice>& d, py::handle shape, py::handle dtype) {
            return DeviceArray::zeros(d, shape, dtype);
          },
          py::arg("shape"), py::arg("dtype") = "float32")
      .def("synchronize",
           [](PyDevice& d) {
             tune::Status st;
             {
               py::gil_scoped_release nogil;
               st = d.device().synchronize();
             }
             check(st);
           })
      .def("__repr__", [](const PyDevice& d) {
        return "<libtune.Device " + d.info().backend + ": " + d.info().name + ">";
      });

  py::class_<DeviceArray, std::shared_ptr<DeviceArray>>(m, "DeviceArray",
                                                        "An array in a libtune device's memory.")
      .def("numpy", &DeviceArray::numpy, "Downloads the contents (bfloat16 as float32).")
      .def("upload", &DeviceArray::upload, py::arg("array"))
      .def_property_readonly("shape",
                             [](const DeviceArray& a) { return py::tuple(py::cast(a.shape())); })
      .def_property_readonly("dtype",
                             [](const DeviceArray& a) { return std::string(to_string(a.type())); })
      .def_property_readonly("device", &DeviceArray::device)
      .def("__len__", [](const DeviceArray& a) { return a.shape().empty() ? 0 : a.shape()[0]; });
}

// Kernel: a definition made from Python keywords (kernel.cpp).
void bind_kernel(py::module_& m) {
  py::class_<PyKernel, std::shared_ptr<PyKernel>>(m, "Kernel", R"doc(
A tunable kernel. Kernel(name, source, *, language, signature, space, dims, ...):
  source        the kernel's text, or a dict {'cuda': text, 'glsl': text}
  language      'cuda' (also HIP) or 'glsl' when source is text
  entry         the entry function (default: name for CUDA, 'main' for GLSL)
  signature     ['x: f32[]', 'n: i32', ...]: buffers end in [], types f16 bf16 f32 f64 i8..u64
  space         {'block.x': [64, 128], 'ELEMS': [1, 2]} or a list of config dicts
  dims          callable(config, args) -> grid | {'grid', 'block', 'shared_bytes'}, or grid_1d
  key           ['n', ('m', 'pow2'), ('k', callable)]
  constraints   {name: callable(config, device_info) -> bool}
  derive        callable(config) -> dict of values to set
  heuristics    {param: callable(args, device_info) -> value}
  early_prune   callable(list of configs, args) -> list of configs
  perf_model    callable(config, args, device_info) -> float, with top_k / top_fraction
  reset_to_zero, restore_value   buffer names
  pre_hook      callable(config, args); post_hook callable(config, args, outcome)
  verify        callable(config, outputs) -> bool (False drops the configuration)
  outputs       the buffers the kernel writes (default: every buffer)
  options, include_dirs, headers   compiler options, include directories, {name: text}
)doc")
      .def(py::init([](const std::string& name, py::object source, const py::kwargs& kw) {
             return PyKernel::make(name, std::move(source), kw);
           }),
           py::arg("name"), py::arg("source"))
      .def_property_readonly("name", [](const PyKernel& k) { return k.def().name; });
}

// Tuner: options from keywords (tuner.cpp), calls, and reports.
void bind_tuner(py::module_& m) {
  py::class_<PyTuner, std::shared_ptr<PyTuner>>(m, "Tuner", R"doc(
Tunes a Kernel per key and launches the winner: tuner(device, *args, stream=None,
command_buffer=None, reference=None, rtol=1e-5, atol=1e-8).
Options: warmup_ms, rep_ms, warmup_count, rep_count, racing, tolerance, race_tolerance,
tie_tolerance, timing_cache, timeout_ms, persistent, tuning_budget_ms, disable, strict, print,
gpu_lock, capture_miss,
store (where results persist: 'postgresql://...' shares them through a PostgreSQL server behind
this machine's local file, as TUNE_STORE does; else an SQLite database path; default: the
default store), bundles (a list of bundle paths read after the store, before TUNE_BUNDLES),
verify ('winner_candidates': only what can win has its output checked, the default;
'every_configuration': every configuration timed is checked, as Kernel Tuner does),
effort ('quick': short timing budgets and about 30 configurations; 'standard', the default:
every configuration up to 250, else a model-guided search of 250 evaluations; 'thorough': longer
timing, every configuration up to 4096, else a search of 1000; a kernel's own search strategy
keeps its budget, timing options given take precedence).
report()'s 'strategy' names the search that chose the configurations ('' when all were timed).
report() rows say each configuration's 'verification': verified, not_checked or wrong_output.
)doc")
      .def(py::init([](std::shared_ptr<PyKernel> k, const py::kwargs& kw) {
             return std::make_shared<PyTuner>(std::move(k), kw);
           }),
           py::arg("kernel"))
      .def("__call__", &PyTuner::call, py::arg("device"))
      .def("tune", &PyTuner::tune, py::arg("device"),
           "Tunes (when the key is new) without launching; returns the chosen configuration.")
      .def("best", &PyTuner::best, py::arg("device"),
           "The configuration remembered for these arguments, or None.")
      .def("warmup", &PyTuner::warmup, py::arg("device"))
      .def("report", &PyTuner::report,
           "One dict per configuration of every tuning so far (pandas.DataFrame(rows)).")
      .def("reports", &PyTuner::reports, "One dict per tuning, its results nested.")
      .def("close", &PyTuner::close);
}

}  // namespace

PYBIND11_MODULE(libtune, m) {
  m.doc() = "libtune: autotuning of GPU kernels (CUDA, HIP, Vulkan) from Python";
  m.attr("__version__") = std::string(tune::kVersion);
  register_errors(m);

  bind_functions(m);
  bind_devices(m);
  bind_kernel(m);
  bind_tuner(m);
}
