#include "errors.hpp"

#include <exception>
#include <string>
#include <utility>

namespace tune::python {
namespace {

// The class object, created once in register_errors and kept for the module's life (a
// pybind11 exception class is never destroyed before the interpreter).
PyObject* g_tune_error = nullptr;

// A raw reference, not a py::object: a py::object in a thread_local would be released at
// thread exit without the GIL. Always read and written with the GIL held.
thread_local PyObject* t_last_error = nullptr;

}  // namespace

void register_errors(py::module_& m) {
  static py::exception<Error> cls(m, "TuneError", PyExc_RuntimeError);
  cls.doc() =
      "A libtune error: `code` is the StatusCode's name ('compile_error', 'all_failed', ...), "
      "`message` its context.";
  g_tune_error = cls.ptr();
  // A tune::Error thrown through the binding (Result::value()) is raised as its Status.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      py::object exc = error_object(e.status());
      PyErr_SetObject(g_tune_error, exc.ptr());
    }
  });
}

py::object error_object(const Status& status) {
  py::object exc = py::reinterpret_borrow<py::object>(g_tune_error)(status.to_string());
  exc.attr("code") = std::string(to_string(status.code()));
  exc.attr("message") = status.message();
  return exc;
}

void raise_status(const Status& status) {
  py::object original = PythonErrorSlot::take();
  if (!original.is_none() && status.code() == StatusCode::callback_failed) {
    if (py::hasattr(original, "add_note"))
      original.attr("add_note")("libtune: " + status.to_string());
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(original.ptr())), original.ptr());
    throw py::error_already_set();
  }
  py::object exc = error_object(status);
  PyErr_SetObject(g_tune_error, exc.ptr());
  throw py::error_already_set();
}

std::string describe(py::error_already_set& e) {
  const auto type = py::str(e.type().attr("__name__")).cast<std::string>();
  const auto text = py::str(e.value()).cast<std::string>();
  return text.empty() ? type : type + ": " + text;
}

void PythonErrorSlot::remember(py::error_already_set& e) {
  py::object value = e.value();
  if (!e.trace().is_none()) PyException_SetTraceback(value.ptr(), e.trace().ptr());
  Py_XDECREF(t_last_error);
  t_last_error = value.release().ptr();
}

void PythonErrorSlot::clear() { Py_CLEAR(t_last_error); }

py::object PythonErrorSlot::take() {
  if (t_last_error == nullptr) return py::none();
  return py::reinterpret_steal<py::object>(std::exchange(t_last_error, nullptr));
}

}  // namespace tune::python
