// Precompiled SPIR-V (KernelSource::spirv): the configuration's definitions set the module's
// named specialization constants, checked against a CPU reference on random inputs; values
// that do not parse, modules that are not SPIR-V and compile options are refused, naming the
// culprit; a module without names keeps its defaults; a dimension of the workgroup size that
// the module fixes is checked against the block. The modules are built here with shaderc (as
// an application would build them offline). On lavapipe by default.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <shaderc/shaderc.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shader_compiler.hpp"
#include "skip.hpp"
#include "specialization.hpp"
#include "spirv_capabilities.hpp"
#include "spirv_modules.hpp"
#include "spirv_reflect.hpp"
#include "tune/kernels/bundled.hpp"
#include "tune/tune.hpp"
#include "tune/vulkan.hpp"
#include "vulkan_test_device.hpp"

namespace {

using namespace tune;
using tune::testing::open_vulkan_or_skip;

// y[i] = (NEGATE ? -1 : 1) * (SCALE * x[i] + OFFSET); info[0] = WIDE's low word, info[1] the
// workgroup's x size, info[2] = UNTOUCHED (never set by a definition: its default, 7).
const char* kScaleShader = R"(#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const int SCALE = 1;
layout(constant_id = 4) const float OFFSET = 0.0;
layout(constant_id = 5) const bool NEGATE = false;
layout(constant_id = 6) const uint UNTOUCHED = 7u;
layout(constant_id = 7) const uint WIDE = 0u;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(std430, binding = 2) writeonly buffer I { uint info[]; };
layout(push_constant) uniform P { uint n; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i == 0u) {
    info[0] = WIDE;
    info[1] = gl_WorkGroupSize.x;
    info[2] = UNTOUCHED;
  }
  if (i >= n) return;
  float v = float(SCALE) * x[i] + OFFSET;
  y[i] = NEGATE ? -v : v;
}
)";

// Only x's size is a specialization constant; y is fixed at 1.
const char* kFixedYShader = R"(#version 450
layout(local_size_x_id = 0, local_size_y = 1) in;
layout(std430, binding = 0) writeonly buffer O { uint o[]; };
void main() { o[gl_GlobalInvocationID.x] = gl_WorkGroupSize.x; }
)";

using testing::precompiled;
using testing::to_spirv;

// `words` without its OpName instructions (opcode 5): a module stripped of names.
std::vector<std::uint32_t> without_names(const std::vector<std::uint32_t>& words) {
  std::vector<std::uint32_t> out(words.begin(), words.begin() + 5);
  for (std::size_t i = 5; i < words.size();) {
    const std::uint32_t count = words[i] >> 16;
    if ((words[i] & 0xffffu) != 5u)
      out.insert(out.end(), words.begin() + i, words.begin() + i + count);
    i += count;
  }
  return out;
}

struct ScaleRun {
  std::vector<float> y;
  std::vector<std::uint32_t> info;
};

// Compiles `src` with `c` and runs it over `x`; the status when the compile fails.
Result<ScaleRun> run_scale(Device& dev, const KernelSource& src, const Config& c,
                           const std::vector<float>& x) {
  auto k = dev.compile(src, c);
  if (!k.ok()) return k.status();
  const auto n = static_cast<std::uint32_t>(x.size());
  auto bx = dev.alloc(n * 4), by = dev.alloc(n * 4), bi = dev.alloc(16);
  REQUIRE((bx.ok() && by.ok() && bi.ok()));
  REQUIRE(dev.upload(**bx, x.data(), n * 4).ok());
  const ArgValue args[] = {ArgValue::buf(**bx, ElemType::f32, n),
                           ArgValue::buf(**by, ElemType::f32, n),
                           ArgValue::buf(**bi, ElemType::u32, 4), ArgValue(n)};
  const std::uint32_t block = c.launch().block.x;
  REQUIRE(dev.launch(**k, {{(n + block - 1) / block, 1, 1}, c.launch().block, 0}, args).ok());
  ScaleRun out{std::vector<float>(n), std::vector<std::uint32_t>(4)};
  REQUIRE(dev.download(**by, out.y.data(), n * 4).ok());
  REQUIRE(dev.download(**bi, out.info.data(), 16).ok());
  return out;
}

Config scale_config(std::int64_t scale, std::string offset, bool negate, int block) {
  Config c;
  c.set("SCALE", Value{scale}).set("OFFSET", std::move(offset)).set("NEGATE", Value{negate});
  c.set("WIDE", Value{std::int64_t{4000000000}}).set(kBlockX, block);
  return c;
}

}  // namespace

TEST_CASE("vulkan spirv: the configuration sets the module's named specialization constants") {
  auto dev = open_vulkan_or_skip();
  const KernelSource src = precompiled(to_spirv(kScaleShader));
  std::mt19937 rng(20261206);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(1000);
  for (float& v : x) v = u(rng);
  struct Case {
    std::int64_t scale;
    const char* offset;
    bool negate;
    int block;
  };
  for (const Case& k : {Case{1, "0", false, 32}, Case{-3, "0.25", true, 64},
                        Case{7, "-1.5e1", false, 128}, Case{2, "3", true, 32}}) {
    const Config c = scale_config(k.scale, k.offset, k.negate, k.block);
    CAPTURE(c.to_string());
    auto r = run_scale(*dev, src, c, x);
    REQUIRE_MESSAGE(r.ok(), r.status().to_string());
    const float offset = std::stof(k.offset);
    for (std::size_t i = 0; i < x.size(); ++i) {
      const float v = static_cast<float>(k.scale) * x[i] + offset;
      CHECK(r->y[i] == doctest::Approx(k.negate ? -v : v).epsilon(1e-6));
    }
    CHECK(r->info[0] == 4000000000u);  // an unsigned 32-bit value above INT32_MAX
    CHECK(r->info[1] == static_cast<std::uint32_t>(k.block));
    CHECK(r->info[2] == 7u);  // no definition names it: the module's default
  }
}

TEST_CASE("vulkan spirv: a value that does not fit its constant's type is refused, named") {
  auto dev = open_vulkan_or_skip();
  const KernelSource src = precompiled(to_spirv(kScaleShader));
  const std::vector<float> x(64, 1.0f);
  struct Bad {
    Config c;
    const char* names;
  };
  for (const Bad& b :
       {Bad{scale_config(1, "abc", false, 32), "OFFSET"},
        Bad{scale_config(1, "", false, 32), "OFFSET"},
        Bad{scale_config(5000000000, "0", false, 32), "SCALE"},
        Bad{scale_config(1, "0", false, 32).set("SCALE", std::string("1.5")), "SCALE"},
        Bad{scale_config(1, "0", false, 32).set("NEGATE", std::string("2")), "NEGATE"},
        Bad{scale_config(1, "0", false, 32).set("WIDE", Value{std::int64_t{-1}}), "WIDE"}}) {
    CAPTURE(b.c.to_string());
    auto r = run_scale(*dev, src, b.c, x);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::invalid_argument);
    CHECK(r.status().message().find(b.names) != std::string::npos);
  }
}

TEST_CASE("vulkan spirv: a module without names keeps its defaults") {
  auto dev = open_vulkan_or_skip();
  const KernelSource src = precompiled(without_names(to_spirv(kScaleShader)));
  std::vector<float> x(100);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.5f;
  auto r = run_scale(*dev, src, scale_config(-3, "0.25", true, 32), x);
  REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  for (std::size_t i = 0; i < x.size(); ++i)
    CHECK(r->y[i] == x[i]);  // SCALE 1, OFFSET 0, no negation
  CHECK(r->info[0] == 0u);
  CHECK(r->info[1] == 32u);  // the workgroup size does not go by name
}

TEST_CASE("vulkan spirv: what is not a usable module is refused with the reason") {
  auto dev = open_vulkan_or_skip();
  const Config c = scale_config(1, "0", false, 32);
  SUBCASE("not SPIR-V") {
    auto k = dev->compile(precompiled({1, 2, 3, 4, 5, 6}), c);
    REQUIRE_FALSE(k.ok());
    CHECK(k.status().code() == StatusCode::invalid_argument);
    CHECK(k.status().message().find("KernelSource::spirv") != std::string::npos);
  }
  SUBCASE("truncated, at an instruction's boundary or inside one") {
    const auto words = to_spirv(kScaleShader);
    for (std::size_t cut : {std::size_t{1}, std::size_t{2}, words.size() / 2}) {
      CAPTURE(cut);
      auto k = dev->compile(
          precompiled(std::vector<std::uint32_t>(words.begin(), words.end() - cut)), c);
      REQUIRE_FALSE(k.ok());
      CHECK(k.status().code() == StatusCode::invalid_argument);
      CHECK(k.status().message().find("truncated") != std::string::npos);
    }
  }
  SUBCASE("compile options with a module that is not compiled") {
    KernelSource src = precompiled(to_spirv(kScaleShader));
    src.options = {"-O0"};
    auto k = dev->compile(src, c);
    REQUIRE_FALSE(k.ok());
    CHECK(k.status().code() == StatusCode::invalid_argument);
    CHECK(k.status().message().find("options") != std::string::npos);
  }
}

TEST_CASE("vulkan spirv: a workgroup dimension the module fixes must match the block") {
  auto dev = open_vulkan_or_skip();
  for (bool as_spirv : {false, true}) {
    CAPTURE(as_spirv);
    KernelSource src;
    if (as_spirv) {
      src = precompiled(to_spirv(kFixedYShader));
    } else {
      src.language = Language::glsl;
      src.text = kFixedYShader;
    }
    Config ok;
    ok.set(kBlockX, 16).set(kBlockY, 1);
    auto k = dev->compile(src, ok);
    REQUIRE_MESSAGE(k.ok(), k.status().to_string());
    auto o = dev->alloc(32 * 4);
    REQUIRE(o.ok());
    const ArgValue args[] = {ArgValue::buf(**o, ElemType::u32, 32)};
    REQUIRE(dev->launch(**k, {{2, 1, 1}, ok.launch().block, 0}, args).ok());
    std::vector<std::uint32_t> out(32);
    REQUIRE(dev->download(**o, out.data(), 32 * 4).ok());
    for (std::uint32_t v : out) CHECK(v == 16u);
    Config bad;
    bad.set(kBlockX, 16).set(kBlockY, 2);  // y is fixed at 1 in the shader
    auto refused = dev->compile(src, bad);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().code() == StatusCode::invalid_argument);
    CHECK_MESSAGE(refused.status().message().find("fixes its workgroup size's y at 1 (asked 2)") !=
                      std::string::npos,
                  refused.status().to_string());
  }
}

TEST_CASE("vulkan spirv: reflection names each specialization constant, its id and type") {
  auto si = vk::reflect_spirv(to_spirv(kScaleShader));
  REQUIRE(si.ok());
  using K = vk::SpecConstant::Kind;
  struct Want {
    std::uint32_t id;
    const char* name;
    K kind;
  };
  const Want want[] = {{3, "SCALE", K::signed_int},
                       {4, "OFFSET", K::floating},
                       {5, "NEGATE", K::boolean},
                       {6, "UNTOUCHED", K::unsigned_int},
                       {7, "WIDE", K::unsigned_int}};
  std::vector<vk::SpecConstant> named;
  for (const auto& c : si->spec_constants)
    if (c.spec_id >= 3) named.push_back(c);
  REQUIRE(named.size() == std::size(want));
  for (std::size_t i = 0; i < named.size(); ++i) {
    CAPTURE(i);
    CHECK(named[i].spec_id == want[i].id);
    CHECK(named[i].name == want[i].name);
    CHECK(named[i].kind == want[i].kind);
    CHECK(named[i].bytes == 4u);
  }
  CHECK(si->local_size_spec_id[0] == 0u);
  CHECK(si->local_size_spec_id[1] == 1u);
  CHECK(si->local_size_spec_id[2] == 2u);
  auto fixed = vk::reflect_spirv(to_spirv(kFixedYShader));
  REQUIRE(fixed.ok());
  CHECK(fixed->local_size_spec_id[0] == 0u);
  CHECK(fixed->local_size_spec_id[1] == vk::SpirvInfo::kFixed);
  CHECK(fixed->local_size_spec_id[2] == vk::SpirvInfo::kFixed);
}

TEST_CASE("vulkan spirv: the module's words are part of the source's hash") {
  const auto words = to_spirv(kScaleShader);
  KernelSource a = precompiled(words), b = precompiled(words),
               c = precompiled(without_names(words));
  CHECK(a.hash() == b.hash());
  CHECK(a.hash() != c.hash());
  KernelSource text_only;
  text_only.language = Language::glsl;
  CHECK(a.hash() != text_only.hash());
}

TEST_CASE("vulkan spirv: a module built for another target or entry point is refused") {
  auto dev = open_vulkan_or_skip();
  const Config c = scale_config(1, "0", false, 32);
  SUBCASE("no compute entry point named main") {
    auto words = to_spirv(kScaleShader);
    bool renamed = false;
    for (std::size_t i = 5; i < words.size() && !renamed;) {
      const std::uint32_t count = words[i] >> 16;
      if ((words[i] & 0xffffu) == 15u) {  // OpEntryPoint: model, function, "main\0" at word 3
        words[i + 3] = 0x6e69616du ^ 0x00000100u;  // "main" -> "mbin"
        renamed = true;
      }
      i += count;
    }
    REQUIRE(renamed);
    auto k = dev->compile(precompiled(words), c);
    REQUIRE_FALSE(k.ok());
    CHECK(k.status().code() == StatusCode::invalid_argument);
    CHECK(k.status().message().find("entry point") != std::string::npos);
  }
}

TEST_CASE("vulkan spirv: values parse exactly as their constant's type, 64-bit ones too") {
  using K = vk::SpecConstant::Kind;
  vk::SpirvInfo si;
  si.spec_constants = {{10, "U64", K::unsigned_int, 8},
                       {11, "I64", K::signed_int, 8},
                       {12, "F32", K::floating, 4},
                       {13, "F64", K::floating, 8},
                       {14, "H16", K::unsupported, 2}};
  const auto make = [&](const char* name, const char* value) {
    return vk::make_specialization(si, Dim3{}, {Definition{name, value}}, true);
  };
  auto u = make("U64", "18446744073709551615");
  REQUIRE(u.ok());
  const VkSpecializationInfo* info = u->info();
  REQUIRE(info != nullptr);
  REQUIRE(info->mapEntryCount == 1u);
  CHECK(info->pMapEntries[0].constantID == 10u);
  CHECK(info->pMapEntries[0].size == 8u);
  std::uint64_t got = 0;
  std::memcpy(&got, info->pData, 8);
  CHECK(got == 18446744073709551615ull);
  auto i = make("I64", "-9000000000");
  REQUIRE(i.ok());
  std::int64_t gi = 0;
  std::memcpy(&gi, i->info()->pData, 8);
  CHECK(gi == -9000000000ll);
  auto f = make("F64", "0.1");
  REQUIRE(f.ok());
  double gd = 0;
  std::memcpy(&gd, f->info()->pData, 8);
  CHECK(gd == 0.1);
  // Not a structured binding: clang 14 cannot capture one in CAPTURE's lambda.
  for (const auto& bad :
       std::vector<std::pair<const char*, const char*>>{{"U64", "-1"},
                                                        {"U64", " 1"},
                                                        {"U64", "+1"},
                                                        {"U64", "18446744073709551616"},
                                                        {"I64", "1.0"},
                                                        {"F32", "1e39"},
                                                        {"F32", "nan"},
                                                        {"F32", "inf"},
                                                        {"F64", "0,5"},
                                                        {"H16", "1"}}) {
    const char* name = bad.first;
    const char* value = bad.second;
    CAPTURE(name);
    CAPTURE(value);
    auto r = make(name, value);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::invalid_argument);
    CHECK(r.status().message().find(name) != std::string::npos);
  }
  // A definition naming no constant sets nothing.
  auto none = make("ABSENT", "1");
  REQUIRE(none.ok());
  CHECK(none->info() == nullptr);
}

TEST_CASE("vulkan spirv: the SPIR-V a device takes follows its Vulkan version and maintenance4") {
  using Limits = vk::ShaderCompiler::ModuleLimits;
  const auto limits = [](std::uint32_t api, bool m4) {
    const Limits l = vk::ShaderCompiler::module_limits(api, m4);
    return std::pair{l.max_version, l.local_size_id};
  };
  CHECK(limits(VK_API_VERSION_1_1, false) == std::pair{0x00010300u, false});
  CHECK(limits(VK_API_VERSION_1_2, false) == std::pair{0x00010500u, false});
  CHECK(limits(VK_API_VERSION_1_3, false) == std::pair{0x00010600u, false});
  CHECK(limits(VK_API_VERSION_1_3, true) == std::pair{0x00010600u, true});
  CHECK(limits(VK_MAKE_API_VERSION(0, 1, 4, 312), true) == std::pair{0x00010600u, true});
  CHECK(limits(VK_API_VERSION_1_2, true) == std::pair{0x00010500u, false});  // no 1.3: no m4
}

TEST_CASE("vulkan spirv: a SPIR-V 1.6 module (LocalSizeId) runs on a Vulkan 1.3 device") {
  auto dev = open_vulkan_or_skip();
  const auto words = to_spirv(kScaleShader, shaderc_env_version_vulkan_1_3);
  auto si = vk::reflect_spirv(words);
  REQUIRE(si.ok());
  CHECK(si->version == 0x00010600u);
  CHECK(si->uses_local_size_id);
  CHECK(si->local_size_spec_id[0] == 0u);
  CHECK(si->local_size_spec_id[1] == 1u);
  CHECK(si->local_size_spec_id[2] == 2u);
  const auto diag = vulkan::diagnostics(*dev);
  REQUIRE(diag.has_value());
  std::vector<float> x(500);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) - 250.0f;
  for (int block : {32, 64, 128}) {
    CAPTURE(block);
    auto r = run_scale(*dev, precompiled(words), scale_config(3, "0.5", true, block), x);
    if (diag->api_version < VK_API_VERSION_1_3) {  // its Vulkan version does not take 1.6
      REQUIRE_FALSE(r.ok());
      CHECK(r.status().code() == StatusCode::invalid_argument);
      CHECK(r.status().message().find("SPIR-V 1.6") != std::string::npos);
      continue;
    }
    // Vulkan 1.3 guarantees maintenance4, and libtune enables it on its own devices.
    REQUIRE_MESSAGE(r.ok(), r.status().to_string());
    for (std::size_t i = 0; i < x.size(); ++i) CHECK(r->y[i] == -(3.0f * x[i] + 0.5f));
    CHECK(r->info[1] == static_cast<std::uint32_t>(block));  // through LocalSizeId's spec id 0
  }
}

namespace tune::kernels::glsl {
extern const char* const k_matmul_f16_coopmat2_comp_sha256;
extern const char* const k_matmul_f16_coopmat2_spv_built_from;
extern const char* const k_matmul_f16_coopmat2_spv_sha256;
extern const char* const k_matmul_f16_coopmat2_spv_stamped;
extern const char* const k_matmul_bf16_coopmat2_comp_sha256;
extern const char* const k_matmul_bf16_coopmat2_spv_built_from;
extern const char* const k_matmul_bf16_coopmat2_spv_sha256;
extern const char* const k_matmul_bf16_coopmat2_spv_stamped;
}  // namespace tune::kernels::glsl

namespace {

// A precompiled bundled module's hashes: its source's and its own, now and as its stamp
// (kernels/vulkan/<name>.spv.txt) recorded them.
struct ModuleStamp {
  const char* name;
  const char* source_now;
  const char* source_stamped;
  const char* module_now;
  const char* module_stamped;
};

// The coopmat2 kernels' element type names a workgroup-scope list of DeviceInfo.
std::vector<WorkgroupMatrixShape>& workgroup_list(DeviceInfo& dev, std::string_view kernel) {
  return kernel.starts_with("matmul_bf16") ? dev.workgroup_matrix_bf16 : dev.workgroup_matrix_f16;
}

}  // namespace

TEST_CASE("vulkan spirv: the bundled coopmat2 modules were built from their source as it is") {
  // kernels/vulkan/<name>.spv.txt records the SHA-256 of the .comp the module was built from
  // (both modules come from matmul_coopmat2.comp) and of the module; the build embeds both
  // files' current ones.
  namespace g = kernels::glsl;
  const ModuleStamp stamps[] = {
      {"matmul_f16_coopmat2", g::k_matmul_f16_coopmat2_comp_sha256,
       g::k_matmul_f16_coopmat2_spv_built_from, g::k_matmul_f16_coopmat2_spv_sha256,
       g::k_matmul_f16_coopmat2_spv_stamped},
      {"matmul_bf16_coopmat2", g::k_matmul_bf16_coopmat2_comp_sha256,
       g::k_matmul_bf16_coopmat2_spv_built_from, g::k_matmul_bf16_coopmat2_spv_sha256,
       g::k_matmul_bf16_coopmat2_spv_stamped}};
  for (const ModuleStamp& m : stamps) {
    CAPTURE(m.name);
    CHECK_MESSAGE(std::string(m.source_now) == m.source_stamped,
                  "kernels/vulkan/matmul_coopmat2.comp changed since "
                      << m.name
                      << ".spv was built: run "
                         "scripts/build-coopmat2-spirv.sh");
    CHECK_MESSAGE(std::string(m.module_now) == m.module_stamped,
                  "kernels/vulkan/" << m.name
                                    << ".spv is not the module its stamp records: run "
                                       "scripts/build-coopmat2-spirv.sh");
  }
  CHECK(std::string(g::k_matmul_f16_coopmat2_spv_sha256) != g::k_matmul_bf16_coopmat2_spv_sha256);
}

TEST_CASE("vulkan spirv: the bundled coopmat2 modules' reflection") {
  for (const char* name : {"matmul_f16_coopmat2", "matmul_bf16_coopmat2"}) {
    CAPTURE(name);
    const bool bf16 = std::string_view(name).starts_with("matmul_bf16");
    const auto k = kernels::bundled_kernel(Language::glsl, name);
    REQUIRE(k.has_value());
    const KernelSource* src = k->def.source_for(Language::glsl);
    REQUIRE(src != nullptr);
    REQUIRE_FALSE(src->spirv.empty());
    auto si = vk::reflect_spirv(src->spirv);
    REQUIRE_MESSAGE(si.ok(), si.status().to_string());
    CHECK(si->version == 0x00010600u);
    CHECK(si->has_compute_main);
    CHECK(si->uses_local_size_id);
    CHECK(si->workgroup_scope_matrices);
    CHECK(si->local_size_spec_id[0] == 0u);  // the configuration's block.x
    CHECK(si->local_size_spec_id[1] == vk::SpirvInfo::kFixed);
    CHECK(si->local_size[1] == 1u);
    CHECK(si->bindings == std::vector<std::uint32_t>{0, 1, 2});
    CHECK(si->push.size() == 3);
    std::vector<std::string> names;
    for (const vk::SpecConstant& c : si->spec_constants)
      if (!c.name.empty()) names.push_back(c.name);
    CHECK(names == std::vector<std::string>{"BM", "BN", "BK", "GROUP_M", "UNROLL"});
    const auto has = [&](std::uint32_t cap) {
      return std::find(si->capabilities.begin(), si->capabilities.end(), cap) !=
             si->capabilities.end();
    };
    for (std::uint32_t cap : {vk::spv_cap::kCooperativeMatrixKHR, vk::spv_cap::kTensorAddressingNV,
                              vk::spv_cap::kCooperativeMatrixTensorAddressingNV}) {
      CAPTURE(cap);
      CHECK(has(cap));
    }
    // The element type: bf16 matrices (and no 16-bit storage), or f16 ones.
    CHECK(has(vk::spv_cap::kBFloat16TypeKHR) == bf16);
    CHECK(has(vk::spv_cap::kBFloat16CooperativeMatrixKHR) == bf16);
    CHECK(has(vk::spv_cap::kStorageBuffer16BitAccess) == !bf16);
    // Every point of the space, on a device offering every workgroup size for this element
    // type, sets exactly the module's named constants (its workgroup size goes by spec id 0);
    // none on a device offering only the other type.
    DeviceInfo h200;
    h200.max_threads_per_block = 1024;
    h200.max_block = {1024, 1024, 64};
    DeviceInfo other = h200;
    for (std::uint32_t t : {64u, 128u, 256u}) {
      const WorkgroupMatrixShape shape{t, {t < 128 ? 16u : 32u, t < 256 ? 16u : 32u, 16}, 1024};
      workgroup_list(h200, name).push_back(shape);
      workgroup_list(other, bf16 ? "matmul_f16" : "matmul_bf16").push_back(shape);
    }
    auto configs = k->def.space.enumerate(h200);
    REQUIRE(configs.ok());
    CHECK(configs->size() == 204);
    for (const Config& c : *configs) {
      CAPTURE(c.to_string());
      std::vector<std::string> params;
      for (const auto& p : c.params()) params.push_back(p.first);
      std::sort(params.begin(), params.end());
      CHECK(params == std::vector<std::string>{"BK", "BM", "BN", "GROUP_M", "UNROLL"});
    }
    auto none = k->def.space.enumerate(other);
    REQUIRE(none.ok());
    CHECK(none->empty());
  }
}

namespace {

// The bundled coopmat2 kernel `name` on a device without its matrices: compiling it is
// refused as unavailable, naming a capability of the extensions the module needs (`extension`:
// a part of their names, as capability_name writes them).
void check_refused_where_lacking(const char* name, std::string_view extension) {
  auto dev = open_vulkan_or_skip();
  DeviceInfo info = dev->info();
  if (!workgroup_list(info, name).empty())
    TUNE_SKIP(info.name + " runs " + name + " (conformance runs the kernel)");
  const auto k = kernels::bundled_kernel(Language::glsl, name);
  REQUIRE(k.has_value());
  auto ck = dev->compile(*k->def.source_for(Language::glsl), k->default_config);
  REQUIRE_FALSE(ck.ok());
  CHECK(ck.status().code() == StatusCode::unavailable);
  CHECK_MESSAGE(ck.status().message().find("does not support") != std::string::npos,
                ck.status().to_string());
  CHECK_MESSAGE(ck.status().message().find(extension) != std::string::npos,
                ck.status().to_string());
}

}  // namespace

TEST_CASE("vulkan spirv: the bundled coopmat2 module is refused where the device lacks it") {
  check_refused_where_lacking("matmul_f16_coopmat2", "cooperative_matrix");
}

TEST_CASE("vulkan spirv: the bundled bf16 coopmat2 module is refused where the device lacks it") {
  // On lavapipe: BFloat16TypeKHR, the first capability it lacks (Float16 comes before it).
  check_refused_where_lacking("matmul_bf16_coopmat2", "(VK_");
}

TEST_CASE("vulkan spirv: a named constant that sets the workgroup size is the kernel's size") {
  // WG and the workgroup size share SpecId 0: a definition of WG sets both.
  const char* shader = R"(#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 32;
layout(std430, binding = 0) writeonly buffer O { uint o[]; };
void main() { o[gl_GlobalInvocationID.x] = gl_WorkGroupSize.x + 1000u * WG; }
)";
  auto dev = open_vulkan_or_skip();
  for (std::uint32_t wg : {16u, 64u}) {
    CAPTURE(wg);
    Config c;
    c.set("WG", static_cast<std::int64_t>(wg));  // no block: the module decides
    auto k = dev->compile(precompiled(to_spirv(shader)), c);
    REQUIRE_MESSAGE(k.ok(), k.status().to_string());
    CHECK((*k)->resources().max_threads == wg);
    auto o = dev->alloc(wg * 4);
    REQUIRE(o.ok());
    const ArgValue args[] = {ArgValue::buf(**o, ElemType::u32, wg)};
    REQUIRE(dev->launch(**k, {{1, 1, 1}, {wg, 1, 1}, 0}, args).ok());
    std::vector<std::uint32_t> out(wg);
    REQUIRE(dev->download(**o, out.data(), wg * 4).ok());
    for (std::uint32_t v : out) CHECK(v == wg + 1000u * wg);
  }
}
