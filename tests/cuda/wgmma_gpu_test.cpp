// The sm_90 wgmma matmuls on an H100/H200: every configuration of their space against the CPU
// reference on random inputs (ragged, odd and skinny shapes, fp16 and bf16), the tensor maps
// re-encoded when a later call passes other buffers, a shape TMA cannot address refused with
// the reason, the Autotuner's winner correct, and its cache hits allocating nothing. Each case
// skips with the reason without a CUDA device or on another architecture; a watchdog turns a
// pipeline deadlock (an mbarrier never completing) into a failure. Never asserts which
// configuration is faster.
#include <doctest/doctest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "allocation_counter.hpp"
#include "gpu_tuner.hpp"
#include "skip.hpp"
#include "tune/kernels/bundled.hpp"
#include "tune/tune.hpp"
#include "watchdog.hpp"

namespace {

using tune::kernels::BundledKernel;

const char* const kWgmmaKernels[] = {"matmul_wgmma_f16", "matmul_wgmma_bf16"};

std::unique_ptr<tune::Device> open_hopper_or_skip() {
  auto dev = tune::testing::open_cuda_or_skip();
  const std::string arch = dev->info().arch;
  if (arch != "sm_90") TUNE_SKIP("the wgmma matmuls need an sm_90 GPU; this one is " + arch);
  return dev;
}

BundledKernel wgmma_kernel(const char* name) {
  auto k = tune::kernels::bundled_kernel(tune::Language::cuda_hip, name);
  REQUIRE_MESSAGE(k.has_value(), std::string(name) << " is not bundled");
  return std::move(*k);
}

std::string size_name(const std::vector<std::int64_t>& s) {
  return std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" + std::to_string(s[2]);
}

// Every configuration on every size: compiled once, launched on poisoned outputs, checked.
void check_every_config(const char* name) {
  auto dev = open_hopper_or_skip();
  const BundledKernel k = wgmma_kernel(name);
  const tune::KernelSource& src = *k.def.source_for(tune::Language::cuda_hip);
  auto configs = k.def.space.enumerate(dev->info());
  REQUIRE_MESSAGE(configs.ok(), configs.status().to_string());
  REQUIRE(configs->size() >= 24);
  std::vector<std::unique_ptr<tune::CompiledKernel>> compiled;
  for (const tune::Config& c : *configs) {
    auto ck = dev->compile(src, c);
    REQUIRE_MESSAGE(ck.ok(), c.to_string() << ": " << ck.status().to_string());
    std::printf("%s %s: %s\n", name, c.to_string().c_str(), (*ck)->resources().to_string().c_str());
    compiled.push_back(std::move(*ck));
  }
  // The bundled test sizes (ragged M; N and K multiples of 8 but not of the tiles), a skinny K,
  // and a square one of several waves of persistent tiles.
  std::vector<std::vector<std::int64_t>> sizes = k.test_sizes;
  sizes.push_back({2048, 1024, 512});
  sizes.push_back({1536, 1536, 1536});
  std::uint64_t seed = 77;
  for (const auto& size : sizes) {
    auto w = k.workload(size);
    REQUIRE(w->setup(*dev, seed++).ok());
    for (std::size_t i = 0; i < configs->size(); ++i) {
      const tune::Config& c = (*configs)[i];
      CAPTURE(c.to_string());
      CAPTURE(size_name(size));
      const tune::testing::Watchdog dog(
          std::string(name) + " " + c.to_string() + " at " + size_name(size), 60);
      REQUIRE(w->poison_outputs(*dev).ok());
      const tune::Status ls = dev->launch(*compiled[i], k.def.dims(c, w->args()), w->args());
      REQUIRE_MESSAGE(ls.ok(), ls.to_string());
      const tune::Status cs = w->check(*dev);
      CHECK_MESSAGE(cs.ok(), cs.to_string());
    }
  }
  compiled.clear();  // before the device
}

}  // namespace

TEST_CASE("every wgmma configuration is correct: fp16") { check_every_config(kWgmmaKernels[0]); }
TEST_CASE("every wgmma configuration is correct: bf16") { check_every_config(kWgmmaKernels[1]); }

TEST_CASE("a later call on other buffers and sizes gets tensor maps for them") {
  auto dev = open_hopper_or_skip();
  const BundledKernel k = wgmma_kernel("matmul_wgmma_f16");
  auto ck = dev->compile(*k.def.source_for(tune::Language::cuda_hip), k.default_config);
  REQUIRE_MESSAGE(ck.ok(), ck.status().to_string());
  const tune::testing::Watchdog dog("matmul_wgmma_f16 on changing buffers", 60);
  // Same sizes on new buffers, then other sizes, then the first buffers again.
  auto first = k.workload(std::vector<std::int64_t>{512, 256, 128});
  auto second = k.workload(std::vector<std::int64_t>{512, 256, 128});
  auto third = k.workload(std::vector<std::int64_t>{300, 520, 264});
  REQUIRE(first->setup(*dev, 1).ok());
  REQUIRE(second->setup(*dev, 2).ok());
  REQUIRE(third->setup(*dev, 3).ok());
  for (auto* w : {first.get(), second.get(), third.get(), first.get()}) {
    REQUIRE(w->poison_outputs(*dev).ok());
    const tune::Status ls = dev->launch(**ck, k.def.dims(k.default_config, w->args()), w->args());
    REQUIRE_MESSAGE(ls.ok(), ls.to_string());
    const tune::Status cs = w->check(*dev);
    CHECK_MESSAGE(cs.ok(), w->size_text() << ": " << cs.to_string());
  }
}

TEST_CASE("N not a multiple of 8 is invalid_argument naming TMA's row stride") {
  auto dev = open_hopper_or_skip();
  const BundledKernel k = wgmma_kernel("matmul_wgmma_f16");
  auto ck = dev->compile(*k.def.source_for(tune::Language::cuda_hip), k.default_config);
  REQUIRE_MESSAGE(ck.ok(), ck.status().to_string());
  auto w = k.workload(std::vector<std::int64_t>{1000, 1030, 520});
  REQUIRE(w->setup(*dev, 5).ok());
  const tune::Status ls = dev->launch(**ck, k.def.dims(k.default_config, w->args()), w->args());
  CHECK(ls.code() == tune::StatusCode::invalid_argument);
  CHECK_MESSAGE(ls.message().find("tensor map 1") != std::string::npos, ls.to_string());
  CHECK_MESSAGE(ls.message().find("2060 bytes") != std::string::npos, ls.to_string());
}

TEST_CASE("the Autotuner tunes the wgmma matmuls and the winner is correct") {
  auto dev = open_hopper_or_skip();
  for (const std::string name : kWgmmaKernels) {
    CAPTURE(name);
    const BundledKernel k = wgmma_kernel(name.c_str());
    auto tuner = tune::testing::gpu_test_tuner(k.def);
    auto w = k.workload(std::vector<std::int64_t>{2048, 2048, 2048});
    REQUIRE(w->setup(*dev, 99).ok());
    const tune::testing::Watchdog dog("tuning " + name, 300);
    const tune::Status s = tuner->run(*dev, w->args());
    REQUIRE_MESSAGE(s.ok(), s.to_string());
    auto report = tuner->last_report(*dev, w->args());
    REQUIRE(report.has_value());
    MESSAGE(report->to_string());
    REQUIRE(w->poison_outputs(*dev).ok());
    REQUIRE(tuner->run(*dev, w->args()).ok());
    const tune::Status v = w->check(*dev);
    CHECK_MESSAGE(v.ok(), v.to_string());
  }
}

#ifndef TUNE_TEST_SANITIZED
TEST_CASE("a cache hit of the tuned wgmma matmul allocates nothing, tensor maps included") {
  auto dev = open_hopper_or_skip();
  const BundledKernel k = wgmma_kernel("matmul_wgmma_f16");
  auto tuner = tune::testing::gpu_test_tuner(k.def);
  // Two workloads of one key: alternating them misses the thread's hit memo every call (the
  // key is built, the tensor maps re-encoded for the other buffers); repeating one hits it.
  auto first = k.workload(std::vector<std::int64_t>{512, 256, 128});
  auto second = k.workload(std::vector<std::int64_t>{512, 256, 128});
  REQUIRE(first->setup(*dev, 11).ok());
  REQUIRE(second->setup(*dev, 12).ok());
  const std::vector<tune::ArgValue> a(first->args().begin(), first->args().end());
  const std::vector<tune::ArgValue> b(second->args().begin(), second->args().end());
  const tune::testing::Watchdog dog("matmul_wgmma_f16 cache hits", 300);
  REQUIRE(tuner->run(*dev, a).ok());  // tunes: allocates freely
  REQUIRE(tuner->run(*dev, b).ok());  // the same key: a hit, tensor maps encoded for b
  REQUIRE(dev->synchronize().ok());
  bool all_ok = true;
  const std::size_t repeated = tune::testing::allocations_of([&] {
    for (int i = 0; i < 100; ++i) all_ok &= tuner->run(*dev, a).ok();
  });
  const std::size_t alternating = tune::testing::allocations_of([&] {
    for (int i = 0; i < 50; ++i) {
      all_ok &= tuner->run(*dev, a).ok();
      all_ok &= tuner->run(*dev, b).ok();
    }
  });
  REQUIRE(dev->synchronize().ok());
  CHECK(all_ok);
  CHECK_MESSAGE(repeated == 0, repeated << " allocations in 100 repeated cache hits");
  CHECK_MESSAGE(alternating == 0, alternating << " allocations in 100 alternating cache hits");
  // And the hits computed the product.
  REQUIRE(second->poison_outputs(*dev).ok());
  REQUIRE(tuner->run(*dev, b).ok());
  const tune::Status v = second->check(*dev);
  CHECK_MESSAGE(v.ok(), v.to_string());
}
#endif
