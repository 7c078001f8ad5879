// Errors between libtune and Python: tune::Status as the Python exception libtune.TuneError,
// and the Python exception a callback raised carried back to the call that ran it.
//
// A Python callback (a constraint, dims, a hook, verify...) runs inside the core, which turns
// a C++ exception into a callback_failed Status naming the callback and the configuration
// (core/src/tuning/user_code.cpp). The callback's Python exception, with its traceback, is
// kept for the thread that ran it (PythonErrorSlot); when the call returns callback_failed the
// binding raises that original exception, the libtune status added as a note, instead of a
// TuneError that would only repeat its text.
//
// Thread safety: the slot is per thread; every function here needs the GIL held.
#pragma once

#include <pybind11/pybind11.h>

#include "tune/status.hpp"

namespace tune::python {

namespace py = pybind11;

// Creates libtune.TuneError (a RuntimeError with `code` and `message`) in `m`.
void register_errors(py::module_& m);

// A TuneError instance for `status` (not raised): what a post_hook is told as its outcome.
py::object error_object(const Status& status);

// Raises `status` as Python sees it: the exception a Python callback raised on this thread
// during the call, when there is one and the status is callback_failed; TuneError otherwise.
[[noreturn]] void raise_status(const Status& status);

// Throws (into C++) when `status` is not ok.
inline void check(const Status& status) {
  if (!status.ok()) raise_status(status);
}
template <class T>
T check(Result<T> result) {
  if (!result.ok()) raise_status(result.status());
  return std::move(*result);
}

// "ValueError: boom": a Python exception as the core's message shows it.
std::string describe(py::error_already_set& e);

// The Python exception of the last callback that failed on this thread.
class PythonErrorSlot {
 public:
  // Keeps `e` (its value with the traceback attached), replacing any older one.
  static void remember(py::error_already_set& e);
  // Drops what an earlier call left: called at the start of each call.
  static void clear();
  // Takes the kept exception (None when there is none).
  static py::object take();
};

}  // namespace tune::python
