// The Autotuner's promises on a real Vulkan device (lavapipe in CI): Triton's reset/restore
// semantics on a shader that accumulates in place, a throwing hook that fails one call and
// not the key, a launch geometry that launches nothing, and a key whose stored winner this
// process never compiled (the SQLite store reopened by a fresh device and tuner, as a later
// process would). Outputs are checked against a CPU reference on random inputs.
#include <doctest/doctest.h>

#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include "tune/sqlite_store.hpp"
#include "tune/tune.hpp"
#include "vulkan_test_device.hpp"

using namespace tune;
using tune::testing::open_vulkan_or_skip;

namespace {

// acc[i] += x[i]; x[i] = 2 x[i] + 1: both effects compound unless reset/restored.
const char* kAccShader = R"(#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, binding = 0) buffer X { float x[]; };
layout(std430, binding = 1) buffer A { float acc[]; };
layout(push_constant) uniform P { int n; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= uint(n)) return;
  acc[i] += x[i];
  x[i] = 2.0 * x[i] + 1.0;
}
)";

constexpr int kN = 4096;

KernelDef acc_def() {
  KernelDef def;
  def.name = "contracts_acc";
  KernelSource src;
  src.language = Language::glsl;
  src.entry = "main";
  src.text = kAccShader;
  def.sources = {src};
  def.signature.buffer("x", ElemType::f32).buffer("acc", ElemType::f32).scalar("n", ElemType::i32);
  def.space.param("block.x", {32, 64, 128});
  def.key = {KeySpec::exact("n")};
  def.dims = [](const Config& c, ArgList args) {
    const std::uint32_t bx = c.launch().block.x;
    const auto n = static_cast<std::uint32_t>(args[2].as_int());
    return LaunchDims{{(n + bx - 1) / bx, 1, 1}, {bx, 1, 1}, 0};
  };
  def.reset_to_zero = {"acc"};
  def.restore_value = {"x"};
  return def;
}

AutotunerOptions quick() {
  AutotunerOptions o;
  o.persistent = false;
  o.print = false;
  o.bench.warmup_ms = 1;
  o.bench.rep_ms = 5;
  o.bench.expert.min_reps = 3;
  o.bench.expert.max_reps = 10;
  return o;
}

struct Rig {
  std::unique_ptr<Device> dev = open_vulkan_or_skip();
  Buffer x, acc;
  std::vector<float> x0, acc0;
  explicit Rig(unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> small(-64, 64);
    for (int i = 0; i < kN; ++i) {
      x0.push_back(static_cast<float>(small(rng)));
      acc0.push_back(static_cast<float>(small(rng)));  // leftovers that must not show through
    }
    x = dev->alloc(kN * sizeof(float)).value();
    acc = dev->alloc(kN * sizeof(float)).value();
    REQUIRE(dev->upload(*x, x0.data(), kN * sizeof(float)).ok());
    REQUIRE(dev->upload(*acc, acc0.data(), kN * sizeof(float)).ok());
  }
  std::vector<ArgValue> args() {
    return {ArgValue::buf(*x, ElemType::f32, kN), ArgValue::buf(*acc, ElemType::f32, kN),
            ArgValue(std::int32_t{kN})};
  }
  std::vector<float> read(const Buffer& b) {
    std::vector<float> out(kN);
    REQUIRE(dev->download(*b, out.data(), kN * sizeof(float)).ok());
    return out;
  }
  // After exactly one launch on zeroed acc and the original x.
  void check_one_launch() {
    auto acc_now = read(acc);
    auto x_now = read(x);
    for (int i = 0; i < kN; ++i) {
      CAPTURE(i);
      REQUIRE(acc_now[i] == x0[i]);
      REQUIRE(x_now[i] == 2 * x0[i] + 1);
    }
  }
};

}  // namespace

TEST_CASE("Vulkan: after a tuning run(), outputs equal one launch on zeroed buffers") {
  for (bool search : {false, true}) {
    CAPTURE(search);
    Rig rig(search ? 7u : 3u);
    KernelDef def = acc_def();
    if (search) {
      def.search.strategy = make_search("random");
      def.search.budget.max_evaluations = 2;
    }
    auto tuner = Autotuner::make(std::move(def), quick()).value();
    REQUIRE(tuner->run(*rig.dev, rig.args()).ok());
    rig.check_one_launch();
  }
}

TEST_CASE("Vulkan: a throwing pre-hook fails that call, names itself; the key tunes next time") {
  Rig rig(11);
  KernelDef def = acc_def();
  auto thrown = std::make_shared<bool>(false);
  def.pre_hook = [thrown](Device&, ArgList, const Config&) {
    if (!*thrown) {
      *thrown = true;
      throw std::runtime_error("flaky hook");
    }
    return Status();
  };
  auto tuner = Autotuner::make(std::move(def), quick()).value();
  Status st = tuner->run(*rig.dev, rig.args());
  REQUIRE(st.code() == StatusCode::callback_failed);
  CHECK(st.message().find("pre_hook") != std::string::npos);
  CHECK(st.message().find("flaky hook") != std::string::npos);
  // The buffers were put back: the failed call left the caller's data as it was.
  CHECK(rig.read(rig.x) == rig.x0);
  REQUIRE(tuner->run(*rig.dev, rig.args()).ok());
  CHECK(tuner->best(*rig.dev, rig.args()).has_value());
  rig.check_one_launch();
}

TEST_CASE("Vulkan: a configuration whose dims launch nothing is refused, not chosen") {
  Rig rig(5);
  KernelDef def = acc_def();
  auto dims = def.dims;
  def.dims = [dims](const Config& c, ArgList a) {
    LaunchDims d = dims(c, a);
    if (c.launch().block.x == 32) d.grid.x = 0;
    return d;
  };
  auto tuner = Autotuner::make(std::move(def), quick()).value();
  REQUIRE(tuner->run(*rig.dev, rig.args()).ok());
  CHECK(tuner->best(*rig.dev, rig.args())->launch().block.x != 32);
  rig.check_one_launch();
}

TEST_CASE("Vulkan: a stored winner this process never compiled is compiled and launched") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("libtune-contracts-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string db = (dir / "tune.db").string();
  {
    // First process: tunes block.x in {32, 64} and stores both.
    Rig rig(21);
    KernelDef def = acc_def();
    def.space = ConfigSpace().param("block.x", {32, 64});
    auto opts = quick();
    opts.store = SqliteStore::open(db);
    auto tuner = Autotuner::make(std::move(def), opts).value();
    REQUIRE(tuner->run(*rig.dev, rig.args()).ok());
  }
  {
    // Make the stored block.x=32 the fastest of all, as a calmer machine would have measured.
    auto store = SqliteStore::open(db);
    auto rows = store->rows().value();
    REQUIRE(rows.size() == 2);
    StoredResult fast = rows[0].result.config == ";block=32x1x1" ? rows[0].result : rows[1].result;
    REQUIRE(fast.config == ";block=32x1x1");
    fast.stats.min = fast.stats.p20 = fast.stats.median = fast.stats.p80 = fast.stats.max =
        fast.stats.mean = 10.0;
    store->save(rows[0].key, std::vector<StoredResult>{fast});
  }
  {
    // A later process adds block.x=128: only it is timed; the stored winner must be built.
    Rig rig(22);
    auto opts = quick();
    opts.store = SqliteStore::open(db);
    auto tuner = Autotuner::make(acc_def(), opts).value();
    REQUIRE(tuner->run(*rig.dev, rig.args()).ok());
    CHECK(tuner->best(*rig.dev, rig.args())->launch().block.x == 32);
    auto report = tuner->last_report(*rig.dev, rig.args()).value();
    int timed = 0;
    for (const auto& r : report.results) timed += r.from_store ? 0 : 1;
    CHECK(timed == 1);
    rig.check_one_launch();
  }
  std::filesystem::remove_all(dir);
}
