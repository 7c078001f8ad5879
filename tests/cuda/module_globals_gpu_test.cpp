// __constant__ data set per variant (KernelSource::module_globals) on a real CUDA device: each
// variant's module gets its own values before its first launch, checked against a CPU
// reference, directly and through a tuning whose verify callback checks every variant; a
// global the module lacks fails only that variant, and tuning goes on. Skips with the reason
// without a CUDA device.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "skip.hpp"
#include "tune/cuda.hpp"
#include "tune/tune.hpp"

using namespace tune;

namespace {

const char* kKernel = R"(
__constant__ float scale;
__constant__ int offsets[4];
extern "C" __global__ void affine(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * scale + offsets[i % 4] + BIAS;
}
)";

std::int64_t s_of(const Config& c) { return std::get<std::int64_t>(*c.find("S")); }

// The globals of the variant with parameter S: scale = S / 2, offsets = {S, 2S, 3S, 4S}.
std::vector<ModuleGlobal> globals_of(const Config& c) {
  const auto s = static_cast<std::int32_t>(s_of(c));
  const std::int32_t offsets[4] = {s, 2 * s, 3 * s, 4 * s};
  return {ModuleGlobal::of("scale", 0.5f * static_cast<float>(s)),
          ModuleGlobal::of("offsets", std::span<const std::int32_t>(offsets))};
}

float reference(const Config& c, int i) {
  const auto s = static_cast<float>(s_of(c));
  const auto bias = static_cast<float>(std::get<std::int64_t>(*c.find("BIAS")));
  return static_cast<float>(i) * 0.5f * s + static_cast<float>((i % 4 + 1)) * s + bias;
}

KernelDef affine_def() {
  KernelDef k;
  k.name = "module_globals_affine";
  KernelSource src;
  src.language = Language::cuda_hip;
  src.entry = "affine";
  src.text = kKernel;
  src.module_globals = globals_of;
  k.sources = {src};
  k.signature.buffer("x", ElemType::f32).buffer("y", ElemType::f32).scalar("n", ElemType::i32);
  k.space.param("block.x", {128, 256}).param("S", {1, 2, 3}).param("BIAS", {0, 7});
  k.key = {KeySpec::exact("n")};
  k.dims = [](const Config& c, ArgList args) {
    const auto n = static_cast<std::uint32_t>(args[2].as_int());
    const std::uint32_t b = c.launch().block.x;
    return LaunchDims{{(n + b - 1) / b, 1, 1}, {b, 1, 1}, 0};
  };
  k.verify = [](Device& d, ArgList args, const Config& c) -> Status {
    const auto n = static_cast<int>(args[2].as_int());
    std::vector<float> y(static_cast<std::size_t>(n));
    TUNE_RETURN_IF_ERROR(d.download(*args[1].buffer, y.data(), y.size() * 4));
    for (int i = 0; i < n; ++i)
      if (y[static_cast<std::size_t>(i)] != reference(c, i))
        return Status(StatusCode::wrong_output, "y[" + std::to_string(i) + "]");
    return {};
  };
  return k;
}

// Each case's setup: the device (skips without one), x = 0, 1, ..., n-1 uploaded, y, and the
// affine kernel's arguments over them.
struct Rig {
  std::unique_ptr<Device> dev;
  Buffer bx, by;
  std::vector<ArgValue> args;

  explicit Rig(int n) {
    auto opened = open_device("cuda");
    tune::testing::skip_if_unavailable(opened.status(), "no CUDA device");
    REQUIRE_MESSAGE(opened.ok(), opened.status().to_string());
    dev = std::move(*opened);
    std::vector<float> x(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>(i);
    const auto bytes = static_cast<std::uint64_t>(n) * 4;
    bx = dev->alloc(bytes).value();
    by = dev->alloc(bytes).value();
    REQUIRE(dev->upload(*bx, x.data(), bytes).ok());
    args = {ArgValue::buf(*bx, ElemType::f32, static_cast<std::uint64_t>(n)),
            ArgValue::buf(*by, ElemType::f32, static_cast<std::uint64_t>(n)), ArgValue(n)};
  }
};

}  // namespace

TEST_CASE("each variant's __constant__ values reach its kernel; tuned output matches the CPU") {
  const int n = 10000;
  Rig rig(n);
  Device* dev = rig.dev.get();
  const auto& args = rig.args;
  const auto& by = rig.by;
  const KernelDef def = affine_def();

  // Every variant alone, compiled and launched by hand.
  auto configs = def.space.enumerate(dev->info());
  REQUIRE(configs.ok());
  for (const Config& c : *configs) {
    CAPTURE(c.to_string());
    auto k = dev->compile(def.sources[0], c);
    REQUIRE_MESSAGE(k.ok(), k.status().to_string());
    REQUIRE(dev->launch(**k, def.dims(c, args), args).ok());
    std::vector<float> y(n);
    REQUIRE(dev->download(*by, y.data(), n * 4).ok());
    for (int i = 0; i < n; ++i)
      REQUIRE_MESSAGE(y[static_cast<std::size_t>(i)] == reference(c, i), "i=" << i);
  }

  // Tuned: verify checks every variant against the CPU, so none may be wrong.
  auto tuner = Autotuner::make(def);
  REQUIRE_MESSAGE(tuner.ok(), tuner.status().to_string());
  auto best = (*tuner)->tune(*dev, args);
  REQUIRE_MESSAGE(best.ok(), best.status().to_string());
  REQUIRE((*tuner)->run(*dev, args).ok());
  std::vector<float> y(n);
  REQUIRE(dev->download(*by, y.data(), n * 4).ok());
  for (int i = 0; i < n; ++i) REQUIRE(y[static_cast<std::size_t>(i)] == reference(*best, i));
}

TEST_CASE("a module global the kernel lacks fails that variant only; tuning goes on") {
  Rig rig(4096);
  KernelDef def = affine_def();
  // S=3 asks for a global that does not exist.
  def.sources[0].module_globals = [](const Config& c) {
    auto g = globals_of(c);
    if (s_of(c) == 3) g.push_back(ModuleGlobal::of("no_such_global", 1));
    return g;
  };
  TuningReport report;
  AutotunerOptions opts;
  opts.listener = [&](const TuningReport& r) { report = r; };
  auto tuner = Autotuner::make(def, opts);
  REQUIRE(tuner.ok());
  auto best = (*tuner)->tune(*rig.dev, rig.args);
  REQUIRE_MESSAGE(best.ok(), best.status().to_string());
  CHECK(s_of(*best) != 3);
  int failed = 0;
  for (const auto& r : report.results) {
    if (s_of(r.config) != 3) continue;
    ++failed;
    CHECK(r.status.code() == StatusCode::invalid_argument);
    CHECK(r.status.message().find("module global 'no_such_global' of affine{") !=
          std::string::npos);
  }
  CHECK(failed == 4);  // S=3 with each block size and bias
}
