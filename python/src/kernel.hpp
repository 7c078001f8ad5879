// libtune.Kernel: a tune::KernelDef built from Python: source text, signature, space, and
// Python callables for dims, constraints, derive, heuristics, early prune, perf model, hooks
// and verify (each wrapped by callbacks.hpp: GIL taken for the call, exceptions carried back).
//
// Immutable once built; a Tuner copies its KernelDef into an Autotuner. The callbacks hold
// the Python callables through PyRef and the signature through ArgMeta, never the PyKernel,
// so no reference cycle keeps either alive. Building needs the GIL.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <vector>

#include "callbacks.hpp"
#include "tune/kernel.hpp"

namespace tune::python {

namespace py = pybind11;

// The signature as the binding's callbacks and argument binding read it.
struct ArgMeta {
  std::vector<ArgDecl> decls;
  std::vector<std::size_t> outputs;  // buffers written by the kernel (default: every buffer)
  int index_of(const std::string& name) const;
};

// grid.x = ceil(size / product of per_block), the block from the configuration: the dims of an
// elementwise kernel without a Python call per launch.
struct Grid1D {
  std::string size;                    // a scalar argument (its value) or buffer (its count)
  std::vector<std::string> per_block;  // configuration names: "block.x", "ELEMS"
};

class PyKernel {
 public:
  PyKernel() = default;
  // Keyword arguments as documented on libtune.Kernel (module.cpp); TypeError / ValueError
  // naming the culprit. Validation of the whole definition is Autotuner::make's.
  static std::shared_ptr<PyKernel> make(const std::string& name, py::object source,
                                        const py::kwargs& kw);

  const KernelDef& def() const noexcept { return def_; }
  const std::shared_ptr<const ArgMeta>& meta() const noexcept { return meta_; }

 private:
  KernelDef def_;
  std::shared_ptr<const ArgMeta> meta_;
};

// The call's arguments for a Python callback: name -> the object the caller passed (or, off
// the calling thread, scalars as numbers and buffers as element counts).
py::dict args_dict(const ArgMeta& meta, ArgList args);

}  // namespace tune::python
