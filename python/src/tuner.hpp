// libtune.Tuner: an Autotuner over a libtune.Kernel, called as tuner(device, *args).
//
// Thread safety: a Tuner may be called from any number of Python threads at once. Every call
// releases the GIL while it uploads, tunes, launches and downloads (Python callbacks take it
// back for their own duration), so threads tune and launch concurrently and a callback never
// waits for a thread that holds the GIL while waiting for libtune.
// Lifetime: the Autotuner is shared by the calls in flight and destroyed by the last of them,
// or by close() / the Tuner's collection, always with the GIL released (its destructor waits
// for calls that are tuning, whose callbacks need the GIL); the devices it ran on are kept
// until then, so an Autotuner is always destroyed before its devices.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <mutex>
#include <vector>

#include "device.hpp"
#include "kernel.hpp"
#include "report.hpp"
#include "tune/autotuner.hpp"

namespace tune::python {

namespace py = pybind11;

class PyTuner {
 public:
  // Keyword options as documented on libtune.Tuner (module.cpp). TuneError for a definition or
  // options Autotuner::make refuses, naming the culprit.
  PyTuner(std::shared_ptr<PyKernel> kernel, const py::kwargs& options);
  ~PyTuner();
  PyTuner(const PyTuner&) = delete;
  PyTuner& operator=(const PyTuner&) = delete;

  // Launches the best configuration for these arguments, tuning first on a new key. Keywords:
  // stream (a CUstream for CUDA arrays), command_buffer (a VkCommandBuffer to record into),
  // reference (dict output name -> expected array, checked for every configuration while
  // tuning), rtol, atol.
  void call(const std::shared_ptr<PyDevice>& dev, const py::args& args, const py::kwargs& kw);
  // Tunes without launching; the chosen configuration as a dict.
  py::dict tune(const std::shared_ptr<PyDevice>& dev, const py::args& args, const py::kwargs& kw);
  // The configuration remembered for these arguments, or None.
  py::object best(const std::shared_ptr<PyDevice>& dev, const py::args& args);
  // Compiles every configuration the space accepts on `dev`.
  void warmup(const std::shared_ptr<PyDevice>& dev);

  py::list report() const { return report_rows(log_->all()); }
  py::list reports() const;
  // Destroys the Autotuner (waiting for calls in flight); later calls raise TuneError.
  void close();

 private:
  // The Autotuner and every device it ran on, destroyed in that order by the last holder.
  struct Held {
    std::mutex mu;  // guards devices
    std::vector<std::shared_ptr<PyDevice>> devices;
    std::unique_ptr<Autotuner> tuner;  // declared last: destroyed first
  };
  // The Autotuner for a call on `dev` (remembering `dev`); TuneError after close().
  std::shared_ptr<Held> acquire(const std::shared_ptr<PyDevice>& dev);
  // Binds the call, runs `fn(autotuner, args, target)` without the GIL, finishes the call.
  template <class F>
  void run_call(const std::shared_ptr<PyDevice>& dev, const py::args& args, const py::kwargs& kw,
                F&& fn);

  std::shared_ptr<PyKernel> kernel_;
  std::shared_ptr<ReportLog> log_ = std::make_shared<ReportLog>();
  std::mutex mu_;  // guards held_
  std::shared_ptr<Held> held_;
};

}  // namespace tune::python
