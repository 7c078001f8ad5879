// A libtune space file (written by `tune import-space`, see import_space_command.hpp) read
// back: the tuning problem of one Kernel Tuner T1 file, its parameter values already evaluated.
//
// read_space_file checks the document's shape and names the field of the first mistake
// ("parameters[1].values: missing"); what the fields mean for a run is space_kernel.hpp's and
// space_args.hpp's to check. Pure data; safe to share between threads once read.
#pragma once

#include <array>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../t1_expression.hpp"
#include "tune/status.hpp"

namespace tune::cli {

struct SpaceParameter {
  std::string name;
  std::string type;  // T1's Type: int, uint, float, bool, string
  PyList values;
};

struct SpaceCondition {
  std::string expression;               // Python subset, t1_expression.hpp
  std::vector<std::string> parameters;  // the names T1 says it reads
};

struct SpaceFile {
  std::string kernel;       // the entry point
  std::string language;     // "cuda", "opencl", "vulkan" (T1's Language, lower case)
  std::string kernel_file;  // absolute, resolved beside the T1 file
  std::vector<std::string> compiler_options;
  std::vector<SpaceParameter> parameters;
  std::vector<SpaceCondition> conditions;
  std::array<std::string, 3> block;  // LocalSize X, Y, Z expressions ("1" where T1 has none)
  std::array<std::string, 3> grid;   // GlobalSize X, Y, Z expressions
  std::string grid_type;        // GlobalSizeType: "CUDA" (blocks), "OpenCL" (threads), "Vulkan"
  nlohmann::json problem_size;  // T1's ProblemSize, null when absent
  nlohmann::json arguments;     // T1's Arguments, as written (an array)
  // T1 fields libtune does not use (General, Search, Budget, KernelSpecification.Device, ...),
  // kept so that the T1 file can be written back whole (t1_writer.hpp). An object.
  nlohmann::json t1_extra;
};

// A T1 value as JSON and back (numbers, booleans, strings and lists of them); py_from_json
// is invalid_argument for anything else (objects, null).
nlohmann::json py_to_json(const PyValue& v);
Result<PyValue> py_from_json(const nlohmann::json& j);

// The space file document `doc`; invalid_argument naming the field on a mistake.
Result<SpaceFile> space_from_json(const nlohmann::json& doc);

// Reads and parses `path` (at most 16 MiB); not_found / invalid_argument naming the file.
Result<SpaceFile> read_space_file(const std::string& path);

// The names a T1 expression may read on `point`: every parameter, and ProblemSize when the file
// has one (Kernel Tuner binds it in argument sizes).
PyNames expression_names(const SpaceFile& space, const PyNames& point);

// The names an argument's Size may read: each parameter's name stands for its list of values,
// as in Kernel Tuner (an argument serves every configuration: "max(filter_width)"), and
// ProblemSize as in expression_names.
PyNames size_names(const SpaceFile& space);

}  // namespace tune::cli
