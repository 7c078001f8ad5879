// hiprtc compiles every bundled kernel's every accepted configuration for gfx90a (CDNA2,
// wave64) and gfx1030 (RDNA2, wave32) and produces a code object; a broken source reports the
// log.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "tune/hip.hpp"
#include "tune/kernels/bundled.hpp"
#include "tune/testing/device_snapshots.hpp"

namespace {

void compile_all_for(const tune::DeviceInfo& dev) {
  auto kernels = tune::kernels::bundled_kernels(tune::Language::cuda_hip);
  REQUIRE(kernels.size() == 4);
  const auto start = std::chrono::steady_clock::now();
  std::size_t total = 0;
  for (const auto& k : kernels) {
    const tune::KernelSource* src = k.def.source_for(tune::Language::cuda_hip);
    REQUIRE(src != nullptr);
    auto configs = k.def.space.enumerate(dev);
    REQUIRE_MESSAGE(configs.ok(), configs.status().to_string());
    CHECK_MESSAGE(!configs->empty(), k.name << " accepts no configuration on " << dev.arch);
    for (const auto& c : *configs) {
      auto out = tune::hip::compile(dev.arch, *src, c);
      REQUIRE_MESSAGE(out.ok(), k.name << " " << c.to_string() << ": " << out.status().to_string());
      // A code object (ELF, possibly inside an offload bundle) that names the entry point.
      REQUIRE(out->binary.size() > 16);
      const bool elf = out->binary.compare(0, 4,
                                           "\x7f"
                                           "ELF") == 0;
      const bool bundle = out->binary.compare(0, 24, "__CLANG_OFFLOAD_BUNDLE__") == 0;
      CHECK_MESSAGE((elf || bundle), "not a code object");
      CHECK(out->binary.find(src->entry) != std::string::npos);
    }
    total += configs->size();
    std::printf("%s: %zu configurations compiled for %s\n", k.name.c_str(), configs->size(),
                dev.arch.c_str());
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%zu variants for %s in %.1f s\n", total, dev.arch.c_str(), s);
}

tune::KernelSource source(std::string text) {
  tune::KernelSource s;
  s.language = tune::Language::cuda_hip;
  s.entry = "k";
  s.text = std::move(text);
  return s;
}

}  // namespace

TEST_CASE("hiprtc compiles every bundled kernel configuration for gfx90a") {
  compile_all_for(tune::testing::amd_snapshot("gfx90a", 64));
}

TEST_CASE("hiprtc compiles every bundled kernel configuration for gfx1030") {
  compile_all_for(tune::testing::amd_snapshot("gfx1030", 32));
}

TEST_CASE("a broken source is a compile_error carrying the compiler log") {
  auto out = tune::hip::compile_binary(
      "gfx90a", source("extern \"C\" __global__ void k(float* x) { x[0] = undeclared_name; }"),
      tune::Config{});
  REQUIRE_FALSE(out.ok());
  CHECK(out.status().code() == tune::StatusCode::compile_error);
  CHECK(out.status().message().find("undeclared_name") != std::string::npos);
  CHECK(out.status().message().find("--offload-arch=gfx90a") != std::string::npos);
}

TEST_CASE("the warp size is a per-target compile-time constant") {
  const char* text = R"(
#if TUNE_WARP_SIZE != EXPECT
#error wrong warp size
#endif
extern "C" __global__ void k(float* x) { x[threadIdx.x] = TUNE_WARP_SIZE; })";
  CHECK(tune::hip::compile_binary("gfx90a", source(text), tune::Config{{"EXPECT", 64}}).ok());
  CHECK(tune::hip::compile_binary("gfx1030", source(text), tune::Config{{"EXPECT", 32}}).ok());
  CHECK_FALSE(tune::hip::compile_binary("gfx90a", source(text), tune::Config{{"EXPECT", 32}}).ok());
}

TEST_CASE("every definition reaches hiprtc: parameters and each launch option") {
  const char* text = R"(
#if !(TILE == 64 && FLAG == 1 && OFF == 0 && TUNE_BLOCK_X == 128 && TUNE_BLOCK_Y == 2 && \
      TUNE_BLOCK_Z == 1 && TUNE_NUM_WARPS == 8 && TUNE_NUM_STAGES == 3 && \
      TUNE_MAX_REGISTERS == 96 && TUNE_SHARED_BYTES == 4096)
#error config not visible
#endif
extern "C" __global__ void k(float* x) { x[threadIdx.x] = (ELEM)TILE; })";
  tune::Config c{{"TILE", 64}, {"FLAG", true}, {"OFF", false}, {"ELEM", "float"}};
  c.set(tune::kBlockX, 128).set(tune::kBlockY, 2).set(tune::kNumWarps, 8);
  c.set(tune::kNumStages, 3).set(tune::kMaxRegisters, 96).set(tune::kSharedBytes, 4096);
  auto out = tune::hip::compile_binary("gfx90a", source(text), c);
  CHECK_MESSAGE(out.ok(), out.status().to_string());
  tune::Config no_stages = c;
  no_stages.launch().num_stages = 0;
  auto missing = tune::hip::compile_binary("gfx90a", source(text), no_stages);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message().find("config not visible") != std::string::npos);
}

TEST_CASE("a non-gfx target is invalid_argument") {
  auto out = tune::hip::compile_binary("sm_90", source("extern \"C\" __global__ void k() {}"),
                                       tune::Config{});
  REQUIRE_FALSE(out.ok());
  CHECK(out.status().code() == tune::StatusCode::invalid_argument);
}

TEST_CASE("a template entry is instantiated per config through a name expression") {
  tune::KernelSource src = source(R"(
template <int EPT, bool NEG>
__global__ void scale(float* x, int n) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * EPT;
  for (int j = 0; j < EPT; ++j)
    if (base + j < n) x[base + j] *= NEG ? -2.0f : 2.0f;
})");
  src.entry = "scale<EPT, NEG>";
  auto out = tune::hip::compile("gfx90a", src, tune::Config{{"EPT", 4}, {"NEG", true}});
  REQUIRE_MESSAGE(out.ok(), out.status().to_string());
  // hiprtc reports the Itanium-mangled instantiation, found among the code object's symbols.
  CHECK(out->entry_name == "_Z5scaleILi4ELb1EEvPfi");
  CHECK(out->binary.find(out->entry_name) != std::string::npos);
}
