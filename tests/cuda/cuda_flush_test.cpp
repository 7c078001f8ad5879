// The cold cache of timed launches on a CUDA GPU: the last-level cache as the driver reports
// it, the flush self-test (its ratios are printed for people, never asserted) and a tuning
// with rotating input copies whose output is checked against the CPU (cold_cache_cases.hpp).
// Skips without a GPU.
#include <doctest/doctest.h>

#include <string>

#include "cold_cache_cases.hpp"
#include "gpu_tuner.hpp"
#include "tune/tune.hpp"

TEST_CASE("CUDA flush check: the L2 is the last-level cache; warm, flushed and rotating reads") {
  using namespace tune;
  auto dev = tune::testing::open_cuda_or_skip();
  const DeviceInfo& info = dev->info();
  if (info.llc_source != CacheSizeSource::user) {  // TUNE_LLC_BYTES unset
    CHECK(info.llc_source == CacheSizeSource::reported);
    CHECK(info.llc_bytes == info.l2_bytes);
  }
  tune::testing::check_flush_effect(*dev);
}

TEST_CASE("CUDA tuning with rotating input copies: the output matches the CPU") {
  using namespace tune;
  auto dev = tune::testing::open_cuda_or_skip();
  KernelDef def;
  KernelSource src;
  src.language = Language::cuda_hip;
  src.entry = "axpb";
  src.text = R"(extern "C" __global__ void axpb(const float* x, float* y, unsigned n) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    y[i] = 2.0f * x[i];
})";
  def.sources = {src};
  def.space.param(std::string(kBlockX), {128, 256, 512}).param("GRID", {264, 1056});
  def.dims = [](const Config& c, ArgList) {
    return LaunchDims{{static_cast<std::uint32_t>(c.get_int("GRID")), 1, 1}, c.launch().block, 0};
  };
  tune::testing::check_rotating_tuning(*dev, std::move(def), 1u << 22,  // 16 MiB per buffer
                                       BenchOptions{});
}
