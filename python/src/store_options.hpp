// Tuner(store=..., bundles=[...]): where a Python Tuner's results persist and which shipped
// bundles it reads (docs/python.md, docs/sharing.md).
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <vector>

#include "tune/store.hpp"

namespace tune::python {

namespace py = pybind11;

// store=: "postgresql://..." or "postgres://..." (the server behind this machine's local file,
// as TUNE_STORE does: tune/postgres_store.hpp's open_shared_store, TUNE_CACHE's mode), else the
// path of an SQLite tuning database (str or os.PathLike). None: the default store. ValueError
// for a server address when this libtune was built without its PostgreSQL component, or one
// that does not parse; never connects (the first tuning does).
std::shared_ptr<TuningStore> store_option(py::handle value);
// bundles=: a list of bundle paths (str or os.PathLike), looked up in order.
std::vector<std::string> bundles_option(py::handle value);

}  // namespace tune::python
