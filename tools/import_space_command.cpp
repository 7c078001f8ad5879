// `tune import-space`. See import_space_command.hpp.
#include "import_space_command.hpp"

#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "command_error.hpp"
#include "space/space_file.hpp"
#include "t1_expression.hpp"

namespace tune::cli {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr std::uintmax_t kMaxT1Bytes = 16u << 20;
// Conditions are checked on every point of spaces up to this size; larger ones are not
// counted ("valid_points": null).
constexpr std::uint64_t kMaxCountedPoints = 1000000;

struct ImportArgs {
  std::string file;
  std::string out = "-";
};

std::string read_t1(const std::string& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0)
    fail_command("tune import-space", "cannot read " + file + ": no such file");
  if (!S_ISREG(st.st_mode))
    fail_command("tune import-space", "cannot read " + file + ": not a regular file");
  if (static_cast<std::uintmax_t>(st.st_size) > kMaxT1Bytes)
    fail_command("tune import-space", file + " is larger than the T1 limit of 16 MiB");
  std::ifstream in(file, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  if (!in.good() && !in.eof()) fail_command("tune import-space", "cannot read " + file);
  return s.str();
}

// The member `name` of `obj` at `path`, of the JSON kind `kind` checks; fails naming it.
const json& member(const json& obj, const std::string& path, const char* name, bool required,
                   bool (json::*kind)() const noexcept, const char* kind_name) {
  static const json kNull;
  if (!obj.is_object()) fail_command("tune import-space", path + ": not an object");
  auto it = obj.find(name);
  if (it == obj.end()) {
    if (required)
      fail_command("tune import-space", path + "." + name + ": missing (T1 requires it)");
    return kNull;
  }
  if (!((*it).*kind)()) fail_command("tune import-space", path + "." + name + ": not " + kind_name);
  return *it;
}

PyValue from_json(const json& j, const std::string& path) {
  auto v = py_from_json(j);
  if (!v.ok()) fail_command("tune import-space", path + ": " + v.status().message());
  return *v;
}

// Whether `v` is of the T1 Type `type`.
bool of_type(const PyValue& v, const std::string& type) {
  if (type == "int") return std::holds_alternative<std::int64_t>(v.v);
  if (type == "uint")
    return std::holds_alternative<std::int64_t>(v.v) && std::get<std::int64_t>(v.v) >= 0;
  if (type == "float")
    return std::holds_alternative<double>(v.v) || std::holds_alternative<std::int64_t>(v.v);
  if (type == "bool") return std::holds_alternative<bool>(v.v);
  return std::holds_alternative<std::string>(v.v);
}

struct Parameter {
  std::string name;
  std::string type;
  PyList values;
};

std::vector<Parameter> read_parameters(const json& space) {
  const std::string base = "ConfigurationSpace";
  const json& list = member(space, base, "TuningParameters", true, &json::is_array, "an array");
  if (list.empty())
    fail_command("tune import-space",
                 base + ".TuningParameters: empty (a space needs a parameter)");
  std::vector<Parameter> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = base + ".TuningParameters[" + std::to_string(i) + "]";
    const json& p = list[i];
    const std::string name = member(p, path, "Name", true, &json::is_string, "a string");
    const std::string type = member(p, path, "Type", true, &json::is_string, "a string");
    if (type != "int" && type != "uint" && type != "float" && type != "bool" && type != "string")
      fail_command("tune import-space",
                   path + ".Type: '" + type + "' is not one of int, uint, float, bool, string");
    for (const auto& q : out)
      if (q.name == name)
        fail_command("tune import-space", path + ".Name: '" + name + "' is declared twice");
    if (!p.contains("Values"))
      fail_command("tune import-space", path + ".Values: missing (T1 requires it)");
    const json& values = p.at("Values");
    PyValue v;
    if (values.is_string()) {
      auto r = eval_python(values.get<std::string>());
      if (!r.ok()) fail_command("tune import-space", path + ".Values: " + r.status().message());
      v = std::move(*r);
    } else {
      v = from_json(values, path + ".Values");
    }
    auto* l = std::get_if<PyList>(&v.v);
    if (l == nullptr)
      fail_command("tune import-space", path + ".Values: " + py_repr(v) + " is not a list");
    if (l->empty()) fail_command("tune import-space", path + ".Values: no values");
    for (const auto& e : *l)
      if (!of_type(e, type))
        fail_command("tune import-space",
                     path + ".Values: " + py_repr(e) + " is not of the declared Type " + type);
    out.push_back({name, type, std::move(*l)});
  }
  return out;
}

struct Condition {
  std::string expression;
  std::string path;
  json parameters;  // the names T1 lists, checked to be parameters
};

std::vector<Condition> read_conditions(const json& space, const std::vector<Parameter>& params) {
  std::vector<Condition> out;
  const json& list =
      member(space, "ConfigurationSpace", "Conditions", false, &json::is_array, "an array");
  if (list.is_null()) return out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = "ConfigurationSpace.Conditions[" + std::to_string(i) + "]";
    const json& names = member(list[i], path, "Parameters", true, &json::is_array, "an array");
    for (const auto& n : names) {
      if (!n.is_string())
        fail_command("tune import-space", path + ".Parameters: " + n.dump() + " is not a string");
      bool known = false;
      for (const auto& p : params) known = known || p.name == n.get<std::string>();
      if (!known)
        fail_command("tune import-space",
                     path + ".Parameters: '" + n.get<std::string>() + "' is not a parameter");
    }
    out.push_back(
        {member(list[i], path, "Expression", true, &json::is_string, "a string"), path, names});
  }
  return out;
}

// The number of points, and of those every condition accepts (-1 past kMaxCountedPoints).
// A condition that fails to evaluate, or evaluates to something other than a truth value,
// fails naming it and the point.
// Out of line: inlined into cmd_import_space, GCC 12 reports a false free-nonheap-object.
[[gnu::noinline]] std::pair<std::uint64_t, std::int64_t> count_points(
    const std::vector<Parameter>& params, const std::vector<Condition>& conds,
    PyNames* first_valid) {
  std::uint64_t total = 1;
  for (const auto& p : params)
    total = total > kMaxCountedPoints * 1000 ? total : total * p.values.size();
  // Past kMaxCountedPoints the points are not counted: the walk stops at the first valid one
  // (for the launch sizes' check), within as many points.
  const bool counted = total <= kMaxCountedPoints;
  std::int64_t valid = 0;
  std::vector<std::size_t> idx(params.size(), 0);
  for (std::uint64_t n = 0; n < std::min(total, kMaxCountedPoints); ++n) {
    if (!counted && valid > 0) break;
    PyNames names;
    for (std::size_t i = 0; i < params.size(); ++i)
      names[params[i].name] = params[i].values[idx[i]];
    bool ok = true;
    for (const auto& c : conds) {
      auto r = eval_python(c.expression, names);
      if (!r.ok())
        fail_command("tune import-space", c.path + ".Expression: " + r.status().message());
      ok = ok && truthy(*r);
    }
    if (ok && valid++ == 0 && first_valid != nullptr) *first_valid = names;
    for (std::size_t i = params.size(); i-- > 0;) {
      if (++idx[i] < params[i].values.size()) break;
      idx[i] = 0;
    }
  }
  return {total, counted ? valid : -1};
}

json launch_size(const json& spec, const char* name, const PyNames& point) {
  const std::string path = std::string("KernelSpecification.") + name;
  const json& size = member(spec, "KernelSpecification", name, true, &json::is_object, "an object");
  json out = json::object();
  for (const char* axis : {"X", "Y", "Z"}) {
    const json& e = member(size, path, axis, axis[0] == 'X', &json::is_string, "a string");
    const std::string text = e.is_null() ? "1" : e.get<std::string>();
    if (!point.empty()) {
      auto r = eval_python(text, point);
      if (!r.ok())
        fail_command("tune import-space", path + "." + axis + ": " + r.status().message());
      if (!std::holds_alternative<std::int64_t>(r->v) || std::get<std::int64_t>(r->v) <= 0)
        fail_command("tune import-space", path + "." + axis + ": '" + text + "' is " + py_repr(*r) +
                                              " on the first valid point, not a positive integer");
    }
    std::string key(1, static_cast<char>(axis[0] - 'X' + 'x'));
    out[key] = text;
  }
  return out;
}

// The T1 fields the space file does not hold otherwise, kept for `tune export-space`.
json t1_extra(const json& doc) {
  static const char* const kSpecFields[] = {"Language",   "CompilerOptions", "KernelName",
                                            "KernelFile", "GlobalSizeType",  "LocalSize",
                                            "GlobalSize", "ProblemSize",     "Arguments"};
  json extra = json::object();
  for (const auto& [key, value] : doc.items())
    if (key != "ConfigurationSpace" && key != "KernelSpecification") extra[key] = value;
  json spec = doc.at("KernelSpecification");
  for (const char* f : kSpecFields) spec.erase(f);
  if (!spec.empty()) extra["KernelSpecification"] = spec;
  return extra;
}

void cmd_import_space(const ImportArgs& a) {
  const std::string text = read_t1(a.file);
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) fail_command("tune import-space", a.file + " is not JSON");
  if (!doc.is_object()) fail_command("tune import-space", a.file + ": a T1 document is an object");
  const json& space =
      member(doc, "(document)", "ConfigurationSpace", true, &json::is_object, "an object");
  const json& spec =
      member(doc, "(document)", "KernelSpecification", true, &json::is_object, "an object");
  const std::string language =
      member(spec, "KernelSpecification", "Language", true, &json::is_string, "a string");
  if (language != "CUDA" && language != "OpenCL" && language != "Vulkan")
    fail_command("tune import-space", "KernelSpecification.Language: '" + language +
                                          "' is not one of OpenCL, CUDA, Vulkan");
  const std::string kernel =
      member(spec, "KernelSpecification", "KernelName", true, &json::is_string, "a string");
  const std::string kernel_file =
      member(spec, "KernelSpecification", "KernelFile", true, &json::is_string, "a string");

  const std::vector<Parameter> params = read_parameters(space);
  const std::vector<Condition> conds = read_conditions(space, params);
  PyNames first;
  const auto [total, valid] = count_points(params, conds, &first);
  if (valid == 0)
    fail_command("tune import-space",
                 "ConfigurationSpace.Conditions: no point of the space passes them all");
  // Launch sizes may read ProblemSize, as Kernel Tuner lets argument sizes do. They are checked
  // on the first valid point, when one was found (an uncounted space may show none early).
  if (!first.empty() && spec.contains("ProblemSize"))
    first["ProblemSize"] = from_json(spec.at("ProblemSize"), "KernelSpecification.ProblemSize");

  json out = {{"format", "libtune-space"}, {"version", 1}, {"from", "T1 1.0.0: " + a.file}};
  out["kernel"] = kernel;
  std::string lang = language;
  for (char& c : lang) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  out["language"] = lang;
  out["kernel_file"] =
      (fs::absolute(a.file).parent_path() / fs::path(kernel_file)).lexically_normal().string();
  const json& opts =
      member(spec, "KernelSpecification", "CompilerOptions", false, &json::is_array, "an array");
  out["compiler_options"] = opts.is_null() ? json::array() : opts;
  json ps = json::array();
  for (const auto& p : params) {
    json values = json::array();
    for (const auto& v : p.values) values.push_back(py_to_json(v));
    ps.push_back({{"name", p.name}, {"type", p.type}, {"values", values}});
  }
  out["parameters"] = ps;
  json cs = json::array();
  for (const auto& c : conds)
    cs.push_back({{"expression", c.expression}, {"parameters", c.parameters}});
  out["conditions"] = cs;
  out["block"] = launch_size(spec, "LocalSize", first);
  out["grid"] = launch_size(spec, "GlobalSize", first);
  out["grid_type"] = spec.value("GlobalSizeType", language == "CUDA" ? "CUDA" : "OpenCL");
  if (spec.contains("ProblemSize")) out["problem_size"] = spec.at("ProblemSize");
  const json& args =
      member(spec, "KernelSpecification", "Arguments", false, &json::is_array, "an array");
  out["arguments"] = args.is_null() ? json::array() : args;
  out["points"] = total;
  out["valid_points"] = valid < 0 ? json(nullptr) : json(valid);
  out["t1_extra"] = t1_extra(doc);

  const std::string dumped = out.dump(2) + "\n";
  if (a.out == "-") {
    std::fwrite(dumped.data(), 1, dumped.size(), stdout);
    return;
  }
  std::ofstream f(a.out, std::ios::binary | std::ios::trunc);
  f << dumped;
  f.close();
  if (!f) fail_command("tune import-space", "cannot write " + a.out);
  std::printf("wrote %s: %s, %zu parameters, %llu points, %s valid\n", a.out.c_str(),
              kernel.c_str(), params.size(), static_cast<unsigned long long>(total),
              valid < 0 ? "not counted" : std::to_string(valid).c_str());
}

}  // namespace

void add_import_space_command(CLI::App& app) {
  auto args = std::make_shared<ImportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "import-space", "Read Kernel Tuner's T1 input format into a libtune space file");
  cmd->add_option("file", args->file, "The T1 JSON file")->required();
  cmd->add_option("--out", args->out, "The space file to write ('-', the default: stdout)");
  cmd->callback([args] { cmd_import_space(*args); });
}

}  // namespace tune::cli
