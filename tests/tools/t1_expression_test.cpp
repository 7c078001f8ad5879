// The T1 expression forms the community's problem files use (label core, no device): each form
// against the value Python gives, the refusals naming the expression and the offset, a problem
// written with those forms (tests/tools/data/t1_hotspot.json, after Kernel Tuner's hotspot
// example) imported and listed with the counts Kernel Tuner gets, and the FAIR benchmark hub's
// convolution and dedispersion problems as written (from ../shared/data/benchmark_hub when
// that directory is there; the case says so and passes when it is not).
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "space/space_args.hpp"
#include "space/space_kernel.hpp"
#include "space_files.hpp"
#include "t1_expression.hpp"
#include "tune_process.hpp"

namespace {

using nlohmann::json;
using tune::cli::eval_python;
using tune::cli::PyNames;
using tune::cli::PyValue;
using tune::testing::ProcessResult;
using tune::testing::ScratchDir;
using tune::testing::TuneCli;
namespace fs = std::filesystem;

// The value's Python repr, or the error's message.
std::string eval_text(const std::string& text, const PyNames& names = {}) {
  auto v = eval_python(text, names);
  return v.ok() ? tune::cli::py_repr(*v) : "error: " + v.status().message();
}

// The value of `text` (a literal), for binding names.
PyValue literal(const std::string& text) {
  auto v = eval_python(text);
  REQUIRE_MESSAGE(v.ok(), v.status().to_string());
  return *v;
}

}  // namespace

TEST_CASE("each T1 expression form gives what Python gives") {
  struct Case {
    const char* text;
    const char* python;  // repr(eval(text)) in CPython 3
  };
  const Case cases[] = {
      // Lists: concatenation, repetition, range with 1 to 3 arguments, list(...).
      {"[1, 2] + [3]", "[1, 2, 3]"},
      {"[0] * 3", "[0, 0, 0]"},
      {"2 * [1, 2]", "[1, 2, 1, 2]"},
      {"[] * 1000000000", "[]"},
      {"range(4)", "[0, 1, 2, 3]"},
      {"range(2, 5)", "[2, 3, 4]"},
      {"range(10, 0, -3)", "[10, 7, 4, 1]"},
      {"list(range(32, 128+1, 32))", "[32, 64, 96, 128]"},
      {"[1, 2, 4, 8, 16] + list(range(32, 96+1, 32))", "[1, 2, 4, 8, 16, 32, 64, 96]"},
      // Comprehensions over range, with arithmetic, and with a condition.
      {"[2**i for i in range(0, 6)]", "[1, 2, 4, 8, 16, 32]"},
      {"[16*i for i in range(1,5)]", "[16, 32, 48, 64]"},
      {"[i for i in range(1, 10+1) if 10 % i == 0]", "[1, 2, 5, 10]"},
      {"[x // 2 + x % 3 for x in [4, 5, 6]]", "[3, 4, 3]"},
      {"[[i] for i in range(2)]", "[[0], [1]]"},
      // Reductions of a list, and of arguments.
      {"min([3, 1, 2])", "1"},
      {"max([3, 1, 2])", "3"},
      {"max(4, 9, 2)", "9"},
      {"len([2**i for i in range(0, 6)])", "6"},
      {"sum([1, 2, 3])", "6"},
      {"sum([])", "0"},
      {"sum([0.5, 1])", "1.5"},
      {"abs(-7)", "7"},
      // Arithmetic: ** // % as Python does them (floor division and modulo toward -inf).
      {"2**10", "1024"},
      {"-2**2", "-4"},
      {"2**3**2", "512"},
      {"7 // 2", "3"},
      {"-7 // 2", "-4"},
      {"-7 % 3", "2"},
      {"7 / 2", "3.5"},
      {"1024+1", "1025"},
      // Comparisons, chained, membership, and/or/not.
      {"1 < 2 <= 2", "True"},
      {"1 < 2 > 3", "False"},
      {"3 in [1, 2, 3]", "True"},
      {"4 not in [1, 2, 3]", "True"},
      {"'ab' in 'cabd'", "True"},
      {"not 0 and 5", "5"},
      {"0 or 0 or 7", "7"},
      {"not (1 == 1 and 2 in [1, 2])", "False"},
  };
  for (const Case& c : cases) {
    const std::string text = c.text;
    CAPTURE(text);
    CHECK(eval_text(text) == c.python);
  }
  // A parameter's name bound to its list of values, as argument sizes see it.
  PyNames names;
  names["filter_width"] = literal("[15]");
  names["ProblemSize"] = literal("[4096, 4096]");
  CHECK(eval_text("(ProblemSize[0]+max(filter_width)-1)", names) == "4110");
}

TEST_CASE("expressions outside the subset are refused, naming the expression and the offset") {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"__import__('os')", "the call '__import__(...)' is not supported"},
      {"[1, 2].append(3)", "attribute access is not supported"},
      {"[i*j for i in range(2) for j in range(2)]", "nested comprehensions"},
      {"[i for i in 5]", "a comprehension over 5, not a list"},
      {"[i for i in range(3) if ]", "unexpected end"},
      {"[1, 2] + 3", "'+' needs numbers, not [1, 2]"},
      {"[1] * 'a'", "a list repeated by 'a', not an integer"},
      {"range(1, 2, 3, 4)", "range takes 1 to 3 arguments"},
      {"range(1, 5, 0)", "range step must not be zero"},
      {"list(5)", "list takes one list (or range), not 5"},
      {"sum(5)", "sum takes one list of numbers"},
      {"max([])", "max of an empty list"},
      {"3 in 4", "'in' needs a list or a string on its right, not 4"},
      {"range(200000)", "a list of more than 100000 elements"},
      {"[0] * 200000", "a list of more than 100000 elements"},
      {"2**64", "integer overflow"},
      {"1 // 0", "division by zero"},
      {"unknown_name + 1", "unknown name 'unknown_name'"},
  };
  for (const Case& c : cases) {
    const std::string text = c.text;
    CAPTURE(text);
    const std::string got = eval_text(text);
    CHECK_MESSAGE(got.find(c.message) != std::string::npos, got);
    // Every refusal names the offset in the expression, and quotes the whole expression.
    CHECK_MESSAGE(got.find(std::string(" at offset ")) != std::string::npos, got);
    CHECK_MESSAGE(got.find(std::string(" of '") + c.text + "'") != std::string::npos, got);
  }
}

namespace {

// t1_hotspot.json's points and those its conditions accept, counted as Kernel Tuner does.
std::pair<int, int> hotspot_points() {
  std::vector<int> bx = {1, 2, 4, 8, 16};
  for (int v = 32; v <= 1024; v += 32) bx.push_back(v);
  int total = 0, valid = 0;
  for (int x : bx)
    for (int y = 1; y <= 32; y *= 2)
      for (int tile = 1; tile <= 3; ++tile)
        for (int tt = 1; tt <= 4; ++tt)
          for (int unroll : {1, 2, 4})
            for (int sh = 0; sh <= 1; ++sh) {
              ++total;
              const bool ok = x * y >= 32 && tt % unroll == 0 && x * y <= 1024 &&
                              (x * tile + tt * 2) * (y + tt * 2) * (2 + sh) * 4 <= 49152 &&
                              !(sh == 1 && (y == 1 || y == 2));
              valid += ok ? 1 : 0;
            }
  return {total, valid};
}

}  // namespace

TEST_CASE("a problem in the hotspot example's forms imports, lists and sizes its arguments") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  const std::string space_path = tune::testing::import_example(cli, scratch, "t1_hotspot.json");
  const auto [total, valid] = hotspot_points();
  const json imported = json::parse(tune::testing::read_text(space_path));
  CHECK(imported.at("points") == total);
  CHECK(imported.at("valid_points") == valid);
  CHECK(imported.at("parameters")[0].at("values").size() == 37);  // 5 + 32 multiples of 32
  CHECK(imported.at("parameters")[4].at("values") == json({1, 2, 4}));

  const ProcessResult r = cli.run({"run-space", space_path, "--list"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  const json out = json::parse(r.out);
  CHECK(out.at("points") == total);
  CHECK(out.at("valid") == valid);
  // Sizes: a parameter's name is its list of values (max(temporal_tiling_factor) is 4).
  CHECK(out.at("counts") == json({4096 * 4096, 4104 * 4104, 4096 * 4096, 0, 0}));
}

namespace {

// The hub's T1 file `name`, copied into `scratch` beside a kernel file of the name it asks
// for (--list reads the source, never compiles it), then imported; the space file's path.
// Empty when the hub's data is not on this machine.
std::string import_hub_problem(const TuneCli& cli, const ScratchDir& scratch,
                               const std::string& name) {
  const fs::path hub = TUNE_BENCHMARK_HUB_DIR;
  if (!fs::exists(hub / name)) return {};
  const json doc = json::parse(tune::testing::read_text(hub / name));
  const fs::path t1 = scratch.path() / name;
  fs::copy_file(hub / name, t1);
  const fs::path kernel = scratch.path() / doc.at("KernelSpecification").at("KernelFile");
  fs::create_directories(kernel.parent_path());
  std::ofstream(kernel) << "extern \"C\" __global__ void "
                        << doc.at("KernelSpecification").at("KernelName").get<std::string>()
                        << "() {}\n";
  const std::string out = (scratch.path() / (name + ".space.json")).string();
  const ProcessResult r = cli.run({"import-space", t1.string(), "--out", out});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  return out;
}

}  // namespace

TEST_CASE("the FAIR hub's convolution and dedispersion problems list as written") {
  struct Problem {
    const char* file;
    int points;
    int valid;
  };
  // Counted by Kernel Tuner's rules (each condition a Python expression on every point).
  for (const Problem& p : {Problem{"convolution_milo.T1.json", 10240, 4362},
                           Problem{"dedispersion_milo.T1.json", 22272, 11130}}) {
    const std::string file = p.file;
    CAPTURE(file);
    ScratchDir scratch;
    TuneCli cli(scratch);
    const std::string space = import_hub_problem(cli, scratch, p.file);
    if (space.empty()) {
      MESSAGE("not checked: no " << p.file << " in " << TUNE_BENCHMARK_HUB_DIR);
      continue;
    }
    const ProcessResult r = cli.run({"run-space", space, "--list"});
    REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
    const json out = json::parse(r.out);
    CHECK(out.at("points") == p.points);
    CHECK(out.at("valid") == p.valid);
    CHECK(out.at("configs").size() == static_cast<std::size_t>(p.valid));
    if (std::string(p.file) == "convolution_milo.T1.json") {
      // max(filter_width) and max(filter_height) are 15: the input has a 14-cell halo.
      CHECK(out.at("counts") == json({4096 * 4096, 4110 * 4110, 15 * 15}));
    }
  }
}
