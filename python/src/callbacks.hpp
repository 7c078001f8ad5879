// Python callables inside the core's callbacks.
//
// The core calls a KernelDef's callbacks with the GIL released (the binding releases it for
// every blocking call), on the calling thread or on a tuning thread of its own. Each Python
// callback therefore takes the GIL for its own duration only. A Python exception is kept for
// the thread (PythonErrorSlot, errors.hpp) and becomes a C++ exception whose text is the
// Python one, which the core reports as callback_failed naming the callback and the
// configuration; the binding then raises the original exception from the call.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "errors.hpp"

namespace tune::python {

namespace py = pybind11;

// A Python object shared by C++ callbacks: copying one is an atomic count, and the last copy
// releases the object with the GIL taken, whatever thread drops it.
using PyRef = std::shared_ptr<py::object>;
inline PyRef keep(py::object o) {
  return PyRef(new py::object(std::move(o)), [](py::object* p) {
    py::gil_scoped_acquire gil;
    delete p;
  });
}

// Runs `fn` with the GIL held and returns its result, which must hold no Python object (it
// outlives the GIL). A Python exception is kept for the thread and thrown as C++.
template <class F>
auto with_gil(F&& fn) -> decltype(fn()) {
  py::gil_scoped_acquire gil;
  try {
    return fn();
  } catch (py::error_already_set& e) {
    std::string text = describe(e);
    PythonErrorSlot::remember(e);
    throw std::runtime_error(text);
  }
}

}  // namespace tune::python
