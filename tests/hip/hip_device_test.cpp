// The HIP device on real hardware (no AMD GPU exists on our machines: these skip with the
// reason there, and would run unchanged on one): every bundled kernel's configurations verified
// on the test sizes, and timing returns one positive sample per rep.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "skip.hpp"
#include "tune/kernels/bundled.hpp"
#include "tune/tune.hpp"

namespace {

std::unique_ptr<tune::Device> open_or_skip() {
  auto dev = tune::open_device("hip");
  if (!dev.ok()) TUNE_SKIP("no HIP device: " + dev.status().to_string());
  return std::move(*dev);
}

void verify_every_config(const std::string& name) {
  auto dev = open_or_skip();
  for (const auto& k : tune::kernels::bundled_kernels(tune::Language::cuda_hip)) {
    if (k.name != name) continue;
    auto configs = k.def.space.enumerate(dev->info());
    REQUIRE(configs.ok());
    const tune::KernelSource* src = k.def.source_for(tune::Language::cuda_hip);
    for (const auto& sizes : k.test_sizes) {
      auto w = k.workload(sizes);
      REQUIRE(w->setup(*dev, 4321).ok());
      for (const auto& c : *configs) {
        INFO(name << " " << w->size_text() << " " << c.to_string());
        auto ck = dev->compile(*src, c);
        REQUIRE_MESSAGE(ck.ok(), ck.status().to_string());
        REQUIRE(w->poison_outputs(*dev).ok());
        for (const auto& z : k.def.reset_to_zero) {
          auto& arg = w->args()[static_cast<std::size_t>(k.def.signature.index_of(z))];
          REQUIRE(dev->fill(*arg.buffer, 0, arg.buffer->size_bytes(), 0).ok());
        }
        REQUIRE(dev->launch(**ck, k.def.dims(c, w->args()), w->args()).ok());
        tune::Status v = w->check(*dev);
        CHECK_MESSAGE(v.ok(), v.to_string());
      }
    }
    std::printf("%s: %zu configurations verified on %s\n", name.c_str(), configs->size(),
                dev->info().name.c_str());
  }
}

}  // namespace

TEST_CASE("device info comes from hipGetDeviceProperties") {
  auto dev = open_or_skip();
  const tune::DeviceInfo& i = dev->info();
  CHECK(i.backend == "hip");
  CHECK(i.arch.rfind("gfx", 0) == 0);
  CHECK(i.compute_units > 0);
  CHECK((i.warp_size == 32 || i.warp_size == 64));
}

TEST_CASE("vector_add: every configuration verified") { verify_every_config("vector_add"); }
TEST_CASE("reduce_sum: every configuration verified") { verify_every_config("reduce_sum"); }
TEST_CASE("matmul_f32: every configuration verified") { verify_every_config("matmul_f32"); }
TEST_CASE("matmul_f16: every configuration verified") { verify_every_config("matmul_f16"); }

TEST_CASE("time() returns one positive sample per rep") {
  auto dev = open_or_skip();
  auto all = tune::kernels::bundled_kernels(tune::Language::cuda_hip);
  const auto& k = all.front();
  auto ck = dev->compile(*k.def.source_for(tune::Language::cuda_hip), k.default_config);
  REQUIRE(ck.ok());
  auto w = k.workload(std::vector<std::int64_t>{1 << 20});
  REQUIRE(w->setup(*dev, 1).ok());
  tune::TimingPlan plan;
  plan.reps = 5;
  auto t = dev->time(**ck, k.def.dims(k.default_config, w->args()), w->args(), plan);
  REQUIRE(t.ok());
  CHECK(t->size() == 5);
  for (double ns : *t) CHECK(ns > 0);
}
