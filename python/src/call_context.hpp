// The Python side of one call of a Tuner: its arguments as the caller gave them and what to
// verify against, for the callbacks that run during that call on the calling thread.
//
// The core runs a tuning on the caller's thread (TuningMode::sync, the only mode the binding
// offers), so a thread-local pointer set for the call's duration reaches every callback. A
// callback run elsewhere (a compile pool's thread) finds none and sees the arguments as the
// core has them (scalars as numbers, buffers as element counts).
// Read and written with the GIL held; the pointed-to object lives on the caller's stack.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tune/args.hpp"

namespace tune::python {

namespace py = pybind11;

struct Reference {
  std::size_t arg = 0;  // position of the output buffer in the signature
  py::array expected;   // on the host, flattened
};

struct CallContext {
  py::tuple args;                                // as the caller passed them
  std::vector<std::vector<py::ssize_t>> shapes;  // per argument: its array shape (buffers)
  std::vector<Reference> references;
  double rtol = 1e-5;
  double atol = 1e-8;

  // The context of the call running on this thread, or null.
  static CallContext* current() noexcept { return current_ref(); }

  // Sets the context for a scope.
  class Scope {
   public:
    explicit Scope(CallContext& c) : prev_(current_ref()) { current_ref() = &c; }
    ~Scope() { current_ref() = prev_; }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    CallContext* prev_;
  };

 private:
  static CallContext*& current_ref() noexcept {
    thread_local CallContext* c = nullptr;
    return c;
  }
};

}  // namespace tune::python
