// A space file as a T1 document. See t1_writer.hpp.
#include "t1_writer.hpp"

namespace tune::cli {
namespace {

using nlohmann::json;

json size_object(const std::array<std::string, 3>& e) {
  return {{"X", e[0]}, {"Y", e[1]}, {"Z", e[2]}};
}

// T1's spelling of a language the space file keeps in lower case.
std::string t1_language(const std::string& lang) {
  if (lang == "cuda") return "CUDA";
  if (lang == "opencl") return "OpenCL";
  if (lang == "vulkan") return "Vulkan";
  return lang;
}

}  // namespace

json t1_document(const SpaceFile& space, const std::string& kernel_file) {
  json doc = json::object();
  for (const auto& [key, value] : space.t1_extra.items())
    if (key != "KernelSpecification") doc[key] = value;

  json params = json::array();
  for (const auto& p : space.parameters)
    params.push_back({{"Name", p.name}, {"Type", p.type}, {"Values", py_repr(PyValue{p.values})}});
  doc["ConfigurationSpace"] = {{"TuningParameters", params}};
  if (!space.conditions.empty()) {
    json conds = json::array();
    for (const auto& c : space.conditions)
      conds.push_back({{"Parameters", c.parameters}, {"Expression", c.expression}});
    doc["ConfigurationSpace"]["Conditions"] = conds;
  }

  json spec = space.t1_extra.value("KernelSpecification", json::object());
  spec["Language"] = t1_language(space.language);
  if (!space.compiler_options.empty()) spec["CompilerOptions"] = space.compiler_options;
  spec["KernelName"] = space.kernel;
  spec["KernelFile"] = kernel_file;
  spec["GlobalSizeType"] = space.grid_type;
  spec["LocalSize"] = size_object(space.block);
  spec["GlobalSize"] = size_object(space.grid);
  if (!space.problem_size.is_null()) spec["ProblemSize"] = space.problem_size;
  if (!space.arguments.empty()) spec["Arguments"] = space.arguments;
  doc["KernelSpecification"] = spec;
  return doc;
}

}  // namespace tune::cli
