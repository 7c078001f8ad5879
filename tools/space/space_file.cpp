// Reading a space file. See space_file.hpp.
#include "space_file.hpp"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

namespace tune::cli {
namespace {

using nlohmann::json;

constexpr std::uintmax_t kMaxSpaceBytes = 16u << 20;

Status bad(const std::string& field, const std::string& why) {
  return Status(StatusCode::invalid_argument, "space file: " + field + ": " + why);
}

Result<std::string> string_at(const json& obj, const std::string& path, const char* name) {
  auto it = obj.find(name);
  if (it == obj.end()) return bad(path + name, "missing");
  if (!it->is_string()) return bad(path + name, "not a string");
  return it->get<std::string>();
}

Result<std::array<std::string, 3>> size_at(const json& doc, const char* name) {
  auto it = doc.find(name);
  if (it == doc.end() || !it->is_object()) return bad(name, "missing or not an object");
  std::array<std::string, 3> out;
  const char* axes[] = {"x", "y", "z"};
  for (int i = 0; i < 3; ++i) {
    TUNE_ASSIGN_OR_RETURN(out[i], string_at(*it, std::string(name) + ".", axes[i]));
  }
  return out;
}

}  // namespace

json py_to_json(const PyValue& v) {
  return std::visit(
      [](const auto& x) -> json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, PyList>) {
          json a = json::array();
          for (const auto& e : x) a.push_back(py_to_json(e));
          return a;
        } else {
          return json(x);
        }
      },
      v.v);
}

Result<PyValue> py_from_json(const json& j) {
  if (j.is_boolean()) return PyValue{j.get<bool>()};
  if (j.is_number_integer()) return PyValue{j.get<std::int64_t>()};
  if (j.is_number()) return PyValue{j.get<double>()};
  if (j.is_string()) return PyValue{j.get<std::string>()};
  if (!j.is_array())
    return Status(StatusCode::invalid_argument, j.dump() + " is not a value T1 can hold");
  PyList l;
  for (const auto& e : j) {
    TUNE_ASSIGN_OR_RETURN(PyValue v, py_from_json(e));
    l.push_back(std::move(v));
  }
  return PyValue{std::move(l)};
}

Result<SpaceFile> space_from_json(const json& doc) {
  if (!doc.is_object() || doc.value("format", "") != "libtune-space")
    return bad("format", "not a libtune space file (tune import-space writes them)");
  if (doc.value("version", 0) != 1) return bad("version", "not 1");
  SpaceFile s;
  TUNE_ASSIGN_OR_RETURN(s.kernel, string_at(doc, "", "kernel"));
  TUNE_ASSIGN_OR_RETURN(s.language, string_at(doc, "", "language"));
  TUNE_ASSIGN_OR_RETURN(s.kernel_file, string_at(doc, "", "kernel_file"));
  for (const auto& o : doc.value("compiler_options", json::array())) {
    if (!o.is_string()) return bad("compiler_options", o.dump() + " is not a string");
    s.compiler_options.push_back(o.get<std::string>());
  }
  const json params = doc.value("parameters", json::array());
  if (!params.is_array() || params.empty()) return bad("parameters", "missing or empty");
  for (std::size_t i = 0; i < params.size(); ++i) {
    const std::string path = "parameters[" + std::to_string(i) + "].";
    if (!params[i].is_object()) return bad(path, "not an object");
    SpaceParameter p;
    TUNE_ASSIGN_OR_RETURN(p.name, string_at(params[i], path, "name"));
    TUNE_ASSIGN_OR_RETURN(p.type, string_at(params[i], path, "type"));
    auto v = params[i].find("values");
    if (v == params[i].end() || !v->is_array() || v->empty())
      return bad(path + "values", "missing or empty");
    auto values = py_from_json(*v);
    if (!values.ok()) return bad(path + "values", values.status().message());
    p.values = std::get<PyList>(values->v);
    s.parameters.push_back(std::move(p));
  }
  const json conds = doc.value("conditions", json::array());
  for (std::size_t i = 0; i < conds.size(); ++i) {
    const std::string path = "conditions[" + std::to_string(i) + "].";
    if (!conds[i].is_object()) return bad(path, "not an object");
    SpaceCondition c;
    TUNE_ASSIGN_OR_RETURN(c.expression, string_at(conds[i], path, "expression"));
    for (const auto& n : conds[i].value("parameters", json::array()))
      if (n.is_string()) c.parameters.push_back(n.get<std::string>());
    s.conditions.push_back(std::move(c));
  }
  TUNE_ASSIGN_OR_RETURN(s.block, size_at(doc, "block"));
  TUNE_ASSIGN_OR_RETURN(s.grid, size_at(doc, "grid"));
  TUNE_ASSIGN_OR_RETURN(s.grid_type, string_at(doc, "", "grid_type"));
  s.problem_size = doc.value("problem_size", json());
  s.arguments = doc.value("arguments", json::array());
  if (!s.arguments.is_array()) return bad("arguments", "not an array");
  s.t1_extra = doc.value("t1_extra", json::object());
  if (!s.t1_extra.is_object()) return bad("t1_extra", "not an object");
  return s;
}

Result<SpaceFile> read_space_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return Status(StatusCode::not_found, "cannot read the space file " + path);
  if (static_cast<std::uintmax_t>(st.st_size) > kMaxSpaceBytes)
    return Status(StatusCode::invalid_argument, path + " is larger than 16 MiB");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  const json doc = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Status(StatusCode::invalid_argument, path + " is not JSON");
  auto s = space_from_json(doc);
  if (!s.ok()) return Status(s.status().code(), path + ": " + s.status().message());
  return s;
}

PyNames expression_names(const SpaceFile& space, const PyNames& point) {
  PyNames names = point;
  if (auto size = py_from_json(space.problem_size); size.ok()) names["ProblemSize"] = *size;
  return names;
}

PyNames size_names(const SpaceFile& space) {
  PyNames lists;
  for (const SpaceParameter& p : space.parameters) lists[p.name] = PyValue{p.values};
  return expression_names(space, lists);
}

}  // namespace tune::cli
