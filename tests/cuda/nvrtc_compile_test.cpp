// NVRTC compiles every bundled kernel's every accepted configuration for sm_80 and sm_90, for
// real (no GPU needed); a broken source reports compile_error with the compiler's log.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "rtc.hpp"  // gpu::parse_resource_log
#include "tune/cuda.hpp"
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
      auto out = tune::cuda::compile(dev.arch, *src, c);
      REQUIRE_MESSAGE(out.ok(), k.name << " " << c.to_string() << ": " << out.status().to_string());
      // A CUBIN is an ELF object.
      REQUIRE(out->binary.size() > 4);
      CHECK(out->binary.compare(0, 4,
                                "\x7f"
                                "ELF") == 0);
      // ptxas -v reported this variant's registers.
      CHECK_MESSAGE(tune::gpu::parse_resource_log(out->log).registers > 0, out->log);
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

TEST_CASE("nvrtc compiles every bundled kernel configuration for sm_80") {
  compile_all_for(tune::testing::nvidia_snapshot("sm_80"));
}

TEST_CASE("nvrtc compiles every bundled kernel configuration for sm_90") {
  compile_all_for(tune::testing::nvidia_snapshot("sm_90"));
}

TEST_CASE("a broken source is a compile_error carrying the compiler log") {
  auto out = tune::cuda::compile_binary(
      "sm_90", source("extern \"C\" __global__ void k(float* x) { x[0] = undeclared_name; }"),
      tune::Config{});
  REQUIRE_FALSE(out.ok());
  CHECK(out.status().code() == tune::StatusCode::compile_error);
  CHECK(out.status().message().find("undeclared_name") != std::string::npos);
  CHECK(out.status().message().find("-arch=sm_90") != std::string::npos);
}

TEST_CASE("every definition reaches NVRTC: parameters and each launch option") {
  // Booleans as 1/0, strings verbatim, and every launch option that is set as TUNE_<NAME>; the
  // same list tune::definitions gives every backend.
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
  auto out = tune::cuda::compile_binary("sm_80", source(text), c);
  CHECK_MESSAGE(out.ok(), out.status().to_string());
  // One launch option missing: the kernel sees it undefined.
  tune::Config no_warps = c;
  no_warps.launch().num_warps = 0;
  auto missing = tune::cuda::compile_binary("sm_80", source(text), no_warps);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message().find("config not visible") != std::string::npos);
  CHECK(missing.status().message().find("-DTUNE_NUM_WARPS") == std::string::npos);
  auto bad = tune::cuda::compile_binary("sm_80", source(text), tune::Config{{"TILE", 32}});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("config not visible") != std::string::npos);
}

// A function template instantiated per configuration: "scale<EPT, NEG>".
constexpr const char* kTemplateScale = R"(
template <int EPT, bool NEG>
__global__ void scale(float* x, int n) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * EPT;
  for (int j = 0; j < EPT; ++j)
    if (base + j < n) x[base + j] *= NEG ? -2.0f : 2.0f;
})";

TEST_CASE("a template entry is instantiated per config through a name expression") {
  tune::KernelSource src = source(kTemplateScale);
  src.entry = "scale<EPT, NEG>";
  tune::Config c4{{"EPT", 4}, {"NEG", true}};
  // tests/core/definitions_test.cpp covers the parsing.
  CHECK(tune::name_expression(src.entry, c4).value() == "scale<4, true>");
  auto a = tune::cuda::compile("sm_90", src, c4);
  REQUIRE_MESSAGE(a.ok(), a.status().to_string());
  // The Itanium-mangled name of scale<4, true>(float*, int), present in the CUBIN's symbols.
  CHECK(a->entry_name == "_Z5scaleILi4ELb1EEvPfi");
  CHECK(a->binary.find(a->entry_name) != std::string::npos);
  auto b = tune::cuda::compile("sm_90", src, tune::Config{{"EPT", 2}, {"NEG", false}});
  REQUIRE_MESSAGE(b.ok(), b.status().to_string());
  CHECK(b->entry_name == "_Z5scaleILi2ELb0EEvPfi");
}

TEST_CASE("bad template entries fail with the reason") {
  tune::KernelSource src = source(kTemplateScale);
  src.entry = "scale<EPT, NEG";
  auto unbalanced = tune::cuda::compile("sm_90", src, tune::Config{{"EPT", 4}});
  REQUIRE_FALSE(unbalanced.ok());
  CHECK(unbalanced.status().code() == tune::StatusCode::invalid_argument);
  CHECK(unbalanced.status().message().find("scale<EPT, NEG") != std::string::npos);
  // An argument the config does not define stays as written: the compiler names it.
  src.entry = "scale<EPT, NEGATE>";
  auto unknown = tune::cuda::compile("sm_90", src, tune::Config{{"EPT", 4}});
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().code() == tune::StatusCode::compile_error);
  CHECK(unknown.status().message().find("NEGATE") != std::string::npos);
}

TEST_CASE("max_registers reaches the compiler") {
  const char* text = "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }";
  tune::Config c;
  c.launch().max_registers = 32;
  auto out = tune::cuda::compile("sm_90", source(text), c);
  REQUIRE_MESSAGE(out.ok(), out.status().to_string());
  CHECK(tune::gpu::parse_resource_log(out->log).registers <= 32);
}

TEST_CASE("an unknown or unsupported architecture is invalid_argument") {
  const char* text = "extern \"C\" __global__ void k() {}";
  auto bad_form = tune::cuda::compile_binary("gfx90a", source(text), tune::Config{});
  REQUIRE_FALSE(bad_form.ok());
  CHECK(bad_form.status().code() == tune::StatusCode::invalid_argument);
  auto too_old = tune::cuda::compile_binary("sm_20", source(text), tune::Config{});
  REQUIRE_FALSE(too_old.ok());
  CHECK(too_old.status().code() == tune::StatusCode::invalid_argument);
  CHECK(too_old.status().message().find("sm_90") != std::string::npos);  // lists the supported
}

TEST_CASE("resource lines of ptxas are parsed") {
  const char* log =
      "ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
      "ptxas info    : Function properties for k\n"
      "    24 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n"
      "ptxas info    : Used 168 registers, used 1 barriers, 24 bytes cumulative stack size, "
      "1024 bytes smem\n";
  auto r = tune::gpu::parse_resource_log(log);
  CHECK(r.registers == 168);
  CHECK(r.spill_bytes == 8);
  CHECK(r.local_bytes == 24);
  CHECK(r.shared_bytes == 1024);
}
