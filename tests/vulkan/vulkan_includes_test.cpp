// GLSL kernels as programs write them, for real on lavapipe: #include through libtune's
// includer (in-memory headers, include dirs), kernel options mapped onto shaderc (and the ones
// it cannot honour refused, naming them), module globals refused (Vulkan has none), and the
// SPIR-V caches keyed on the text of every included file: an edited header is recompiled.
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "scoped_env.hpp"
#include "temp_dir.hpp"
#include "tune/tune.hpp"
#include "tune/vulkan.hpp"
#include "vulkan_test_device.hpp"

namespace fs = std::filesystem;

namespace {

using namespace tune;
using tune::testing::open_vulkan_or_skip;
using tune::testing::ScopedEnv;

struct Scratch {
  tune::testing::TempDir tmp{"libtune-vkinc-test"};
  fs::path dir = tmp.path;
  Scratch() { fs::create_directories(dir / "cache"); }
  void write(const std::string& rel, const std::string& text) const {
    tmp.write("include/" + rel, text);
  }
  std::string include_dir() const { return (dir / "include").string(); }
};

// y[i] = scale_of(x[i]) + OFFSET * ELEMS..., computed through two headers: "scale.glsl" from
// the include dir (which itself includes "lib/offset.glsl" beside it) and <tile.glsl> in memory.
const char* kShader = R"(#version 450
#include "scale.glsl"
#include <tile.glsl>
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P { uint n; };
void main() {
  uint base = gl_GlobalInvocationID.x * ELEMS;
  for (uint e = 0u; e < ELEMS; ++e) {
    uint i = base + e;
    if (i < n) y[i] = scale_of(x[i]) + TILE_BIAS;
  }
}
)";

KernelSource source(const Scratch& s) {
  KernelSource src;
  src.language = Language::glsl;
  src.entry = "main";
  src.text = kShader;
  src.include_dirs = {s.include_dir()};
  src.headers = {{"tile.glsl", "const float TILE_BIAS = 0.25;\n"}};
  return src;
}

void write_scale(const Scratch& s, const std::string& factor) {
  s.write("scale.glsl", "#include \"lib/offset.glsl\"\nfloat scale_of(float v) { return v * " +
                            factor + " + OFFSET; }\n");
  s.write("lib/offset.glsl", "const float OFFSET = 1.0;\n");
}

Config variant(std::uint32_t block, std::int64_t elems) {
  Config c;
  c.set("ELEMS", elems);
  c.launch().block = {block, 1, 1};
  return c;
}

// Runs `k` on x = 0, 1, ..., n-1 and returns y.
std::vector<float> run(Device& dev, const CompiledKernel& k, const Config& c, std::uint32_t n) {
  std::vector<float> x(n);
  for (std::uint32_t i = 0; i < n; ++i) x[i] = static_cast<float>(i);
  auto bx = dev.alloc(n * 4);
  auto by = dev.alloc(n * 4);
  REQUIRE(bx.ok());
  REQUIRE(by.ok());
  REQUIRE(dev.upload(**bx, x.data(), n * 4).ok());
  const ArgValue args[] = {ArgValue::buf(**bx, ElemType::f32, n),
                           ArgValue::buf(**by, ElemType::f32, n), ArgValue(n)};
  const std::uint32_t block = c.launch().block.x;
  const auto elems = static_cast<std::uint32_t>(std::get<std::int64_t>(*c.find("ELEMS")));
  const std::uint32_t per_group = block * elems;
  REQUIRE(dev.launch(k, {{(n + per_group - 1) / per_group, 1, 1}, {block, 1, 1}, 0}, args).ok());
  std::vector<float> y(n);
  REQUIRE(dev.download(**by, y.data(), n * 4).ok());
  return y;
}

void check_against_cpu(const std::vector<float>& y, float factor) {
  for (std::size_t i = 0; i < y.size(); ++i) {
    const float want = static_cast<float>(i) * factor + 1.0f + 0.25f;
    REQUIRE_MESSAGE(y[i] == want, "y[" << i << "] = " << y[i] << ", want " << want);
  }
}

}  // namespace

TEST_CASE(
    "a GLSL kernel includes a file from include_dirs and an in-memory header; tuned, "
    "its output matches the CPU") {
  Scratch s;
  ScopedEnv cache_dir("TUNE_CACHE_DIR", (s.dir / "cache").c_str());
  write_scale(s, "2.0");
  auto dev = open_vulkan_or_skip();

  KernelDef k;
  k.name = "includes_scale";
  k.sources = {source(s)};
  k.signature.buffer("x", ElemType::f32).buffer("y", ElemType::f32).scalar("n", ElemType::u32);
  k.space.param("block.x", {32, 64}).param("ELEMS", {1, 2});
  k.key = {KeySpec::exact("n")};
  k.dims = [](const Config& c, ArgList args) {
    const auto n = static_cast<std::uint32_t>(args[2].as_int());
    const std::uint32_t per =
        c.launch().block.x * static_cast<std::uint32_t>(std::get<std::int64_t>(*c.find("ELEMS")));
    return LaunchDims{{(n + per - 1) / per, 1, 1}, c.launch().block, 0};
  };
  k.verify = [](Device& d, ArgList args, const Config&) -> Status {
    const auto n = static_cast<std::size_t>(args[2].as_int());
    std::vector<float> y(n);
    TUNE_RETURN_IF_ERROR(d.download(*args[1].buffer, y.data(), n * 4));
    for (std::size_t i = 0; i < n; ++i)
      if (y[i] != static_cast<float>(i) * 2.0f + 1.25f)
        return Status(StatusCode::wrong_output, "y[" + std::to_string(i) + "]");
    return {};
  };
  AutotunerOptions opts;
  opts.bench.warmup_ms = 1;
  opts.bench.rep_ms = 2;
  auto tuner = Autotuner::make(k, opts);
  REQUIRE_MESSAGE(tuner.ok(), tuner.status().to_string());

  const std::uint32_t n = 1000;
  std::vector<float> x(n);
  for (std::uint32_t i = 0; i < n; ++i) x[i] = static_cast<float>(i);
  auto bx = dev->alloc(n * 4);
  auto by = dev->alloc(n * 4);
  REQUIRE(bx.ok());
  REQUIRE(by.ok());
  REQUIRE(dev->upload(**bx, x.data(), n * 4).ok());
  const ArgValue args[] = {ArgValue::buf(**bx, ElemType::f32, n),
                           ArgValue::buf(**by, ElemType::f32, n), ArgValue(n)};
  auto best = (*tuner)->tune(*dev, args);
  REQUIRE_MESSAGE(best.ok(), best.status().to_string());
  REQUIRE((*tuner)->run(*dev, args).ok());
  std::vector<float> y(n);
  REQUIRE(dev->download(**by, y.data(), n * 4).ok());
  check_against_cpu(y, 2.0f);
}

TEST_CASE("the SPIR-V caches miss after an included file is edited, and hit again after") {
  Scratch s;
  ScopedEnv cache_dir("TUNE_CACHE_DIR", (s.dir / "cache").c_str());
  ScopedEnv mode("TUNE_CACHE", nullptr);
  write_scale(s, "2.0");
  const Config c = variant(64, 1);
  {
    auto dev = open_vulkan_or_skip();
    auto k = dev->compile(source(s), c);
    REQUIRE_MESSAGE(k.ok(), k.status().to_string());
    CHECK(!(*k)->from_binary_cache());
    check_against_cpu(run(*dev, **k, c, 300), 2.0f);
  }
  {
    // A new device (a new process's view): the SPIR-V comes from disk.
    auto dev = open_vulkan_or_skip();
    auto k = dev->compile(source(s), c);
    REQUIRE(k.ok());
    CHECK((*k)->from_binary_cache());
    check_against_cpu(run(*dev, **k, c, 300), 2.0f);
  }
  // The included file changes: neither the memory nor the disk cache may serve the old SPIR-V.
  write_scale(s, "3.0");
  auto dev = open_vulkan_or_skip();
  auto edited = dev->compile(source(s), c);
  REQUIRE(edited.ok());
  CHECK(!(*edited)->from_binary_cache());
  check_against_cpu(run(*dev, **edited, c, 300), 3.0f);
  // A file two levels down too (lib/offset.glsl, included beside scale.glsl).
  s.write("lib/offset.glsl", "const float OFFSET = 1.0; // edited\n");
  auto nested = dev->compile(source(s), c);
  REQUIRE(nested.ok());
  CHECK(!(*nested)->from_binary_cache());
  // An in-memory header's text is in the key as well.
  KernelSource other = source(s);
  other.headers[0].text = "const float TILE_BIAS = 0.5;\n";
  auto mem = dev->compile(other, c);
  REQUIRE(mem.ok());
  CHECK(!(*mem)->from_binary_cache());
  // And the unchanged source hits the cache again (this device's memory cache).
  auto again = dev->compile(source(s), c);
  REQUIRE(again.ok());
  CHECK((*again)->from_binary_cache());
}

TEST_CASE("an #include found nowhere is a compile error naming it") {
  Scratch s;
  write_scale(s, "2.0");
  auto dev = open_vulkan_or_skip();
  KernelSource src = source(s);
  src.headers.clear();
  auto k = dev->compile(src, variant(64, 1));
  REQUIRE(!k.ok());
  CHECK(k.status().code() == StatusCode::compile_error);
  CHECK(k.status().message().find("tile.glsl") != std::string::npos);
}

TEST_CASE("GLSL kernel options map onto shaderc; others are refused naming the option") {
  Scratch s;
  write_scale(s, "2.0");
  auto dev = open_vulkan_or_skip();
  const Config c = variant(64, 2);
  for (const char* ok : {"-O0", "-Os", "-g", "-Werror", "--target-env=vulkan1.1",
                         "--target-spv=spv1.3", "-DUNUSED_MACRO=3"}) {
    CAPTURE(ok);
    KernelSource src = source(s);
    src.options = {ok};
    auto k = dev->compile(src, c);
    REQUIRE_MESSAGE(k.ok(), k.status().to_string());
    check_against_cpu(run(*dev, **k, c, 257), 2.0f);
  }
  for (const char* bad :
       {"-fhlsl-offsets", "--target-env=vulkan1.3", "-DTUNE_X=1", "-O3", "--target-spv=spv1.6"}) {
    CAPTURE(bad);
    KernelSource src = source(s);
    src.options = {bad};
    auto k = dev->compile(src, c);
    REQUIRE(!k.ok());
    CHECK(k.status().code() == StatusCode::invalid_argument);
    CHECK(k.status().message().find(bad) != std::string::npos);
    CHECK(k.status().message().find("vulkan") != std::string::npos);
  }
}

TEST_CASE("Vulkan refuses module globals: it has none") {
  Scratch s;
  write_scale(s, "2.0");
  auto dev = open_vulkan_or_skip();
  KernelSource src = source(s);
  src.module_globals = [](const Config&) {
    return std::vector<ModuleGlobal>{ModuleGlobal::of("scale", 1.0f)};
  };
  auto k = dev->compile(src, variant(64, 1));
  REQUIRE(!k.ok());
  CHECK(k.status().code() == StatusCode::invalid_argument);
  CHECK(k.status().message().find("module globals") != std::string::npos);
}
