#include "convert.hpp"

#include <string>
#include <vector>

namespace tune::python {

Value to_value(py::handle h, const char* what) {
  // bool before int: Python's bool is an int.
  if (py::isinstance<py::bool_>(h)) return Value{h.cast<bool>()};
  if (py::isinstance<py::int_>(h)) return Value{h.cast<std::int64_t>()};
  if (py::isinstance<py::str>(h)) return Value{h.cast<std::string>()};
  // NumPy integers and booleans (np.int64(4)) as their Python values.
  if (py::hasattr(h, "item") && !py::isinstance<py::float_>(h))
    return to_value(h.attr("item")(), what);
  throw py::type_error(std::string(what) + ": " + py::repr(h).cast<std::string>() +
                       " is not an int, bool or str (libtune's parameter value types)");
}

py::object from_value(const Value& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return py::int_(*i);
  if (const auto* b = std::get_if<bool>(&v)) return py::bool_(*b);
  return py::str(std::get<std::string>(v));
}

py::dict config_to_dict(const Config& c) {
  py::dict d;
  for (const auto& [name, value] : c.params()) d[py::str(name)] = from_value(value);
  const LaunchOptions& l = c.launch();
  // Only the dimensions that are set: the dict converts back to the same Config (a block of
  // {256, 0, 0} is not the point {256, 1, 1} of a space).
  if (l.block.x != 0) d[py::str(kBlockX)] = l.block.x;
  if (l.block.y != 0) d[py::str(kBlockY)] = l.block.y;
  if (l.block.z != 0) d[py::str(kBlockZ)] = l.block.z;
  if (l.num_warps != 0) d[py::str(kNumWarps)] = l.num_warps;
  if (l.num_stages != 0) d[py::str(kNumStages)] = l.num_stages;
  if (l.max_registers != 0) d[py::str(kMaxRegisters)] = l.max_registers;
  if (l.shared_bytes != 0) d[py::str(kSharedBytes)] = l.shared_bytes;
  return d;
}

Config dict_to_config(py::handle d) {
  if (!py::isinstance<py::dict>(d))
    throw py::type_error("a configuration must be a dict, not " + py::repr(d).cast<std::string>());
  Config c;
  for (auto [k, v] : py::reinterpret_borrow<py::dict>(d)) {
    const auto name = k.cast<std::string>();
    c.set(name, to_value(v, name.c_str()));
  }
  return c;
}

namespace {

// Per workgroup size: (invocations, (m, n, k) granularity, largest dimension).
py::list workgroup_shapes(const std::vector<WorkgroupMatrixShape>& shapes) {
  py::list out;
  for (const WorkgroupMatrixShape& s : shapes) {
    const MatrixShape& g = s.granularity;
    out.append(py::make_tuple(s.invocations, py::make_tuple(g.m, g.n, g.k), s.max_dimension));
  }
  return out;
}

}  // namespace

py::dict device_info_dict(const DeviceInfo& info) {
  auto dim3 = [](const Dim3& d) { return py::make_tuple(d.x, d.y, d.z); };
  py::dict d;
  d["backend"] = info.backend;
  d["vendor"] = info.vendor;
  d["name"] = info.name;
  d["arch"] = info.arch;
  d["driver_version"] = info.driver_version;
  d["compiler_version"] = info.compiler_version;
  d["uuid"] = info.uuid;
  d["compute_units"] = info.compute_units;
  d["max_threads_per_block"] = info.max_threads_per_block;
  d["max_block"] = dim3(info.max_block);
  d["max_grid"] = dim3(info.max_grid);
  d["shared_bytes_per_block"] = info.shared_bytes_per_block;
  d["shared_bytes_per_block_optin"] = info.shared_bytes_per_block_optin;
  d["registers_per_block"] = info.registers_per_block;
  d["warp_size"] = info.warp_size;
  d["min_subgroup_size"] = info.min_subgroup_size;
  d["max_subgroup_size"] = info.max_subgroup_size;
  py::list shapes;
  for (const MatrixShape& s : info.matrix_shapes_f16) shapes.append(py::make_tuple(s.m, s.n, s.k));
  d["matrix_shapes_f16"] = shapes;
  d["workgroup_matrix_f16"] = workgroup_shapes(info.workgroup_matrix_f16);
  d["workgroup_matrix_bf16"] = workgroup_shapes(info.workgroup_matrix_bf16);
  d["l2_bytes"] = info.l2_bytes;
  d["llc_bytes"] = info.llc_bytes;
  d["llc_source"] = std::string(tune::to_string(info.llc_source));
  d["global_memory_bytes"] = info.global_memory_bytes;
  d["fingerprint"] = info.fingerprint();
  return d;
}

}  // namespace tune::python
