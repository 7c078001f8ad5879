// The CUDA device on real hardware, beyond what the conformance suite asks of every backend
// (conformance_cuda verifies every bundled configuration): resources, limits, sticky errors,
// timeouts, the CUBIN cache and tuning through the Autotuner. Each case skips with the reason when
// there is no driver or no device. Tests never assert which configuration is faster.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gpu_tuner.hpp"
#include "skip.hpp"
#include "tune/backend/binary_cache.hpp"
#include "tune/cuda.hpp"
#include "tune/kernels/bundled.hpp"
#include "tune/sqlite_store.hpp"
#include "tune/tune.hpp"

namespace {

tune::KernelSource source(std::string text, std::string entry = "k") {
  tune::KernelSource s;
  s.language = tune::Language::cuda_hip;
  s.entry = std::move(entry);
  s.text = std::move(text);
  return s;
}

}  // namespace

TEST_CASE("device info comes from the driver") {
  auto dev = tune::testing::open_cuda_or_skip();
  const tune::DeviceInfo& i = dev->info();
  std::printf("%s %s: %u SMs, L2 %llu B, smem %u/%u B, %s, %s\n", i.name.c_str(), i.arch.c_str(),
              i.compute_units, static_cast<unsigned long long>(i.l2_bytes),
              i.shared_bytes_per_block, i.shared_bytes_per_block_optin, i.driver_version.c_str(),
              i.compiler_version.c_str());
  CHECK(i.backend == "cuda");
  CHECK(i.arch.rfind("sm_", 0) == 0);
  CHECK(i.compute_units > 0);
  CHECK(i.l2_bytes > 0);
  CHECK(i.warp_size == 32);
  CHECK(i.shared_bytes_per_block_optin >= i.shared_bytes_per_block);
  CHECK(i.compiler_version.rfind("NVRTC", 0) == 0);
}

TEST_CASE("buffers: upload, fill, copy, download") {
  auto dev = tune::testing::open_cuda_or_skip();
  std::vector<std::uint32_t> host(1000);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<std::uint32_t>(i * 7 + 1);
  auto a = dev->alloc(4000);
  auto b = dev->alloc(4000);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  REQUIRE(dev->upload(**a, host.data(), 4000, 0).ok());
  REQUIRE(dev->copy(**b, **a, 4000).ok());
  REQUIRE(dev->fill(**b, 0xdeadbeef, 400, 800).ok());
  std::vector<std::uint32_t> back(1000);
  REQUIRE(dev->download(**b, back.data(), 4000, 0).ok());
  for (std::size_t i = 0; i < back.size(); ++i) {
    const bool filled = i >= 200 && i < 300;
    REQUIRE(back[i] == (filled ? 0xdeadbeefu : host[i]));
  }
  CHECK(dev->upload(**a, host.data(), 4000, 4).code() == tune::StatusCode::invalid_argument);
  CHECK(dev->fill(**a, 0, 3, 0).code() == tune::StatusCode::invalid_argument);
}

TEST_CASE("compile reports resources and time() returns one positive sample per rep") {
  auto dev = tune::testing::open_cuda_or_skip();
  const auto found = tune::kernels::bundled_kernel(tune::Language::cuda_hip, "matmul_f16");
  REQUIRE(found.has_value());
  const tune::kernels::BundledKernel& k = *found;
  auto ck = dev->compile(*k.def.source_for(tune::Language::cuda_hip), k.default_config);
  REQUIRE_MESSAGE(ck.ok(), ck.status().to_string());
  MESSAGE("matmul_f16 default: " << (*ck)->resources().to_string());
  CHECK((*ck)->resources().registers > 0);
  CHECK((*ck)->resources().max_threads >= 128);
  CHECK(tune::cuda::native_function(**ck) != nullptr);
  auto w = k.workload(std::vector<std::int64_t>{512, 512, 512});
  REQUIRE(w->setup(*dev, 7).ok());
  // Resets ride on the stream beside the timed launches: a zeroed and a restored buffer.
  auto zeroed = dev->alloc(1024);
  auto restored = dev->alloc(1024);
  auto snapshot = dev->alloc(1024);
  REQUIRE((zeroed.ok() && restored.ok() && snapshot.ok()));
  REQUIRE(dev->fill(**zeroed, 0xffffffffu, 1024).ok());
  REQUIRE(dev->fill(**restored, 0xffffffffu, 1024).ok());
  REQUIRE(dev->fill(**snapshot, 7u, 1024).ok());
  tune::TimingPlan plan;
  plan.reps = 10;
  plan.resets.zero = {zeroed->get()};
  plan.resets.restore = {{restored->get(), snapshot->get()}};
  auto t = dev->time(**ck, k.def.dims(k.default_config, w->args()), w->args(), plan);
  REQUIRE_MESSAGE(t.ok(), t.status().to_string());
  REQUIRE(t->size() == 10);
  for (double ns : *t) CHECK(ns > 0);
  CHECK(w->check(*dev).ok());
  std::vector<std::uint32_t> z(256), r(256);
  REQUIRE(dev->download(**zeroed, z.data(), 1024).ok());
  REQUIRE(dev->download(**restored, r.data(), 1024).ok());
  CHECK(z == std::vector<std::uint32_t>(256, 0u));
  CHECK(r == std::vector<std::uint32_t>(256, 7u));
}

TEST_CASE("a variant over the device limits is out_of_resources before launch") {
  auto dev = tune::testing::open_cuda_or_skip();
  const char* text = "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] = 1.0f; }";
  tune::Config too_many;
  too_many.set(tune::kBlockX, 2048);
  auto a = dev->compile(source(text), too_many);
  REQUIRE_FALSE(a.ok());
  CHECK(a.status().code() == tune::StatusCode::out_of_resources);
  tune::Config too_much;
  too_much.launch().shared_bytes = dev->info().shared_bytes_per_block_optin + 1024;
  auto b = dev->compile(source(text), too_much);
  REQUIRE_FALSE(b.ok());
  CHECK(b.status().code() == tune::StatusCode::out_of_resources);
  // Over 48 KiB but within the opt-in limit: compiles, the attribute is raised, it launches.
  tune::Config big;
  big.launch().shared_bytes = 100 * 1024;
  auto c = dev->compile(source(text), big);
  REQUIRE_MESSAGE(c.ok(), c.status().to_string());
  auto buf = dev->alloc(1024 * 4);
  REQUIRE(buf.ok());
  tune::ArgValue args[] = {tune::ArgValue::buf(**buf, tune::ElemType::f32, 1024)};
  tune::LaunchDims dims{{1, 1, 1}, {256, 1, 1}, 100 * 1024};
  CHECK(dev->launch(**c, dims, args).ok());
  CHECK(dev->synchronize().ok());
  dims.block = {2048, 1, 1};
  CHECK(dev->launch(**c, dims, args).code() == tune::StatusCode::out_of_resources);
}

TEST_CASE("the CUBIN cache serves a second compile of the same variant") {
  auto dev = tune::testing::open_cuda_or_skip();
  const char* text = "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] = SEED; }";
  // A value unique to this run, so the first compile is a miss.
  const auto seed = std::chrono::steady_clock::now().time_since_epoch().count() % 1000000007;
  tune::Config c{{"SEED", static_cast<int>(seed)}};
  auto first = dev->compile(source(text), c);
  REQUIRE(first.ok());
  auto second = dev->compile(source(text), c);
  REQUIRE(second.ok());
  if (std::getenv("TUNE_CACHE") != nullptr && std::string(std::getenv("TUNE_CACHE")) == "off") {
    MESSAGE("TUNE_CACHE=off: no cache to check");
  } else {
    CHECK_FALSE((*first)->from_binary_cache());
    CHECK((*second)->from_binary_cache());
  }
}

TEST_CASE("a cached CUBIN of another kernel under this key is evicted by its parameters") {
  auto dev = tune::testing::open_cuda_or_skip();
  if (tune::cache_mode_from_env() != tune::CacheMode::readwrite)
    TUNE_SKIP("the CUBIN cache is not writable (TUNE_CACHE)");
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(tune::default_cache_path()).parent_path() / "cubin";
  // The entry file that compiling `src` adds to the cache directory.
  auto entry_of = [&](const tune::KernelSource& src, const tune::Config& cfg) {
    std::set<fs::path> before;
    if (fs::exists(dir))
      for (const auto& e : fs::directory_iterator(dir)) before.insert(e.path());
    REQUIRE(dev->compile(src, cfg).ok());
    for (const auto& e : fs::directory_iterator(dir))
      if (!before.count(e.path())) return e.path();
    FAIL("no new entry in " << dir);
    return fs::path();
  };
  auto key_of = [](const fs::path& f) {
    std::ifstream in(f, std::ios::binary);
    std::uint64_t key_bytes = 0;
    in.seekg(8);
    in.read(reinterpret_cast<char*>(&key_bytes), sizeof key_bytes);
    std::string key(key_bytes, '\0');
    in.seekg(48);
    in.read(key.data(), static_cast<std::streamsize>(key.size()));
    return key;
  };
  // Two kernels named k: the one under test takes (x, n); another takes (x, y, n).
  const auto seed = std::chrono::steady_clock::now().time_since_epoch().count() % 1000000007;
  tune::Config c{{"SEED", static_cast<int>(seed)}};
  tune::KernelSource mine = source(
      "extern \"C\" __global__ void k(float* x, int n) { if (threadIdx.x < n) x[threadIdx.x] = "
      "SEED; }");
  mine.signature.buffer("x", tune::ElemType::f32).scalar("n", tune::ElemType::i32);
  tune::KernelSource other = source(
      "extern \"C\" __global__ void k(float* x, float* y, int n) { if (threadIdx.x < n) "
      "y[threadIdx.x] = x[threadIdx.x] + SEED; }");
  const std::string mine_key = key_of(entry_of(mine, c));
  const std::string other_key = key_of(entry_of(other, c));
  tune::BinaryCache raw(dir, true);
  auto other_entry = raw.load(other_key);
  REQUIRE(other_entry.has_value());
  REQUIRE(raw.store(mine_key, *other_entry));
  auto again = dev->compile(mine, c);
  REQUIRE_MESSAGE(again.ok(), again.status().to_string());
  CHECK_FALSE((*again)->from_binary_cache());  // cuFuncGetParamInfo told: evicted, recompiled
  auto buf = dev->alloc(64 * 4);
  REQUIRE(buf.ok());
  tune::ArgValue args[] = {tune::ArgValue::buf(**buf, tune::ElemType::f32, 64),
                           tune::ArgValue(std::int32_t{64})};
  REQUIRE(dev->launch(**again, tune::LaunchDims{{1, 1, 1}, {64, 1, 1}, 0}, args).ok());
  std::vector<float> out(64);
  REQUIRE(dev->download(**buf, out.data(), 64 * 4).ok());
  CHECK(out[7] == static_cast<float>(static_cast<int>(seed)));
}

TEST_CASE("an illegal address is device_lost and the device stays lost") {
  auto dev = tune::testing::open_cuda_or_skip();
  const char* text =
      "extern \"C\" __global__ void k(float* x) { x[(1ull << 40) + threadIdx.x] = 1.0f; }";
  auto ck = dev->compile(source(text), tune::Config{});
  REQUIRE(ck.ok());
  auto buf = dev->alloc(64);
  REQUIRE(buf.ok());
  tune::ArgValue args[] = {tune::ArgValue::buf(**buf, tune::ElemType::f32, 16)};
  tune::TimingPlan plan;
  plan.reps = 1;
  auto t = dev->time(**ck, tune::LaunchDims{{1, 1, 1}, {32, 1, 1}, 0}, args, plan);
  REQUIRE_FALSE(t.ok());
  MESSAGE(t.status().to_string());
  CHECK(t.status().code() == tune::StatusCode::device_lost);
  CHECK(t.status().message().find("CUDA_ERROR_ILLEGAL_ADDRESS") != std::string::npos);
  CHECK(dev->synchronize().code() == tune::StatusCode::device_lost);
  ck->reset();
  buf->reset();
  dev.reset();
  // libtune never resets the primary context (it is the whole process's): a new device on it
  // is lost too. The application cannot repair it either: after an illegal address CUDA keeps
  // the process unusable (on the H200, 2026-12-01, a cuDevicePrimaryCtxReset returned success
  // and the next retain still failed with CUDA_ERROR_ILLEGAL_ADDRESS). So this case must run in
  // a process of its own (CTest runs each case alone); isolated tuning is the way around it.
  auto again = tune::open_device("cuda");
  CHECK_MESSAGE(!again.ok(), "a device opened on a context holding a sticky error");
  if (!again.ok()) {
    CHECK(again.status().code() == tune::StatusCode::device_lost);
    CHECK(again.status().message().find("relaunched") != std::string::npos);
  }
}

TEST_CASE("a launch that outlives timeout_ms is a timeout") {
  auto dev = tune::testing::open_cuda_or_skip();
  // Spins for about 2 s of GPU clock (globaltimer is in ns).
  const char* text = R"(extern "C" __global__ void k(int* x) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < 2000000000ull);
    x[0] = 1;
  })";
  auto ck = dev->compile(source(text), tune::Config{});
  REQUIRE(ck.ok());
  auto buf = dev->alloc(64);
  REQUIRE(buf.ok());
  tune::ArgValue args[] = {tune::ArgValue::buf(**buf, tune::ElemType::i32, 16)};
  tune::TimingPlan plan;
  plan.reps = 1;
  plan.flush_l2 = false;
  plan.timeout_ms = 100;
  auto t = dev->time(**ck, tune::LaunchDims{{1, 1, 1}, {1, 1, 1}, 0}, args, plan);
  REQUIRE_FALSE(t.ok());
  CHECK(t.status().code() == tune::StatusCode::timeout);
  CHECK(dev->synchronize().ok());  // it does finish; the device is still usable
}

TEST_CASE("the Autotuner tunes matmul_f16 on the device and the winner is correct") {
  auto dev = tune::testing::open_cuda_or_skip();
  const auto found = tune::kernels::bundled_kernel(tune::Language::cuda_hip, "matmul_f16");
  REQUIRE(found.has_value());
  tune::testing::check_tuned_winner(*dev, *found, {1024, 1024, 1024});
}

TEST_CASE("a template kernel tunes over its template arguments and every variant is correct") {
  auto dev = tune::testing::open_cuda_or_skip();
  tune::KernelDef def;
  def.name = "template_scale";
  tune::KernelSource src = source(R"(
template <int EPT, bool NEG>
__global__ void scale(const float* __restrict__ x, float* __restrict__ y, int n) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * EPT;
  for (int j = 0; j < EPT; ++j)
    if (base + j < n) y[base + j] = x[base + j] * (NEG ? -2.0f : 2.0f);
})",
                                  "scale<EPT, NEG>");
  def.sources = {src};
  def.signature.buffer("x", tune::ElemType::f32)
      .buffer("y", tune::ElemType::f32)
      .scalar("n", tune::ElemType::i32);
  def.space.param("EPT", {1, 2, 4, 8})
      .param("NEG", {true})
      .param(std::string(tune::kBlockX), {128, 256});
  def.key = {tune::KeySpec::exact("n")};
  def.dims = [](const tune::Config& c, tune::ArgList args) {
    const std::uint32_t block = c.launch().block.x;  // a launch option, not a parameter
    const auto per_block = static_cast<std::uint32_t>(c.get_int("EPT")) * block;
    const auto n = static_cast<std::uint32_t>(args[2].as_int());
    return tune::LaunchDims{{(n + per_block - 1) / per_block, 1, 1}, {block, 1, 1}, 0};
  };
  const int n = 1'000'003;  // ragged: not a multiple of any block * EPT
  std::vector<float> x(n), want(n), got(n);
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  for (int i = 0; i < n; ++i) {
    x[static_cast<std::size_t>(i)] = uni(rng);
    want[static_cast<std::size_t>(i)] = x[static_cast<std::size_t>(i)] * -2.0f;
  }
  auto xb = dev->alloc(n * 4), yb = dev->alloc(n * 4);
  REQUIRE(xb.ok());
  REQUIRE(yb.ok());
  REQUIRE(dev->upload(**xb, x.data(), n * 4).ok());
  tune::ArgValue args[] = {tune::ArgValue::buf(**xb, tune::ElemType::f32, n),
                           tune::ArgValue::buf(**yb, tune::ElemType::f32, n), n};
  // Every variant launches its own instantiation and gets the same, exact answer.
  auto configs = def.space.enumerate(dev->info()).value();
  for (const auto& c : configs) {
    CAPTURE(c.to_string());
    auto ck = dev->compile(src, c);
    REQUIRE_MESSAGE(ck.ok(), ck.status().to_string());
    REQUIRE(dev->fill(**yb, 0x7fc00000u, n * 4).ok());  // NaN: a skipped element shows
    REQUIRE(dev->launch(**ck, def.dims(c, args), args).ok());
    REQUIRE(dev->download(**yb, got.data(), n * 4).ok());
    CHECK(got == want);
  }
  tune::AutotunerOptions opts;
  opts.persistent = false;
  opts.bench.warmup_ms = 1;
  opts.bench.rep_ms = 2;
  auto tuner = tune::Autotuner::make(def, opts);
  REQUIRE_MESSAGE(tuner.ok(), tuner.status().to_string());
  REQUIRE(dev->fill(**yb, 0x7fc00000u, n * 4).ok());
  tune::Status st = (*tuner)->run(*dev, args);
  REQUIRE_MESSAGE(st.ok(), st.to_string());
  REQUIRE(dev->download(**yb, got.data(), n * 4).ok());
  CHECK(got == want);
  MESSAGE((*tuner)->last_report(*dev, args)->to_string());
}
