// Conformance: the two launch features of the matrix-unit kernels, the same on every backend.
//   subgroup_size: a size in the device's range (DeviceInfo::min/max_subgroup_size) compiles,
//     runs with that size (the kernel reads it back) and verifies; any other size, and every
//     size where the device allows none, is refused before compiling (unavailable, naming the
//     request and the range).
//   matmul_f16_coopmat (Vulkan, VK_NV_cooperative_matrix), matmul_f16_coopmat2
//     (VK_NV_cooperative_matrix2) and matmul_bf16_coopmat2 (with VK_KHR_shader_bfloat16): every
//     configuration the device offers is verified at every test size; a device that reports no
//     shape refuses the tuning with the reason (the constraint naming the extension).
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "conformance_device.hpp"
#include "skip.hpp"
#include "tune/kernels/bundled.hpp"
#include "tune/tune.hpp"

namespace {

using namespace tune;

// A kernel that writes the subgroup size it runs with to out[0], in the device's language.
KernelSource subgroup_size_source(Language lang) {
  if (lang == Language::glsl) {
    return {Language::glsl, "main",
            "#version 450\n#extension GL_KHR_shader_subgroup_basic : require\n"
            "layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;\n"
            "layout(std430, binding = 0) buffer Out { uint o[]; };\n"
            "void main() { if (gl_GlobalInvocationID.x == 0u) o[0] = gl_SubgroupSize; }\n"};
  }
  return {lang, "subgroup_size_probe",
          "extern \"C\" __global__ void subgroup_size_probe(unsigned* o) {\n"
          "  if (threadIdx.x == 0 && blockIdx.x == 0) o[0] = warpSize;\n}\n"};
}

bool in_range(std::uint32_t s, const DeviceInfo& info) {
  return info.max_subgroup_size != 0 && s >= info.min_subgroup_size &&
         s <= info.max_subgroup_size && (s & (s - 1)) == 0;
}

// What a tuning may run: the device's choice (0) or a size in its range.
bool runnable(std::uint32_t s, const DeviceInfo& info) { return s == 0 || in_range(s, info); }

}  // namespace

TEST_CASE("launch options: subgroup_size is honoured in the device's range, refused outside") {
  auto dev = tune::testing::open_conformance_device();
  const DeviceInfo& info = dev->info();
  MESSAGE(info.name << ": subgroup sizes " << info.min_subgroup_size << ".."
                    << info.max_subgroup_size << " (default " << info.warp_size << ")");
  auto out = dev->alloc(4);
  REQUIRE(out.ok());
  const std::vector<ArgValue> args = {ArgValue::buf(**out, ElemType::u32, 1)};
  int honoured = 0;
  for (std::uint32_t s : {1u, 3u, 4u, 8u, 16u, 32u, 64u, 128u}) {
    CAPTURE(s);
    Config c;
    c.launch().block = {128, 1, 1};
    c.launch().subgroup_size = s;
    auto k = dev->compile(subgroup_size_source(dev->language()), c);
    if (!in_range(s, info)) {
      REQUIRE_FALSE(k.ok());
      CHECK(k.status().code() == StatusCode::unavailable);
      CHECK_MESSAGE(
          k.status().message().find("subgroup_size " + std::to_string(s)) != std::string::npos,
          k.status().message());
      continue;
    }
    REQUIRE_MESSAGE(k.ok(), k.status().to_string());
    REQUIRE(dev->fill(**out, 0, 4).ok());
    REQUIRE(dev->launch(**k, {{1, 1, 1}, {128, 1, 1}}, args).ok());
    std::uint32_t seen = 0;
    REQUIRE(dev->download(**out, &seen, 4).ok());
    CHECK(seen == s);
    ++honoured;
  }
  if (honoured == 0) MESSAGE("no subgroup size can be chosen on " << info.name);
}

TEST_CASE("launch options: subgroup_size through the Autotuner: refused points cost nothing") {
  auto dev = tune::testing::open_conformance_device();
  const std::optional<kernels::BundledKernel> k =
      kernels::bundled_kernel(dev->language(), "vector_add");
  REQUIRE(k.has_value());
  KernelDef def = k->def;
  std::vector<Config> configs;
  for (std::uint32_t s : {0u, 3u, 4u, 8u, 16u, 32u, 64u}) {
    Config c = k->default_config;
    c.launch().subgroup_size = s;
    configs.push_back(c);
  }
  def.space = ConfigSpace::list(configs);
  AutotunerOptions o;
  o.persistent = false;
  o.print = false;
  o.bench.warmup_ms = 0.5;
  o.bench.rep_ms = 1;
  TuningReport seen;
  o.listener = [&](const TuningReport& r) { seen = r; };
  auto tuner = Autotuner::make(def, o);
  REQUIRE(tuner.ok());
  auto w = k->workload(std::vector<std::int64_t>{4099});
  REQUIRE(w->setup(*dev, 5).ok());
  auto best = (*tuner)->tune(*dev, w->args());
  REQUIRE_MESSAGE(best.ok(), best.status().to_string());
  CHECK(runnable(best->launch().subgroup_size, dev->info()));
  for (const ConfigResult& r : seen.results) {
    CAPTURE(r.config.to_string());
    if (runnable(r.config.launch().subgroup_size, dev->info())) {
      CHECK_MESSAGE(r.status.ok(), r.status.to_string());
    } else {
      CHECK(r.status.code() == StatusCode::unavailable);
    }
  }
  REQUIRE(w->poison_outputs(*dev).ok());
  REQUIRE((*tuner)->run(*dev, w->args()).ok());
  const Status cs = w->check(*dev);
  CHECK_MESSAGE(cs.ok(), cs.to_string());
  tuner->reset();
}

namespace {

// Every configuration of the bundled kernel `name` that the device offers, verified at every
// test size; where it offers none, the tuning refused with the constraint naming `extension`.
void verify_or_refused(const std::string& name, const std::string& extension) {
  auto dev = tune::testing::open_conformance_device();
  const std::optional<kernels::BundledKernel> k = kernels::bundled_kernel(dev->language(), name);
  if (!k) TUNE_SKIP(name + " is Vulkan's (CUDA's matrix units: matmul_wgmma_*)");
  auto configs = k->def.space.enumerate(dev->info());
  REQUIRE(configs.ok());
  if (configs->empty()) {
    // The refusal a user meets: the tuning fails and says which constraint removed everything.
    AutotunerOptions o;
    o.persistent = false;
    o.print = false;
    auto tuner = Autotuner::make(k->def, o);
    REQUIRE(tuner.ok());
    auto w = k->workload(k->test_sizes.front());
    REQUIRE(w->setup(*dev, 7).ok());
    auto best = (*tuner)->tune(*dev, w->args());
    REQUIRE_FALSE(best.ok());
    CHECK_MESSAGE(best.status().message().find(extension) != std::string::npos,
                  best.status().to_string());
    tuner->reset();
    TUNE_SKIP(dev->info().name + " offers no configuration of " + name + ": " +
              best.status().message());
  }
  MESSAGE(configs->size() << " configurations of " << name << " on " << dev->info().name);
  const KernelSource* src = k->def.source_for(dev->language());
  REQUIRE(src != nullptr);
  // Each configuration compiled once (a pipeline takes 0.1-0.5 s on the NVIDIA driver), then
  // run on every test size.
  std::vector<std::unique_ptr<kernels::Workload>> workloads;
  std::uint64_t seed = 77;
  for (const auto& size : k->test_sizes) {
    workloads.push_back(k->workload(size));
    REQUIRE(workloads.back()->setup(*dev, seed++).ok());
  }
  for (const Config& c : *configs) {
    CAPTURE(c.to_string());
    auto ck = dev->compile(*src, c);
    REQUIRE_MESSAGE(ck.ok(), ck.status().to_string());
    for (std::size_t i = 0; i < workloads.size(); ++i) {
      const auto& size = k->test_sizes[i];
      CAPTURE(size[0]);
      CAPTURE(size[1]);
      CAPTURE(size[2]);
      kernels::Workload& w = *workloads[i];
      REQUIRE(w.poison_outputs(*dev).ok());
      REQUIRE(dev->launch(**ck, k->def.dims(c, w.args()), w.args()).ok());
      const Status cs = w.check(*dev);
      CHECK_MESSAGE(cs.ok(), cs.to_string());
    }
  }
}

}  // namespace

TEST_CASE("matrix units: matmul_f16_coopmat verified everywhere it is offered, refused elsewhere") {
  verify_or_refused("matmul_f16_coopmat", "VK_NV_cooperative_matrix");
}

TEST_CASE(
    "matrix units: matmul_f16_coopmat2 verified everywhere it is offered, refused elsewhere") {
  verify_or_refused("matmul_f16_coopmat2", "VK_NV_cooperative_matrix2");
}

TEST_CASE(
    "matrix units: matmul_bf16_coopmat2 verified everywhere it is offered, refused elsewhere") {
  verify_or_refused("matmul_bf16_coopmat2", "VK_KHR_shader_bfloat16");
}
