// A Kernel Tuner T1 problem made runnable (label core, no device): the KernelDef that
// space/space_kernel.hpp builds from an imported T1 file (source, signature, the space after
// the conditions counted as Kernel Tuner counts it, block and grid as Kernel Tuner computes
// them), `tune run-space --list` showing the same, the T1 fields libtune refuses named, and
// T1 -> space -> T1 (`tune export-space`) giving the document back, valid by the schema.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "python_helpers.hpp"
#include "space/space_args.hpp"
#include "space/space_kernel.hpp"
#include "space_files.hpp"
#include "tune_process.hpp"

namespace {

using nlohmann::json;
using tune::testing::ProcessResult;
using tune::testing::ScratchDir;
using tune::testing::TuneCli;
namespace fs = std::filesystem;

tune::Config stencil_config(int bx, int by, int tile, int shared) {
  return tune::Config{
      {"block_size_x", bx}, {"block_size_y", by}, {"tile_size_x", tile}, {"use_shared", shared}};
}

// Kernel Tuner's grid for the stencil: GlobalSize is in blocks (GlobalSizeType CUDA).
tune::Dim3 stencil_grid(int bx, int by, int tile) {
  return {static_cast<std::uint32_t>((4096 + bx * tile - 1) / (bx * tile)),
          static_cast<std::uint32_t>((4096 + by - 1) / by), 1};
}

bool same(const tune::Dim3& a, const tune::Dim3& b) {
  return a.x == b.x && a.y == b.y && a.z == b.z;
}

}  // namespace

TEST_CASE("the KernelDef of the stencil T1 file: source, signature, space and launch sizes") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  const tune::cli::SpaceFile space = tune::testing::load_example(cli, scratch, "t1_stencil.json");
  auto def = tune::cli::kernel_def_from_space(space);
  REQUIRE_MESSAGE(def.ok(), def.status().to_string());

  CHECK(def->name == "stencil_kernel");
  REQUIRE(def->sources.size() == 1);
  const tune::KernelSource& src = def->sources[0];
  CHECK(src.language == tune::Language::cuda_hip);
  CHECK(src.entry == "stencil_kernel");
  CHECK(src.options == std::vector<std::string>{"-std=c++17"});
  CHECK(src.text.find("__global__ void stencil_kernel(") != std::string::npos);
  CHECK(src.include_dirs == std::vector<std::string>{TUNE_TOOLS_TEST_DATA});

  const auto& decls = def->signature.decls();
  REQUIRE(decls.size() == 3);
  CHECK((decls[0].name == "out" && decls[0].kind == tune::ArgKind::buffer &&
         decls[0].type == tune::ElemType::f32));
  CHECK((decls[1].name == "in" && decls[1].kind == tune::ArgKind::buffer &&
         decls[1].type == tune::ElemType::f32));
  CHECK((decls[2].name == "n" && decls[2].kind == tune::ArgKind::scalar &&
         decls[2].type == tune::ElemType::i32));
  auto counts = tune::cli::argument_counts(space);
  REQUIRE(counts.ok());
  CHECK(*counts == std::vector<std::uint64_t>{16777216, 4098ull * 4098ull, 0});

  // The conditions leave exactly the points Kernel Tuner keeps.
  const auto [total, valid] = tune::testing::stencil_points();
  CHECK(def->space.raw_size() == static_cast<std::uint64_t>(total));
  auto points = def->space.enumerate(tune::DeviceInfo{});
  REQUIRE(points.ok());
  CHECK(points->size() == static_cast<std::size_t>(valid));

  // Block from LocalSize (also the configuration's launch block), grid from GlobalSize.
  for (const auto& [bx, by, tile, shared] :
       std::vector<std::array<int, 4>>{{32, 8, 1, 0}, {48, 4, 2, 0}, {128, 2, 4, 1}}) {
    tune::Config c = stencil_config(bx, by, tile, shared);
    c.launch().block = {static_cast<std::uint32_t>(bx), static_cast<std::uint32_t>(by), 1};
    const bool listed = std::find(points->begin(), points->end(), c) != points->end();
    CHECK_MESSAGE(listed, c.to_string());
    auto dims = tune::cli::space_launch_dims(space, c);
    REQUIRE(dims.ok());
    CHECK(same(dims->block, {static_cast<std::uint32_t>(bx), static_cast<std::uint32_t>(by), 1}));
    CHECK_MESSAGE(same(dims->grid, stencil_grid(bx, by, tile)), c.to_string());
    CHECK(same(def->dims(c, {}).grid, dims->grid));
  }
  // A point the conditions refuse: 48 threads wide with use_shared.
  CHECK_FALSE(def->space.accepts(stencil_config(48, 4, 1, 1), tune::DeviceInfo{}));
}

TEST_CASE("an OpenCL GlobalSize counts threads: the grid is rounded up over the block") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  const tune::cli::SpaceFile space =
      tune::testing::load_example(cli, scratch, "t1_vector_add.json");
  auto def = tune::cli::kernel_def_from_space(space);
  REQUIRE_MESSAGE(def.ok(), def.status().to_string());
  CHECK(def->sources[0].language == tune::Language::glsl);
  CHECK(def->sources[0].entry == "main");
  // 100003 elements, 4 per thread: 25001 threads, in workgroups of 32: 782 (Kernel Tuner's
  // ceil(global / local)).
  auto dims = tune::cli::space_launch_dims(
      space, tune::Config{{"block_size_x", 32}, {"elems_per_thread", 4}});
  REQUIRE(dims.ok());
  CHECK(same(dims->grid, {782, 1, 1}));
  CHECK(same(dims->block, {32, 1, 1}));
  auto points = def->space.enumerate(tune::DeviceInfo{});
  REQUIRE(points.ok());
  CHECK(points->size() == 11);  // 4 x 3, less 256 x 4
  auto counts = tune::cli::argument_counts(space);
  REQUIRE(counts.ok());
  CHECK(*counts == std::vector<std::uint64_t>{100003, 100003, 100003, 0});
}

TEST_CASE("tune run-space --list prints the KernelDef's points with their launch sizes") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  const std::string space = tune::testing::import_example(cli, scratch, "t1_stencil.json");
  const ProcessResult r = cli.run({"run-space", space, "--list"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  const json out = json::parse(r.out);
  const auto [total, valid] = tune::testing::stencil_points();
  CHECK(out.at("points") == total);
  CHECK(out.at("valid") == valid);
  CHECK(out.at("configs").size() == static_cast<std::size_t>(valid));
  CHECK(out.at("signature")[2] == json({{"name", "n"}, {"kind", "scalar"}, {"type", "i32"}}));
  bool found = false;
  for (const auto& c : out.at("configs"))
    if (c.at("config") ==
        "block_size_x=48,block_size_y=4,tile_size_x=2,use_shared=0;block=48x4x1") {
      found = true;
      CHECK(c.at("block") == json({48, 4, 1}));
      CHECK(c.at("grid") == json({43, 1024, 1}));
    }
  CHECK_MESSAGE(found, r.out);
}

TEST_CASE("T1 features libtune cannot map are refused, naming the field") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  const tune::cli::SpaceFile base = tune::testing::load_example(cli, scratch, "t1_vector_add.json");
  struct Case {
    const char* what;
    void (*edit)(tune::cli::SpaceFile&);
    const char* message;
  };
  const Case cases[] = {
      {"OpenCL", [](tune::cli::SpaceFile& s) { s.language = "opencl"; },
       "KernelSpecification.Language: 'opencl' kernels cannot run"},
      {"local memory", [](tune::cli::SpaceFile& s) { s.arguments[1]["MemoryType"] = "Local"; },
       "KernelSpecification.Arguments[1].MemoryType: 'Local' is not supported"},
      {"script fill", [](tune::cli::SpaceFile& s) { s.arguments[2]["FillType"] = "Script"; },
       "KernelSpecification.Arguments[2].FillType: 'Script' is not supported"},
      {"vector type", [](tune::cli::SpaceFile& s) { s.arguments[0]["Type"] = "float4"; },
       "KernelSpecification.Arguments[0].Type: 'float4' has no libtune element type"},
      {"constant fill without a value",
       [](tune::cli::SpaceFile& s) { s.arguments[3].erase("FillValue"); },
       "KernelSpecification.Arguments[3].FillValue: missing"},
      {"missing kernel file", [](tune::cli::SpaceFile& s) { s.kernel_file += ".absent"; },
       "KernelSpecification.KernelFile: cannot read"},
      {"parameter named like an argument",
       [](tune::cli::SpaceFile& s) { s.arguments[3]["Name"] = "block_size_x"; }, "block_size_x"},
  };
  for (const Case& c : cases) {
    tune::cli::SpaceFile s = base;
    c.edit(s);
    auto def = tune::cli::kernel_def_from_space(s);
    CAPTURE(c.what);
    REQUIRE_FALSE(def.ok());
    CHECK(def.status().code() != tune::StatusCode::ok);
    CHECK_MESSAGE(def.status().message().find(c.message) != std::string::npos,
                  def.status().to_string());
  }
  // A Size that is not an integer is refused when the arguments are sized.
  tune::cli::SpaceFile s = base;
  s.arguments[0]["Size"] = "ProblemSize[0] / 2";
  auto counts = tune::cli::argument_counts(s);
  REQUIRE_FALSE(counts.ok());
  CHECK(counts.status().message().find("KernelSpecification.Arguments[0].Size: 50001.5") !=
        std::string::npos);
}

namespace {

// A T1 document in one spelling: Values evaluated, absent optional fields given their
// defaults (Y and Z sizes "1", no conditions, no options), KernelFile made absolute from `dir`.
json normalised_t1(json doc, const fs::path& dir) {
  json& space = doc["ConfigurationSpace"];
  for (json& p : space["TuningParameters"]) {
    auto v = tune::cli::eval_python(p.at("Values").get<std::string>());
    REQUIRE_MESSAGE(v.ok(), v.status().to_string());
    p["Values"] = tune::cli::py_to_json(*v);
  }
  if (!space.contains("Conditions")) space["Conditions"] = json::array();
  json& spec = doc["KernelSpecification"];
  for (const char* size : {"LocalSize", "GlobalSize"})
    for (const char* axis : {"Y", "Z"})
      if (!spec[size].contains(axis)) spec[size][axis] = "1";
  spec["KernelFile"] = (dir / spec.at("KernelFile").get<std::string>()).lexically_normal().string();
  for (const char* list : {"CompilerOptions", "Arguments"})
    if (!spec.contains(list)) spec[list] = json::array();
  if (!spec.contains("GlobalSizeType"))
    spec["GlobalSizeType"] = spec.at("Language") == "CUDA" ? "CUDA" : "OpenCL";
  return doc;
}

}  // namespace

TEST_CASE("a T1 file round-trips: T1 -> space -> T1 gives the same document, valid T1") {
  for (const char* example : {"t1_stencil.json", "t1_vector_add.json"}) {
    CAPTURE(example);
    ScratchDir scratch;
    TuneCli cli(scratch);
    const std::string space = tune::testing::import_example(cli, scratch, example);
    fs::create_directories(scratch.path() / "out");
    const fs::path back = scratch.path() / "out" / "back.json";
    ProcessResult r = cli.run({"export-space", space, "--format", "t1", "--out", back.string()});
    REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
    tune::testing::check_schema(cli, back.string(),
                                std::string(TUNE_T1_SCHEMA_DIR) + "/input-schema.json");

    const json original = json::parse(tune::testing::read_text(tune::testing::t1_example(example)));
    const json exported = json::parse(tune::testing::read_text(back));
    // KernelFile is written relative to the new document's directory.
    CHECK(exported.at("KernelSpecification").at("KernelFile").get<std::string>().rfind("../", 0) ==
          0);
    const json a = normalised_t1(original, TUNE_TOOLS_TEST_DATA);
    const json b = normalised_t1(exported, back.parent_path());
    for (const auto& item : a.items()) {
      const std::string key = item.key();
      const json& value = item.value();
      CAPTURE(key);
      REQUIRE(b.contains(key));
      if (value.is_object()) {
        for (const auto& sub : value.items()) {
          const std::string field = sub.key();
          CAPTURE(field);
          CHECK(b.at(key).at(field) == sub.value());
        }
      }
      CHECK(b.at(key) == value);
    }
    CHECK(b.size() == a.size());

    // And the exported file imports to the same space file.
    const fs::path again = scratch.path() / "again.json";
    r = cli.run({"import-space", back.string(), "--out", again.string()});
    REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
    json first = json::parse(tune::testing::read_text(space));
    json second = json::parse(tune::testing::read_text(again));
    first.erase("from");
    second.erase("from");
    CHECK(first == second);
  }
}

TEST_CASE("tune run-space says why the --device does not open, as every command does") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  const std::string space = tune::testing::import_example(cli, scratch, "t1_stencil.json");
  const ProcessResult r = cli.run({"run-space", space, "--device", "bogus", "--no-cache"});
  CHECK_MESSAGE(r.exit_code == 1, r.describe());
  CHECK_MESSAGE(
      r.err.find("tune run-space: not_found: backend 'bogus' is not compiled") != std::string::npos,
      r.describe());
}

TEST_CASE("export-space and run-space refuse what is not a space file, naming it") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  const fs::path t1 = tune::testing::t1_example("t1_stencil.json");
  for (const char* cmd : {"export-space", "run-space"}) {
    CAPTURE(cmd);
    ProcessResult r = cli.run({cmd, t1.string()});
    CHECK(r.exit_code != 0);
    CHECK_MESSAGE(r.err.find("format: not a libtune space file") != std::string::npos,
                  r.describe());
    r = cli.run({cmd, (scratch.path() / "absent.json").string()});
    CHECK(r.exit_code != 0);
    CHECK_MESSAGE(r.err.find("cannot read the space file") != std::string::npos, r.describe());
  }
}

TEST_CASE("T1 expressions subscript lists as Kernel Tuner's sizes do") {
  tune::cli::PyNames names;
  names["ProblemSize"] = tune::cli::PyValue{tune::cli::PyList{
      tune::cli::PyValue{std::int64_t{4096}}, tune::cli::PyValue{std::int64_t{100}}}};
  auto v = tune::cli::eval_python("(ProblemSize[0]+2) * (ProblemSize[-1]+2)", names);
  REQUIRE_MESSAGE(v.ok(), v.status().to_string());
  CHECK(tune::cli::py_repr(*v) == "417996");
  v = tune::cli::eval_python("[1, 2, 3][1]");
  REQUIRE(v.ok());
  CHECK(tune::cli::py_repr(*v) == "2");
  v = tune::cli::eval_python("ProblemSize[2]", names);
  REQUIRE_FALSE(v.ok());
  CHECK(v.status().message().find("list index 2 is out of range") != std::string::npos);
  v = tune::cli::eval_python("4096[0]");
  REQUIRE_FALSE(v.ok());
  CHECK(v.status().message().find("subscript of 4096, which is not a list") != std::string::npos);
}
