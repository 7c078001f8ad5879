// The cold cache of timed launches on a CUDA GPU: the last-level cache as the driver reports
// it, the flush self-test (its ratios are printed for people, never asserted) and a tuning
// with rotating input copies whose output is checked against the CPU. Skips without a GPU.
#include <doctest/doctest.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "gpu_tuner.hpp"
#include "tune/backend/last_level_cache.hpp"
#include "tune/tune.hpp"

TEST_CASE("CUDA flush check: the L2 is the last-level cache; warm, flushed and rotating reads") {
  using namespace tune;
  auto dev = tune::testing::open_cuda_or_skip();
  const DeviceInfo& info = dev->info();
  if (info.llc_source != CacheSizeSource::user) {  // TUNE_LLC_BYTES unset
    CHECK(info.llc_source == CacheSizeSource::reported);
    CHECK(info.llc_bytes == info.l2_bytes);
  }
  auto r = measure_flush_effect(*dev);
  REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  std::printf("%s\n%s", info.name.c_str(), r->to_string().c_str());
  CHECK(r->flush_bytes == flush_bytes_for(info));
  CHECK(r->flush_bytes >= 2 * info.llc_bytes);
  CHECK(r->buffer_bytes == info.llc_bytes / 2);
  CHECK(r->rotate_sets >= 2);
  CHECK(r->warm_ns > 0);
  CHECK(r->cold_ns > 0);
  CHECK(r->rotate_ns > 0);
}

TEST_CASE("CUDA tuning with rotating input copies: the output matches the CPU") {
  using namespace tune;
  auto dev = tune::testing::open_cuda_or_skip();
  constexpr std::uint32_t n = 1u << 22;  // 16 MiB per buffer
  KernelDef def;
  def.name = "axpb_rotate";
  KernelSource src;
  src.language = Language::cuda_hip;
  src.entry = "axpb";
  src.text = R"(extern "C" __global__ void axpb(const float* x, float* y, unsigned n) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    y[i] = 2.0f * x[i];
})";
  def.sources = {src};
  def.signature.buffer("x", ElemType::f32).buffer("y", ElemType::f32).scalar("n", ElemType::u32);
  def.space.param(std::string(kBlockX), {128, 256, 512}).param("GRID", {264, 1056});
  def.key = {KeySpec::exact("n")};
  def.dims = [](const Config& c, ArgList) {
    return LaunchDims{{static_cast<std::uint32_t>(c.get_int("GRID")), 1, 1}, c.launch().block, 0};
  };
  AutotunerOptions opts;
  opts.persistent = false;
  opts.print = false;
  opts.bench.cache = TimingCache::rotate;
  auto tuner = Autotuner::make(std::move(def), opts);
  REQUIRE_MESSAGE(tuner.ok(), tuner.status().to_string());
  std::vector<float> host(n);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-10.0f, 10.0f);
  for (auto& v : host) v = u(rng);
  auto x = dev->alloc(n * sizeof(float));
  auto y = dev->alloc(n * sizeof(float));
  REQUIRE(x.ok());
  REQUIRE(y.ok());
  REQUIRE(dev->upload(**x, host.data(), n * sizeof(float)).ok());
  REQUIRE(dev->fill(**y, 0, n * sizeof(float)).ok());
  const std::vector<ArgValue> args = {ArgValue::buf(**x, ElemType::f32, n),
                                      ArgValue::buf(**y, ElemType::f32, n), ArgValue(n)};
  Status st = (*tuner)->run(*dev, args);
  REQUIRE_MESSAGE(st.ok(), st.to_string());
  auto report = (*tuner)->last_report(*dev, args);
  REQUIRE(report);
  CHECK(report->timing_cache == TimingCache::rotate);
  std::printf("%s", report->to_string().c_str());
  std::vector<float> got(n);
  REQUIRE(dev->download(**y, got.data(), n * sizeof(float)).ok());
  std::size_t bad = 0;
  for (std::uint32_t i = 0; i < n; ++i)
    if (got[i] != 2.0f * host[i]) ++bad;
  CHECK(bad == 0);
}
