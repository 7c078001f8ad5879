// A space file as a KernelDef. See space_kernel.hpp.
#include "space_kernel.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "space_args.hpp"

namespace tune::cli {
namespace {

Status invalid_field(const std::string& field, const std::string& why) {
  return Status(StatusCode::invalid_argument, field + ": " + why);
}

// A T1 value as a configuration value: int, uint and bool keep their kind; float and string
// become their source text, which is how the kernel sees them (`-Dname=text`).
Value config_value(const PyValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v.v)) return *i;
  if (const auto* b = std::get_if<bool>(&v.v)) return *b;
  if (const auto* s = std::get_if<std::string>(&v.v)) return *s;
  return py_repr(v);
}

// The inverse of config_value for the expressions: the T1 value of `name` on `config`.
PyValue t1_value(const SpaceParameter& p, const Value& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return PyValue{*i};
  if (const auto* b = std::get_if<bool>(&v)) return PyValue{*b};
  const std::string& s = std::get<std::string>(v);
  for (const auto& e : p.values)
    if (py_repr(e) == s ||
        (std::holds_alternative<std::string>(e.v) && std::get<std::string>(e.v) == s))
      return e;
  return PyValue{s};
}

// The positive integer `text` evaluates to on `names`; fails naming `field`.
Result<std::uint32_t> eval_extent(const std::string& field, const std::string& text,
                                  const PyNames& names) {
  auto r = eval_python(text, names);
  if (!r.ok()) return invalid_field(field, "'" + text + "': " + r.status().message());
  const auto* i = std::get_if<std::int64_t>(&r->v);
  if (i == nullptr || *i <= 0 || *i > 0xffffffffLL)
    return invalid_field(field, "'" + text + "' is " + py_repr(*r) + ", not a positive integer");
  return static_cast<std::uint32_t>(*i);
}

Result<Dim3> eval_dim3(const char* field, const std::array<std::string, 3>& e,
                       const PyNames& names) {
  Dim3 d;
  std::uint32_t* out[] = {&d.x, &d.y, &d.z};
  const char* axes[] = {".X", ".Y", ".Z"};
  for (int i = 0; i < 3; ++i) {
    TUNE_ASSIGN_OR_RETURN(*out[i], eval_extent(std::string(field) + axes[i], e[i], names));
  }
  return d;
}

Result<KernelSource> read_source(const SpaceFile& s) {
  KernelSource src;
  if (s.language == "cuda") {
    src.language = Language::cuda_hip;
    src.entry = s.kernel;
  } else if (s.language == "vulkan") {
    src.language = Language::glsl;
    src.entry = "main";
  } else {
    return invalid_field(
        "KernelSpecification.Language",
        "'" + s.language + "' kernels cannot run in libtune (CUDA/HIP and Vulkan GLSL only)");
  }
  std::ifstream in(s.kernel_file, std::ios::binary);
  if (!in)
    return Status(StatusCode::not_found,
                  "KernelSpecification.KernelFile: cannot read " + s.kernel_file);
  std::ostringstream text;
  text << in.rdbuf();
  src.text = text.str();
  src.options = s.compiler_options;
  src.include_dirs = {std::filesystem::path(s.kernel_file).parent_path().string()};
  return src;
}

}  // namespace

PyNames names_of(const SpaceFile& space, const Config& config) {
  PyNames point;
  for (const auto& p : space.parameters)
    if (const Value* v = config.find(p.name)) point[p.name] = t1_value(p, *v);
  return expression_names(space, point);
}

Result<LaunchDims> space_launch_dims(const SpaceFile& space, const Config& config) {
  const PyNames names = names_of(space, config);
  LaunchDims d;
  TUNE_ASSIGN_OR_RETURN(d.block, eval_dim3("KernelSpecification.LocalSize", space.block, names));
  TUNE_ASSIGN_OR_RETURN(d.grid, eval_dim3("KernelSpecification.GlobalSize", space.grid, names));
  if (space.grid_type == "OpenCL") {  // GlobalSize counts threads: Kernel Tuner rounds up
    d.grid.x = (d.grid.x + d.block.x - 1) / d.block.x;
    d.grid.y = (d.grid.y + d.block.y - 1) / d.block.y;
    d.grid.z = (d.grid.z + d.block.z - 1) / d.block.z;
  } else if (space.grid_type != "CUDA" && space.grid_type != "Vulkan") {
    return invalid_field("KernelSpecification.GlobalSizeType",
                         "'" + space.grid_type + "' is not known");
  }
  return d;
}

ConfigSpace config_space_of(const SpaceFile& space) {
  ConfigSpace out;
  for (const auto& p : space.parameters) {
    std::vector<Value> values;
    for (const auto& v : p.values) values.push_back(config_value(v));
    out.param(p.name, std::move(values));
  }
  // The constraints hold their own copy of the space (a ConfigSpace is copied into tuners).
  auto shared = std::make_shared<const SpaceFile>(space);
  for (std::size_t i = 0; i < space.conditions.size(); ++i) {
    const std::string field = "ConfigurationSpace.Conditions[" + std::to_string(i) + "]";
    out.constrain(field, [shared, i, field](const Config& c, const DeviceInfo&) {
      auto r = eval_python(shared->conditions[i].expression, names_of(*shared, c));
      if (!r.ok()) throw std::runtime_error(field + ": " + r.status().message());
      return truthy(*r);
    });
  }
  return out;
}

Result<KernelDef> kernel_def_from_space(const SpaceFile& space) {
  KernelDef def;
  def.name = space.kernel;
  TUNE_ASSIGN_OR_RETURN(KernelSource src, read_source(space));
  def.sources.push_back(std::move(src));
  TUNE_ASSIGN_OR_RETURN(def.signature, space_signature(space));
  def.space = config_space_of(space);
  // The callbacks hold their own copy of the space (the KernelDef is copied into tuners).
  auto shared = std::make_shared<const SpaceFile>(space);
  // The launch block joins the configuration: Vulkan compiles it into the variant, and
  // Autotuner checks dims().block against it.
  // Only the block: derive runs before the conditions, on points the grid may not suit.
  def.space.derive([shared](Config& c) {
    auto b = eval_dim3("KernelSpecification.LocalSize", shared->block, names_of(*shared, c));
    if (!b.ok()) throw std::runtime_error(b.status().message());
    c.launch().block = *b;
  });
  def.dims = [shared](const Config& c, ArgList) {
    auto d = space_launch_dims(*shared, c);
    if (!d.ok()) throw std::runtime_error(d.status().message());
    return *d;
  };
  TUNE_RETURN_IF_ERROR(def.space.validate());
  TUNE_RETURN_IF_ERROR(check_names(def));
  return def;
}

}  // namespace tune::cli
