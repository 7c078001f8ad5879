// Isolated tuning (AutotunerOptions::isolation) inside a CUDA application, on a real GPU: the
// test is the application, with libtune opened on its primary context (cuda::OpenOptions).
// One configuration of the tuned kernel writes to an illegal address, which on CUDA poisons
// the whole context it runs in. With isolation on, it runs in the tune-worker's context: the
// tuning succeeds on the other configurations, the report names the bad one with the worker's
// fate, the application's buffers hold the CPU reference output, and the application's context
// still works afterwards (a copy and another launch). Skips with the reason when there is no
// driver or no device. A second case prints isolated vs in-process tuning wall time (a figure,
// not an assertion).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cuda_app.hpp"
#include "interop_data.hpp"
#include "program_paths.hpp"

using namespace tune;
using tune::testing::interop_options;
using tune::testing::mismatches;
using tune::testing::random_floats;
using namespace tune::testing::cuda_app;

namespace {

// y = a x + y; BAD=1 first stores through a wild pointer (CUDA_ERROR_ILLEGAL_ADDRESS, sticky).
constexpr const char* kSaxpy = R"(
extern "C" __global__ void saxpy(const float* x, float* y, float a, int n) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
#if BAD
  if (i == 0) *(volatile float*)(0x10ull) = 1.0f;
#endif
  if (i < n) y[i] = a * x[i] + y[i];
})";

KernelDef saxpy_with_bad_config() {
  KernelDef k;
  k.name = "isolation_saxpy_cuda";
  KernelSource s;
  s.language = Language::cuda_hip;
  s.entry = "saxpy";
  s.text = kSaxpy;
  k.sources = {s};
  k.signature.buffer("x", ElemType::f32)
      .buffer("y", ElemType::f32)
      .scalar("a", ElemType::f32)
      .scalar("n", ElemType::i32);
  Config good128{{"BAD", 0}}, good256{{"BAD", 0}}, bad{{"BAD", 1}};
  good128.launch().block = {128, 1, 1};
  good256.launch().block = {256, 1, 1};
  bad.launch().block = {128, 1, 1};
  k.space = ConfigSpace::list({good128, bad, good256});
  k.key = {KeySpec::pow2("n")};
  k.restore_value = {"y"};
  k.dims = [](const Config& c, ArgList args) {
    LaunchDims d;
    const auto n = static_cast<std::uint32_t>(args[3].as_int());
    d.block = c.launch().block;
    d.grid = {(n + d.block.x - 1) / d.block.x, 1, 1};
    return d;
  };
  return k;
}

AutotunerOptions isolated_options() {
  AutotunerOptions o = interop_options();
  o.isolation.enabled = true;
  // TUNE_WORKER when set (binaries run away from their build tree), else the build tree's.
  if (tune::env_text("TUNE_WORKER").empty()) o.isolation.worker = tune_test_programs::tune_worker;
  return o;
}

// The application's memory holding `v`.
CUdeviceptr app_buffer(CudaApp& app, const std::vector<float>& v) {
  const CUdeviceptr p = app.alloc(v.size() * sizeof(float));
  app.upload(p, v);
  return p;
}

// x and y of the application wrapped for libtune, as saxpy's arguments with a and n.
struct Wrapped {
  Buffer x, y;
  std::vector<ArgValue> args;
  Wrapped(CudaApp& app, CUdeviceptr px, CUdeviceptr py, float a, int n) {
    auto wx = cuda::wrap_buffer(*app.dev, px, static_cast<std::uint64_t>(n) * sizeof(float));
    auto wy = cuda::wrap_buffer(*app.dev, py, static_cast<std::uint64_t>(n) * sizeof(float));
    REQUIRE_MESSAGE(wx.ok(), wx.status().to_string());
    REQUIRE_MESSAGE(wy.ok(), wy.status().to_string());
    x = std::move(*wx);
    y = std::move(*wy);
    args = {ArgValue::buf(*x, ElemType::f32, static_cast<std::uint64_t>(n)),
            ArgValue::buf(*y, ElemType::f32, static_cast<std::uint64_t>(n)), a, n};
  }
};

std::vector<float> saxpy_ref(float a, const std::vector<float>& x, std::vector<float> y) {
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = a * x[i] + y[i];
  return y;
}

}  // namespace

TEST_CASE("isolation: a configuration that faults the context is dropped, the app's stays usable") {
  CudaApp app;
  CHECK(app.dev->info().reopen_spec == "cuda:0");
  constexpr int n = 1 << 20;
  const float a = 1.5f;
  const auto xs = random_floats(n, 3), ys = random_floats(n, 4);
  const CUdeviceptr px = app_buffer(app, xs), py = app_buffer(app, ys);
  {
    const Wrapped w(app, px, py, a, n);
    const auto& args = w.args;
    auto tuner = Autotuner::make(saxpy_with_bad_config(), isolated_options());
    REQUIRE_MESSAGE(tuner.ok(), tuner.status().to_string());
    const Status st = (*tuner)->run(*app.dev, args);
    REQUIRE_MESSAGE(st.ok(), st.to_string());
    auto report = (*tuner)->last_report(*app.dev, args);
    REQUIRE(report.has_value());
    MESSAGE(report->to_string());
    CHECK(report->winner.get_int("BAD") == 0);
    bool bad_seen = false;
    for (const auto& r : report->results) {
      if (r.config.get_int("BAD") == 1) {
        bad_seen = true;
        CHECK(r.status.code() == StatusCode::launch_failed);
        CHECK_MESSAGE(r.status.message().find("isolated worker") != std::string::npos,
                      r.status.to_string());
      } else {
        CHECK_MESSAGE(r.status.ok(), r.status.to_string());
      }
    }
    CHECK(bad_seen);
    // The app's y: exactly one launch of the winner on its own contents.
    auto want = saxpy_ref(a, xs, ys);
    auto got = app.download(py, n);
    CHECK_MESSAGE(mismatches(got.data(), want) == "", mismatches(got.data(), want));
    // The app's context still works: a synchronisation, a copy, and another launch (a hit).
    CHECK(app.cu.CtxSynchronize() == 0);
    REQUIRE((*tuner)->run(*app.dev, args).ok());
    REQUIRE(app.dev->synchronize().ok());
    want = saxpy_ref(a, xs, want);
    got = app.download(py, n);
    CHECK_MESSAGE(mismatches(got.data(), want) == "", mismatches(got.data(), want));
  }
  CHECK(app.cu.MemFree(px) == 0);
  CHECK(app.cu.MemFree(py) == 0);
}

TEST_CASE("figure: isolated vs in-process tuning wall time of one kernel (printed)") {
  CudaApp app;
  constexpr int n = 1 << 22;
  const auto xs = random_floats(n, 5), ys = random_floats(n, 6);
  const CUdeviceptr px = app_buffer(app, xs), py = app_buffer(app, ys);
  {
    const Wrapped w(app, px, py, 2.0f, n);
    const auto& args = w.args;
    // Only the correct configurations: the in-process tuning must not meet the bad one.
    KernelDef def = saxpy_with_bad_config();
    Config g128{{"BAD", 0}}, g256{{"BAD", 0}}, g512{{"BAD", 0}};
    g128.launch().block = {128, 1, 1};
    g256.launch().block = {256, 1, 1};
    g512.launch().block = {512, 1, 1};
    def.space = ConfigSpace::list({g128, g256, g512});
    double wall[2] = {0, 0};
    for (int isolated = 0; isolated < 2; ++isolated) {
      AutotunerOptions o = isolated ? isolated_options() : interop_options();
      auto tuner = Autotuner::make(def, o);
      REQUIRE(tuner.ok());
      REQUIRE((*tuner)->tune(*app.dev, args).ok());
      wall[isolated] = (*tuner)->last_report(*app.dev, args)->wall_ms;
    }
    std::printf(
        "isolation figure: saxpy n=%d, 3 configs: in-process %.1f ms, isolated %.1f ms "
        "(worker start, device open and argument copies included)\n",
        n, wall[0], wall[1]);
  }
  CHECK(app.cu.MemFree(px) == 0);
  CHECK(app.cu.MemFree(py) == 0);
}
