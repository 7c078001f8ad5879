// One compiler contract for NVRTC (tune::cuda::compile) and hiprtc (tune::hip::compile), for
// real and without a GPU: every bundled kernel's every accepted configuration compiles for each
// target into a code object that names its entry; a broken source is a compile_error carrying
// the log; every definition reaches the compiler; template entries are instantiated per config;
// another vendor's architecture is invalid_argument.
//
// Written once, run per compiler: tests/cuda builds this file into cuda_tests with
// TUNE_TEST_NVRTC, tests/hip into hip_tests with TUNE_TEST_HIPRTC, so each suite keeps its
// backend's label. Every case is a template over the compilers of the build ("<nvrtc>",
// "<hiprtc>"); what legitimately differs is in the traits below, and the cases that only make
// sense for one compiler are instantiated only for the compilers whose traits allow them.
#include <doctest/doctest.h>

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "rtc.hpp"  // gpu::parse_resource_log
#include "tune/kernels/bundled.hpp"
#include "tune/testing/device_snapshots.hpp"
#include "uncached_compiles.hpp"
#ifdef TUNE_TEST_NVRTC
#include "tune/cuda.hpp"
#endif
#ifdef TUNE_TEST_HIPRTC
#include "tune/hip.hpp"
#endif

#if !defined(TUNE_TEST_NVRTC) && !defined(TUNE_TEST_HIPRTC)
#error "define TUNE_TEST_NVRTC and/or TUNE_TEST_HIPRTC: the compilers this suite runs against"
#endif

namespace {

bool is_elf(const std::string& b) {
  return b.compare(0, 4,
                   "\x7f"
                   "ELF") == 0;
}

// Compiler C's I-th target, for the cases that run once per target ("<nvrtc sm_80>").
template <class C, std::size_t I>
struct Target {
  using Compiler = C;
  static tune::DeviceInfo device() { return C::targets().at(I); }
  static doctest::String name() { return doctest::toString<C>() + " " + device().arch.c_str(); }
};

}  // namespace

#ifdef TUNE_TEST_NVRTC
namespace {

struct Nvrtc {
  static constexpr auto compile = &tune::cuda::compile;
  // The targets every bundled kernel is compiled for; the single-source cases use kArch.
  static std::vector<tune::DeviceInfo> targets() {
    return {tune::testing::nvidia_snapshot("sm_80"), tune::testing::nvidia_snapshot("sm_90")};
  }
  static constexpr const char* kArch = "sm_90";
  // How a failed compile's message names the target among the options.
  static constexpr const char* kArchOption = "-arch=sm_90";
  // Another vendor's architecture name.
  static constexpr const char* kForeignArch = "gfx90a";
  // A CUBIN is an ELF object.
  static bool is_code_object(const std::string& b) { return is_elf(b); }
  // The log carries ptxas -v resource lines (registers, spills, shared memory) and
  // max_registers becomes a register cap (--maxrregcount).
  static constexpr bool kReportsResources = true;
  // An architecture of the right form that this compiler does not support, and one it does
  // (listed in the error); nullptr where the compiler does not check.
  static constexpr const char* kUnsupportedArch = "sm_20";
  static constexpr const char* kSupportedArch = "sm_90";
};

}  // namespace

TYPE_TO_STRING_AS("nvrtc", Nvrtc);
TYPE_TO_STRING_AS((Target<Nvrtc, 0>::name()), Target<Nvrtc, 0>);
TYPE_TO_STRING_AS((Target<Nvrtc, 1>::name()), Target<Nvrtc, 1>);
#endif

#ifdef TUNE_TEST_HIPRTC
namespace {

struct Hiprtc {
  static constexpr auto compile = &tune::hip::compile;
  // CDNA2 (wave64) and RDNA2 (wave32).
  static std::vector<tune::DeviceInfo> targets() {
    return {tune::testing::amd_snapshot("gfx90a", 64), tune::testing::amd_snapshot("gfx1030", 32)};
  }
  static constexpr const char* kArch = "gfx90a";
  static constexpr const char* kArchOption = "--offload-arch=gfx90a";
  static constexpr const char* kForeignArch = "sm_90";
  // A code object: ELF, possibly inside a clang offload bundle.
  static bool is_code_object(const std::string& b) {
    return is_elf(b) || b.compare(0, 24, "__CLANG_OFFLOAD_BUNDLE__") == 0;
  }
  // hiprtc's log has no resource lines and it has no register cap option.
  static constexpr bool kReportsResources = false;
  // Any gfx name is passed on to the compiler.
  static constexpr const char* kUnsupportedArch = nullptr;
  static constexpr const char* kSupportedArch = nullptr;
};

}  // namespace

TYPE_TO_STRING_AS("hiprtc", Hiprtc);
TYPE_TO_STRING_AS((Target<Hiprtc, 0>::name()), Target<Hiprtc, 0>);
TYPE_TO_STRING_AS((Target<Hiprtc, 1>::name()), Target<Hiprtc, 1>);
#endif

namespace {

using Compilers = decltype(std::tuple_cat(
#ifdef TUNE_TEST_NVRTC
    std::tuple<Nvrtc>{},
#endif
#ifdef TUNE_TEST_HIPRTC
    std::tuple<Hiprtc>{},
#endif
    std::tuple<>{}));
// Their targets (each compiler has two).
using Targets = decltype(std::tuple_cat(
#ifdef TUNE_TEST_NVRTC
    std::tuple<Target<Nvrtc, 0>, Target<Nvrtc, 1>>{},
#endif
#ifdef TUNE_TEST_HIPRTC
    std::tuple<Target<Hiprtc, 0>, Target<Hiprtc, 1>>{},
#endif
    std::tuple<>{}));

// The compilers of `Tuple` for which Keep<C>::value holds: cases that only make sense for some.
template <template <class> class Keep, class Tuple>
struct Filter;
template <template <class> class Keep, class... Cs>
struct Filter<Keep, std::tuple<Cs...>> {
  using type = decltype(std::tuple_cat(
      std::declval<std::conditional_t<Keep<Cs>::value, std::tuple<Cs>, std::tuple<>>>()...));
};
template <class C>
using ReportsResources = std::bool_constant<C::kReportsResources>;
template <class C>
using ChecksSupportedArchs = std::bool_constant<C::kUnsupportedArch != nullptr>;

template <class C>
void compile_all_for(const tune::DeviceInfo& dev) {
  const tune::testing::UncachedCompiles uncached;  // the logs must carry ptxas's lines
  auto kernels = tune::kernels::bundled_kernels(tune::Language::cuda_hip);
  REQUIRE(kernels.size() == 6);
  const auto start = std::chrono::steady_clock::now();
  std::size_t total = 0;
  for (const auto& k : kernels) {
    const tune::KernelSource* src = k.def.source_for(tune::Language::cuda_hip);
    REQUIRE(src != nullptr);
    auto configs = k.def.space.enumerate(dev);
    REQUIRE_MESSAGE(configs.ok(), configs.status().to_string());
    // The wgmma matmuls are for sm_90 alone (sm_90a code): their space is empty elsewhere. On
    // sm_90 cuda_tests' "every wgmma matmul configuration compiles for sm_90a with no spills"
    // compiles each of them, with the same checks and ptxas's spill line besides: compiled here
    // too they took most of this case's 85 s (2-core CI machine, 2026-12-06).
    if (k.name.starts_with("matmul_wgmma")) {
      if (dev.arch != "sm_90")
        CHECK_MESSAGE(configs->empty(), k.name << " offers configurations on " << dev.arch);
      else
        CHECK_MESSAGE(!configs->empty(), k.name << " accepts no configuration on " << dev.arch);
      continue;
    }
    CHECK_MESSAGE(!configs->empty(), k.name << " accepts no configuration on " << dev.arch);
    for (const auto& c : *configs) {
      auto out = C::compile(dev.arch, *src, c);
      REQUIRE_MESSAGE(out.ok(), k.name << " " << c.to_string() << ": " << out.status().to_string());
      // A code object that names the entry point.
      REQUIRE(out->binary.size() > 16);
      CHECK_MESSAGE(C::is_code_object(out->binary), "not a code object");
      CHECK(out->binary.find(src->entry) != std::string::npos);
      // ptxas -v reported this variant's registers.
      if constexpr (C::kReportsResources) {
        CHECK_MESSAGE(tune::gpu::parse_resource_log(out->log).registers > 0, out->log);
      }
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

bool mentions(const tune::Status& s, std::string_view text) {
  return s.message().find(text) != std::string::npos;
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("compiles every bundled kernel configuration", T, every_config) {
  compile_all_for<typename T::Compiler>(T::device());
}
TEST_CASE_TEMPLATE_APPLY(every_config, Targets);

TEST_CASE_TEMPLATE_DEFINE("a broken source is a compile_error carrying the compiler log", C,
                          broken_source) {
  auto out = C::compile(
      C::kArch, source("extern \"C\" __global__ void k(float* x) { x[0] = undeclared_name; }"),
      tune::Config{});
  REQUIRE_FALSE(out.ok());
  CHECK(out.status().code() == tune::StatusCode::compile_error);
  CHECK(mentions(out.status(), "undeclared_name"));
  CHECK(mentions(out.status(), C::kArchOption));
}
TEST_CASE_TEMPLATE_APPLY(broken_source, Compilers);

TEST_CASE_TEMPLATE_DEFINE("the warp size is a per-target compile-time constant", C, warp_size) {
  const char* text = R"(
#if TUNE_WARP_SIZE != EXPECT
#error wrong warp size
#endif
extern "C" __global__ void k(float* x) { x[threadIdx.x] = TUNE_WARP_SIZE; })";
  for (const tune::DeviceInfo& dev : C::targets()) {
    CAPTURE(dev.arch);
    const int warp = static_cast<int>(dev.warp_size);
    auto right = C::compile(dev.arch, source(text), tune::Config{{"EXPECT", warp}});
    CHECK_MESSAGE(right.ok(), right.status().to_string());
    const int other = warp == 32 ? 64 : 32;
    CHECK_FALSE(C::compile(dev.arch, source(text), tune::Config{{"EXPECT", other}}).ok());
  }
}
TEST_CASE_TEMPLATE_APPLY(warp_size, Compilers);

TEST_CASE_TEMPLATE_DEFINE(
    "every definition reaches the compiler: parameters and each launch option", C, definitions) {
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
  auto out = C::compile(C::kArch, source(text), c);
  CHECK_MESSAGE(out.ok(), out.status().to_string());
  // One launch option missing: the kernel sees it undefined, and it is not among the options
  // the failure lists.
  tune::Config no_warps = c;
  no_warps.launch().num_warps = 0;
  auto missing = C::compile(C::kArch, source(text), no_warps);
  REQUIRE_FALSE(missing.ok());
  CHECK(mentions(missing.status(), "config not visible"));
  CHECK(mentions(missing.status(), "-DTUNE_BLOCK_X=128"));
  CHECK_FALSE(mentions(missing.status(), "-DTUNE_NUM_WARPS"));
  tune::Config no_stages = c;
  no_stages.launch().num_stages = 0;
  missing = C::compile(C::kArch, source(text), no_stages);
  REQUIRE_FALSE(missing.ok());
  CHECK(mentions(missing.status(), "config not visible"));
  CHECK_FALSE(mentions(missing.status(), "-DTUNE_NUM_STAGES"));
  auto bad = C::compile(C::kArch, source(text), tune::Config{{"TILE", 32}});
  REQUIRE_FALSE(bad.ok());
  CHECK(mentions(bad.status(), "config not visible"));
}
TEST_CASE_TEMPLATE_APPLY(definitions, Compilers);

// A function template instantiated per configuration: "scale<EPT, NEG>".
constexpr const char* kTemplateScale = R"(
template <int EPT, bool NEG>
__global__ void scale(float* x, int n) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * EPT;
  for (int j = 0; j < EPT; ++j)
    if (base + j < n) x[base + j] *= NEG ? -2.0f : 2.0f;
})";

TEST_CASE_TEMPLATE_DEFINE("a template entry is instantiated per config through a name expression",
                          C, template_entry) {
  tune::KernelSource src = source(kTemplateScale);
  src.entry = "scale<EPT, NEG>";
  tune::Config c4{{"EPT", 4}, {"NEG", true}};
  // tests/core/definitions_test.cpp covers the parsing.
  CHECK(tune::name_expression(src.entry, c4).value() == "scale<4, true>");
  auto a = C::compile(C::kArch, src, c4);
  REQUIRE_MESSAGE(a.ok(), a.status().to_string());
  // The compiler reports the Itanium-mangled name of scale<4, true>(float*, int), present among
  // the code object's symbols.
  CHECK(a->entry_name == "_Z5scaleILi4ELb1EEvPfi");
  CHECK(a->binary.find(a->entry_name) != std::string::npos);
  auto b = C::compile(C::kArch, src, tune::Config{{"EPT", 2}, {"NEG", false}});
  REQUIRE_MESSAGE(b.ok(), b.status().to_string());
  CHECK(b->entry_name == "_Z5scaleILi2ELb0EEvPfi");
}
TEST_CASE_TEMPLATE_APPLY(template_entry, Compilers);

TEST_CASE_TEMPLATE_DEFINE("bad template entries fail with the reason", C, bad_template_entry) {
  tune::KernelSource src = source(kTemplateScale);
  src.entry = "scale<EPT, NEG";
  auto unbalanced = C::compile(C::kArch, src, tune::Config{{"EPT", 4}});
  REQUIRE_FALSE(unbalanced.ok());
  CHECK(unbalanced.status().code() == tune::StatusCode::invalid_argument);
  CHECK(mentions(unbalanced.status(), "scale<EPT, NEG"));
  // An argument the config does not define stays as written: the compiler names it.
  src.entry = "scale<EPT, NEGATE>";
  auto unknown = C::compile(C::kArch, src, tune::Config{{"EPT", 4}});
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().code() == tune::StatusCode::compile_error);
  CHECK(mentions(unknown.status(), "NEGATE"));
}
TEST_CASE_TEMPLATE_APPLY(bad_template_entry, Compilers);

TEST_CASE_TEMPLATE_DEFINE("another vendor's architecture is invalid_argument", C, foreign_arch) {
  auto out =
      C::compile(C::kForeignArch, source("extern \"C\" __global__ void k() {}"), tune::Config{});
  REQUIRE_FALSE(out.ok());
  CHECK(out.status().code() == tune::StatusCode::invalid_argument);
}
TEST_CASE_TEMPLATE_APPLY(foreign_arch, Compilers);

TEST_CASE_TEMPLATE_DEFINE("a precompiled SPIR-V module is refused: it is for Vulkan", C,
                          spirv_source) {
  tune::KernelSource src = source("extern \"C\" __global__ void k() {}");
  src.spirv = {0x07230203u, 0x00010500u, 0u, 1u, 0u};
  auto out = C::compile(C::kArch, src, tune::Config{});
  REQUIRE_FALSE(out.ok());
  CHECK(out.status().code() == tune::StatusCode::invalid_argument);
  CHECK(mentions(out.status(), "KernelSource::spirv"));
}
TEST_CASE_TEMPLATE_APPLY(spirv_source, Compilers);

// Only for compilers that check the architecture against the ones they support (NVRTC).
TEST_CASE_TEMPLATE_DEFINE("an unsupported architecture is invalid_argument naming the supported", C,
                          unsupported_arch) {
  auto out = C::compile(C::kUnsupportedArch, source("extern \"C\" __global__ void k() {}"),
                        tune::Config{});
  REQUIRE_FALSE(out.ok());
  CHECK(out.status().code() == tune::StatusCode::invalid_argument);
  CHECK(mentions(out.status(), C::kSupportedArch));
}
TEST_CASE_TEMPLATE_APPLY(unsupported_arch, Filter<ChecksSupportedArchs, Compilers>::type);

// Only for compilers whose log reports resources (NVRTC's ptxas -v).
TEST_CASE_TEMPLATE_DEFINE("max_registers reaches the compiler", C, max_registers) {
  const char* text = "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }";
  tune::Config c;
  c.launch().max_registers = 32;
  const tune::testing::UncachedCompiles uncached;  // the log must carry ptxas's lines
  auto out = C::compile(C::kArch, source(text), c);
  REQUIRE_MESSAGE(out.ok(), out.status().to_string());
  const tune::KernelResources r = tune::gpu::parse_resource_log(out->log);
  CHECK_MESSAGE(r.registers > 0, out->log);  // the log reported them: the check below means it
  CHECK(r.registers <= 32);
}
TEST_CASE_TEMPLATE_APPLY(max_registers, Filter<ReportsResources, Compilers>::type);

TEST_CASE_TEMPLATE_DEFINE("resource lines of ptxas are parsed", C, resource_log) {
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
TEST_CASE_TEMPLATE_APPLY(resource_log, Filter<ReportsResources, Compilers>::type);
