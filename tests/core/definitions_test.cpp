// What a configuration means to a kernel (tune/definitions.hpp): the one list of definitions
// every backend compiles with, the one spelling of values, template entries, and the names
// Autotuner::make refuses because they would not reach the kernel as meant.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim_fixture.hpp"
#include "tune/definitions.hpp"
#include "tune/tune.hpp"

using namespace tune;

namespace {

KernelSource plain(std::string entry = "k") {
  KernelSource s;
  s.language = Language::cuda_hip;
  s.entry = std::move(entry);
  s.text = "// not compiled here";
  return s;
}

std::vector<Definition> defs(const Config& c, const KernelSource& s = plain()) {
  auto d = definitions(c, s);
  REQUIRE_MESSAGE(d.ok(), d.status().to_string());
  return *d;
}

// Autotuner::make's verdict on a simulated kernel whose space, heuristics or signature a case
// changes; the message of a refusal.
std::string refusal(const KernelDef& def) {
  auto t = Autotuner::make(def, testing::quiet_options());
  if (t.ok()) return {};
  CHECK(t.status().code() == StatusCode::invalid_argument);
  return t.status().message();
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("value_source_text: integers in decimal, booleans 1/0, strings verbatim") {
  CHECK(value_source_text(Value{std::int64_t{128}}) == "128");
  CHECK(value_source_text(Value{std::int64_t{-3}}) == "-3");
  CHECK(value_source_text(Value{std::int64_t{1} << 40}) == "1099511627776");
  CHECK(value_source_text(Value{true}) == "1");
  CHECK(value_source_text(Value{false}) == "0");
  CHECK(value_source_text(Value{std::string("half")}) == "half");
  CHECK(value_source_text(Value{std::string("(BM / 2)")}) == "(BM / 2)");
}

TEST_CASE("definitions: parameters in the Config's order, then each set launch option") {
  Config c;
  c.set("SPLIT", Value{true}).set("BM", 64).set("OFF", Value{false}).set("LAYOUT", "tn");
  c.set("NEG", Value{std::int64_t{-3}});
  c.set(kBlockX, 128).set(kNumWarps, 4).set(kNumStages, 3).set(kMaxRegisters, 64);
  c.set(kSharedBytes, 4096).set(kSubgroupSize, 32);
  const std::vector<Definition> want = {
      {"BM", "64"},
      {"LAYOUT", "tn"},
      {"NEG", "-3"},
      {"OFF", "0"},
      {"SPLIT", "1"},
      {"TUNE_BLOCK_X", "128"},
      {"TUNE_BLOCK_Y", "1"},
      {"TUNE_BLOCK_Z", "1"},
      {"TUNE_NUM_WARPS", "4"},
      {"TUNE_NUM_STAGES", "3"},
      {"TUNE_MAX_REGISTERS", "64"},
      {"TUNE_SHARED_BYTES", "4096"},
      {"TUNE_SUBGROUP_SIZE", "32"},
  };
  CHECK(defs(c) == want);
  // The same for a GLSL source: one list for every backend.
  KernelSource glsl;
  glsl.language = Language::glsl;
  CHECK(defs(c, glsl) == want);
  // And for the same config built in another order (Config keeps parameters by name).
  Config d;
  d.set(kSubgroupSize, 32).set(kSharedBytes, 4096).set(kMaxRegisters, 64).set(kNumStages, 3);
  d.set(kNumWarps, 4);
  d.set(kBlockX, 128).set("NEG", Value{std::int64_t{-3}}).set("LAYOUT", "tn");
  d.set("OFF", Value{false}).set("BM", 64).set("SPLIT", Value{true});
  CHECK(defs(d) == want);
}

TEST_CASE("definitions: only launch options that are set; a partly set block means 1 elsewhere") {
  CHECK(defs(Config{}).empty());
  Config stages;
  stages.set(kNumStages, 2);
  CHECK(defs(stages) == std::vector<Definition>{{"TUNE_NUM_STAGES", "2"}});

  // A block written straight into LaunchOptions (as a derive function may) with 0 in some
  // dimensions: the kernel sees 1 there, as every backend launches it.
  Config partial;
  partial.launch().block = {256, 0, 0};
  CHECK(defs(partial) == std::vector<Definition>{{"TUNE_BLOCK_X", "256"},
                                                 {"TUNE_BLOCK_Y", "1"},
                                                 {"TUNE_BLOCK_Z", "1"}});
  partial.launch().block = {0, 4, 0};
  CHECK(defs(partial) == std::vector<Definition>{
                             {"TUNE_BLOCK_X", "1"}, {"TUNE_BLOCK_Y", "4"}, {"TUNE_BLOCK_Z", "1"}});
  CHECK(normalized_block({0, 0, 0}) == Dim3{0, 0, 0});
  CHECK(normalized_block({8, 0, 2}) == Dim3{8, 1, 2});
  CHECK(normalized_block({8, 4, 2}) == Dim3{8, 4, 2});
  // Config::set follows the same rule.
  Config set_y;
  set_y.set(kBlockY, 4);
  CHECK(set_y.launch().block == Dim3{1, 4, 1});
}

TEST_CASE("Dim3: one text everywhere (Config text, logs, errors) and 'not set' is all zeros") {
  CHECK(to_string(Dim3{256, 1, 1}) == "256x1x1");
  CHECK(to_string(Dim3{0, 0, 0}) == "0x0x0");
  CHECK_FALSE(Dim3{0, 0, 0}.any_set());
  CHECK(Dim3{0, 0, 3}.any_set());
  Config c;
  c.launch().block = {16, 8, 1};
  CHECK(c.to_string().find("block=" + to_string(c.launch().block)) != std::string::npos);
}

TEST_CASE("definitions: a template entry's substituted parameters are not also macros") {
  Config c{{"EPT", 4}, {"NEG", true}, {"TILE", 16}};
  c.set(kNumStages, 2);
  // EPT and NEG are template arguments; TILE stays a macro, float stays as written.
  CHECK(defs(c, plain("scale<EPT, NEG, float>")) ==
        std::vector<Definition>{{"TILE", "16"}, {"TUNE_NUM_STAGES", "2"}});
  CHECK(name_expression("scale<EPT, NEG, float>", c).value() == "scale<4, true, float>");
  CHECK(name_expression("k", c).value().empty());
  // Nested arguments and expressions stay as written (and their names stay macros).
  CHECK(name_expression("f< EPT ,float, g<NEG, 2> >", c).value() == "f<4, float, g<NEG, 2>>");
  CHECK(name_expression("f<(EPT > 2), EPT>", c).value() == "f<(EPT > 2), 4>");
  CHECK(defs(c, plain("f<(EPT > 2), g<NEG>>")).size() == 4);  // EPT, NEG, TILE, stages
  // A plain entry: every parameter is a macro.
  CHECK(defs(c, plain("scale")).size() == 4);
  auto bad = definitions(c, plain("scale<EPT, NEG"));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == StatusCode::invalid_argument);
  CHECK(has(bad.status().message(), "scale<EPT, NEG"));
}

TEST_CASE("reserved names: the TUNE_ prefix and the launch options' macros") {
  CHECK(kReservedPrefix == "TUNE_");
  CHECK(is_reserved_name("TUNE_BLOCK_X"));
  CHECK(is_reserved_name("TUNE_ANYTHING"));
  CHECK_FALSE(is_reserved_name("TUNE"));
  CHECK_FALSE(is_reserved_name("tune_x"));
  CHECK_FALSE(is_reserved_name("BM"));
  CHECK(launch_option_macro(kBlockZ) == "TUNE_BLOCK_Z");
  CHECK(launch_option_macro(kSharedBytes) == "TUNE_SHARED_BYTES");
  CHECK(launch_option_macro(kSubgroupSize) == "TUNE_SUBGROUP_SIZE");
  CHECK(launch_option_macro("BM").empty());
}

TEST_CASE("Autotuner::make refuses a parameter named like libtune's own definitions") {
  using testing::sim_kernel;
  // Before this check, the kernel silently saw libtune's TUNE_BLOCK_X on Vulkan.
  std::string why = refusal(sim_kernel(std::move(ConfigSpace().param("TUNE_BLOCK_X", {1, 2}))));
  CHECK(has(why, "'TUNE_BLOCK_X'"));
  CHECK(has(why, "launch option block.x"));
  CHECK(has(why, "sim_kernel"));
  why = refusal(sim_kernel(std::move(ConfigSpace().param("TUNE_NUM_STAGES", {1, 2}))));
  CHECK(has(why, "'TUNE_NUM_STAGES'"));
  CHECK(has(why, "num_stages"));
  // Any TUNE_ name, defined today or not.
  why = refusal(sim_kernel(std::move(ConfigSpace().param("TUNE_WARP_SIZE", {32}))));
  CHECK(has(why, "'TUNE_WARP_SIZE'"));
  CHECK(has(why, "prefix reserved"));
  why = refusal(sim_kernel(std::move(ConfigSpace().param("TUNE_MY_TILE", {1}))));
  CHECK(has(why, "'TUNE_MY_TILE'"));
  // The launch options themselves are fine.
  CHECK(refusal(sim_kernel(std::move(
            ConfigSpace().param(std::string(kBlockX), {64, 128}).param("BM", {1, 2})))) == "");
}

TEST_CASE("Autotuner::make refuses a parameter named like a kernel argument") {
  using testing::sim_kernel;
  // sim_kernel(x: f32 buffer, n: i32 scalar): -Dn=4 would rewrite `int n` in the kernel.
  std::string why = refusal(sim_kernel(std::move(ConfigSpace().param("n", {4, 8}))));
  CHECK(has(why, "parameter 'n'"));
  CHECK(has(why, "kernel argument 1 'n'"));
  why = refusal(sim_kernel(std::move(ConfigSpace().param("BM", {1}).param("x", {1}))));
  CHECK(has(why, "parameter 'x'"));
  CHECK(has(why, "kernel argument 0 'x'"));
  // In a config list too.
  why = refusal(sim_kernel(ConfigSpace::list({Config{{"BM", 1}}, Config{{"n", 2}}})));
  CHECK(has(why, "'n'"));
  CHECK(has(why, "kernel argument 1"));
  CHECK(has(why, "config list entry 1"));
}

TEST_CASE("Autotuner::make refuses what derive sets under a clashing name") {
  using testing::sim_kernel;
  ConfigSpace s;
  s.param("BM", {1, 2}).derive([](Config& c) { c.set("TUNE_HALF", c.get_int("BM") / 2); });
  std::string why = refusal(sim_kernel(std::move(s)));
  CHECK(has(why, "set by derive 'TUNE_HALF'"));
  ConfigSpace t;
  t.param("BM", {1, 2}).derive([](Config& c) { c.set("n", c.get_int("BM")); });
  why = refusal(sim_kernel(std::move(t)));
  CHECK(has(why, "set by derive 'n'"));
  CHECK(has(why, "kernel argument 1 'n'"));
  // A derive that sets other names or launch options is fine.
  ConfigSpace u;
  u.param("BM", {1, 2}).derive([](Config& c) {
    c.set("HALF", c.get_int("BM") / 2);
    c.launch().num_stages = 2;
  });
  CHECK(refusal(sim_kernel(std::move(u))) == "");
}

TEST_CASE("Autotuner::make refuses duplicate parameters and clashing heuristics") {
  using testing::sim_kernel;
  // Two dimensions of one name: ConfigSpace::validate already refuses it.
  std::string why = refusal(sim_kernel(std::move(ConfigSpace().param("BM", {1}).param("BM", {2}))));
  CHECK(has(why, "'BM' is declared twice"));

  auto with_heuristics = [](std::vector<std::string> names) {
    KernelDef def = sim_kernel(testing::bm_space({1, 2}));
    for (auto& n : names)
      def.heuristics.push_back({n, [](ArgList, const DeviceInfo&) { return Value{true}; }});
    return def;
  };
  why = refusal(with_heuristics({"BM"}));
  CHECK(has(why, "heuristic parameter 'BM'"));
  CHECK(has(why, "parameter of the config space 'BM'"));
  why = refusal(with_heuristics({"SPLIT", "SPLIT"}));
  CHECK(has(why, "heuristic parameter 'SPLIT'"));
  CHECK(has(why, "two heuristics"));
  why = refusal(with_heuristics({"TUNE_SPLIT"}));
  CHECK(has(why, "heuristic parameter 'TUNE_SPLIT'"));
  CHECK(has(why, "TUNE_"));
  why = refusal(with_heuristics({"n"}));
  CHECK(has(why, "heuristic parameter 'n'"));
  CHECK(has(why, "kernel argument 1 'n'"));
  why = refusal(with_heuristics({"not an identifier"}));
  CHECK(has(why, "'not an identifier'"));
  // A heuristic may set a launch option the space does not, or a fresh name.
  CHECK(refusal(with_heuristics({"SPLIT", std::string(kNumWarps)})) == "");
  // But not one the space tunes.
  KernelDef tuned_block = with_heuristics({std::string(kBlockX)});
  tuned_block.space = std::move(ConfigSpace().param(std::string(kBlockX), {64, 128}));
  why = refusal(tuned_block);
  CHECK(has(why, "heuristic parameter 'block.x'"));
  CHECK(has(why, "config space 'block.x'"));
}
