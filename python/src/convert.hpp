// Values between Python and the core: configurations as dicts, parameter values, device facts.
//
// A configuration is a dict of its parameters and of the launch options that are set, under
// the reserved names of config.hpp ("block.x", "num_warps", ...): the same names a space uses.
// Every function needs the GIL held.
#pragma once

#include <pybind11/pybind11.h>

#include "tune/config.hpp"
#include "tune/device_info.hpp"

namespace tune::python {

namespace py = pybind11;

// bool -> boolean, int -> integer, str -> string; TypeError naming `what` otherwise.
Value to_value(py::handle h, const char* what);
py::object from_value(const Value& v);

py::dict config_to_dict(const Config& c);
// A dict of parameter and launch-option values (as config_to_dict writes them).
Config dict_to_config(py::handle d);

// DeviceInfo's fields as a dict (what constraints, heuristics and perf models are given).
py::dict device_info_dict(const DeviceInfo& info);

}  // namespace tune::python
