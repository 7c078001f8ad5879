// libtune inside a CUDA application (tune/cuda.hpp's OpenOptions, wrap_buffer and
// LaunchTarget::stream), on a real GPU: the test is the application. It allocates its own
// memory and streams through the driver API (resolved with cuda::driver_symbol, so no cuda.h
// and no link to libcuda), queues its own work before and after libtune's calls, captures graphs,
// and checks every output against a CPU reference. Every case skips with the reason when there
// is no driver or no device.
//
// What each case proves:
//   - external memory + a non-default stream: tuning on the application's buffers gives the
//     reference output, and the work the application queued before (a ~50 ms spin, then a fill
//     of x) is seen by tuning, and the work queued after (a copy of y) sees the winner's output;
//   - a known key launches on the stream with the same ordering and no synchronisation;
//   - graph capture: a hit is captured and replays correctly; a miss falls back (nearest key,
//     or the first candidate) without tuning, or is refused with failed_precondition;
//   - 1 and 8 threads, each with its own stream and buffers, over keys that are new to some
//     threads and already known to others;
//   - a miss captured in global mode with nothing tuned: the first candidate is compiled and
//     launched into the graph (module loading is allowed then), the graph replays correctly;
//   - the thread's current context is the application's after every call, with two contexts;
//   - the application's stream as the device's own queue, the legacy default stream per call;
//   - libtune never frees wrapped memory nor destroys the application's stream.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cuda_app.hpp"
#include "interop_data.hpp"
#include "skip.hpp"
#include "tune/cuda.hpp"
#include "tune/tune.hpp"

using namespace tune;
using tune::testing::interop_options;
using tune::testing::mismatches;
using tune::testing::random_floats;
using tune::testing::saxpy_def;
using namespace tune::testing::cuda_app;

namespace {

constexpr unsigned kStreamNonBlocking = 1;  // CU_STREAM_NON_BLOCKING
constexpr int kCaptureGlobal = 0;           // CU_STREAM_CAPTURE_MODE_GLOBAL
constexpr int kCaptureRelaxed = 2;          // CU_STREAM_CAPTURE_MODE_RELAXED

KernelSource cuda_source(const char* entry, const char* text) {
  KernelSource s;
  s.language = Language::cuda_hip;
  s.entry = entry;
  s.text = text;
  return s;
}

constexpr const char* kSaxpy = R"(
extern "C" __global__ void saxpy(const float* x, float* y, float a, int n) {
  const long long base = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * EPT;
  for (int e = 0; e < EPT; ++e) {
    const long long i = base + e;
    if (i < n) y[i] = a * x[i] + y[i];
  }
})";

constexpr const char* kSpin = R"(
extern "C" __global__ void spin(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {}
})";

KernelDef saxpy() {
  return saxpy_def("interop_saxpy_cuda", cuda_source("saxpy", kSaxpy), "EPT", {128, 256});
}

unsigned bits_of(float f) {
  unsigned u = 0;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

void check_close(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  const std::string bad = mismatches(got.data(), want);
  CHECK_MESSAGE(bad.empty(), bad);
}

// The application (cuda_app.hpp) with a spin kernel of its own.
struct App : CudaApp {
  std::unique_ptr<CompiledKernel> spin;

  explicit App(const cuda::OpenOptions& options = {}) : CudaApp(options) {
    auto k = dev->compile(cuda_source("spin", kSpin), Config{});
    REQUIRE_MESSAGE(k.ok(), k.status().to_string());
    spin = std::move(*k);
  }
  ~App() { spin.reset(); }

  CUstream stream() {
    CUstream s = nullptr;
    REQUIRE(cu.StreamCreate(&s, kStreamNonBlocking) == 0);
    return s;
  }
  // The application's own work on `s`: ~50 ms of spinning (so that anything not ordered after
  // it would run first), then x filled with `value`.
  void slow_fill(CUstream s, CUdeviceptr x, float value, std::size_t n) {
    long long cycles = 100'000'000;
    void* params[] = {&cycles};
    REQUIRE(cu.LaunchKernel(cuda::native_function(*spin), 1, 1, 1, 1, 1, 1, 0, s, params,
                            nullptr) == 0);
    REQUIRE(cu.MemsetD32Async(x, bits_of(value), n, s) == 0);
  }
};

std::vector<ArgValue> saxpy_args(const Buffer& x, const Buffer& y, float a, int n) {
  return {ArgValue::buf(*x, ElemType::f32, static_cast<std::uint64_t>(n)),
          ArgValue::buf(*y, ElemType::f32, static_cast<std::uint64_t>(n)), a, n};
}

}  // namespace

TEST_CASE("wrap_buffer: the application's memory, checked, never freed") {
  App app;
  const CUdeviceptr p = app.alloc(4096);
  {
    auto b = cuda::wrap_buffer(*app.dev, p, 4096);
    REQUIRE_MESSAGE(b.ok(), b.status().to_string());
    CHECK((*b)->size_bytes() == 4096);
    auto inner = cuda::wrap_buffer(*app.dev, p + 1024, 1024);
    CHECK(inner.ok());
    CHECK(cuda::wrap_buffer(*app.dev, p + 1024, 4096).status().code() ==
          StatusCode::invalid_argument);  // overruns the allocation
    CHECK(cuda::wrap_buffer(*app.dev, 0, 16).status().code() == StatusCode::invalid_argument);
    std::vector<float> host(1024, 3.0f);
    REQUIRE(app.dev->upload(**b, host.data(), 4096).ok());
  }
  // Still the application's: readable, then freed by it.
  CHECK(app.download(p, 1024)[1023] == 3.0f);
  CHECK(app.cu.MemFree(p) == 0);
}

TEST_CASE("external memory on a non-default stream: ordered with the application, CPU reference") {
  App app;
  constexpr int n = 1 << 20;
  const CUstream s = app.stream();
  const CUdeviceptr px = app.alloc(n * 4), py = app.alloc(n * 4), pz = app.alloc(n * 4);
  const auto y0 = random_floats(n, 5);
  app.upload(py, y0);
  app.upload(px, random_floats(n, 6));  // replaced by the application's fill below
  {
    auto x = cuda::wrap_buffer(*app.dev, px, n * 4).value();
    auto y = cuda::wrap_buffer(*app.dev, py, n * 4).value();
    auto tuner = Autotuner::make(saxpy(), interop_options()).value();
    const float a = 0.75f;
    const LaunchTarget target = LaunchTarget::stream(s);

    // A new key: tuning must see x = 1.25 (written after 50 ms of the application's work), and
    // the copy queued after run() must see the winner's output.
    app.slow_fill(s, px, 1.25f, n);
    Status st = tuner->run(*app.dev, saxpy_args(x, y, a, n), target);
    REQUIRE_MESSAGE(st.ok(), st.to_string());
    REQUIRE(app.cu.MemcpyDtoDAsync(pz, py, n * 4, s) == 0);
    REQUIRE(app.cu.StreamSynchronize(s) == 0);
    std::vector<float> want(n);
    for (int i = 0; i < n; ++i) want[static_cast<std::size_t>(i)] = a * 1.25f + y0[i];
    check_close(app.download(py, n), want);
    check_close(app.download(pz, n), want);
    REQUIRE(tuner->best(*app.dev, saxpy_args(x, y, a, n)).has_value());

    // A known key: the same ordering, with no synchronisation in libtune.
    app.slow_fill(s, px, -2.5f, n);
    REQUIRE(tuner->run(*app.dev, saxpy_args(x, y, a, n), target).ok());
    REQUIRE(app.cu.MemcpyDtoDAsync(pz, py, n * 4, s) == 0);
    REQUIRE(app.cu.StreamSynchronize(s) == 0);
    for (auto& w : want) w = a * -2.5f + w;
    check_close(app.download(py, n), want);
    check_close(app.download(pz, n), want);

    // The legacy default stream, named per call.
    REQUIRE(tuner->run(*app.dev, saxpy_args(x, y, a, n), LaunchTarget::stream(nullptr)).ok());
    REQUIRE(app.cu.CtxSynchronize() == 0);
    for (auto& w : want) w = a * -2.5f + w;
    check_close(app.download(py, n), want);
  }
  for (CUdeviceptr p : {px, py, pz}) CHECK(app.cu.MemFree(p) == 0);
  CHECK(app.cu.StreamDestroy(s) == 0);
}

TEST_CASE("graph capture: a hit is captured; a miss falls back without tuning, or is refused") {
  App app;
  constexpr int n = 1 << 20, small = 1 << 12;
  const CUstream s = app.stream();
  const CUdeviceptr px = app.alloc(n * 4), py = app.alloc(n * 4);
  const auto x0 = random_floats(n, 7), y0 = random_floats(n, 8);
  app.upload(px, x0);
  app.upload(py, y0);
  auto x = cuda::wrap_buffer(*app.dev, px, n * 4).value();
  auto y = cuda::wrap_buffer(*app.dev, py, n * 4).value();
  const float a = 0.5f;
  const LaunchTarget target = LaunchTarget::stream(s);
  auto tuner = Autotuner::make(saxpy(), interop_options()).value();
  // Tune n outside any capture (tune() launches nothing).
  REQUIRE(tuner->tune(*app.dev, saxpy_args(x, y, a, n), target).ok());
  REQUIRE(app.cu.StreamSynchronize(s) == 0);
  std::vector<float> want = y0;

  // Captured: the hit (n) and a miss (small: falls back to n's configuration, not tuned).
  REQUIRE(app.cu.StreamBeginCapture(s, kCaptureGlobal) == 0);
  Status hit = tuner->run(*app.dev, saxpy_args(x, y, a, n), target);
  Status miss = tuner->run(*app.dev, saxpy_args(x, y, a, small), target);
  CUgraph graph = nullptr;
  REQUIRE(app.cu.StreamEndCapture(s, &graph) == 0);
  REQUIRE_MESSAGE(hit.ok(), hit.to_string());
  REQUIRE_MESSAGE(miss.ok(), miss.to_string());
  CHECK_FALSE(tuner->best(*app.dev, saxpy_args(x, y, a, small)).has_value());
  CUgraphExec exec = nullptr;
  REQUIRE(app.cu.GraphInstantiate(&exec, graph, 0) == 0);
  for (int rep = 0; rep < 2; ++rep) {
    REQUIRE(app.cu.GraphLaunch(exec, s) == 0);
    for (int i = 0; i < n; ++i) {
      auto& w = want[static_cast<std::size_t>(i)];
      w = a * x0[i] + w;
      if (i < small) w = a * x0[i] + w;
    }
  }
  REQUIRE(app.cu.StreamSynchronize(s) == 0);
  check_close(app.download(py, n), want);
  CHECK(app.cu.GraphExecDestroy(exec) == 0);
  CHECK(app.cu.GraphDestroy(graph) == 0);

  // A fresh tuner, nothing tuned: the first candidate, compiled during the capture (relaxed
  // mode: module loading is not a stream operation), launched untimed.
  auto fresh = Autotuner::make(saxpy(), interop_options()).value();
  REQUIRE(app.cu.StreamBeginCapture(s, kCaptureRelaxed) == 0);
  Status first = fresh->run(*app.dev, saxpy_args(x, y, a, n), target);
  REQUIRE(app.cu.StreamEndCapture(s, &graph) == 0);
  REQUIRE_MESSAGE(first.ok(), first.to_string());
  CHECK_FALSE(fresh->best(*app.dev, saxpy_args(x, y, a, n)).has_value());
  REQUIRE(app.cu.GraphInstantiate(&exec, graph, 0) == 0);
  REQUIRE(app.cu.GraphLaunch(exec, s) == 0);
  REQUIRE(app.cu.StreamSynchronize(s) == 0);
  for (int i = 0; i < n; ++i)
    want[static_cast<std::size_t>(i)] = a * x0[i] + want[static_cast<std::size_t>(i)];
  check_close(app.download(py, n), want);
  CHECK(app.cu.GraphExecDestroy(exec) == 0);
  CHECK(app.cu.GraphDestroy(graph) == 0);

  // CaptureMiss::error: refused, the capture is left intact.
  auto opts = interop_options();
  opts.capture_miss = CaptureMiss::error;
  auto strict = Autotuner::make(saxpy(), opts).value();
  REQUIRE(app.cu.StreamBeginCapture(s, kCaptureGlobal) == 0);
  Status refused = strict->run(*app.dev, saxpy_args(x, y, a, n), target);
  REQUIRE(app.cu.StreamEndCapture(s, &graph) == 0);
  CHECK(refused.code() == StatusCode::failed_precondition);
  CHECK(refused.message().find("tune before capturing") != std::string::npos);
  CHECK(app.cu.GraphDestroy(graph) == 0);
  x.reset();
  y.reset();
  CHECK(app.cu.MemFree(px) == 0);
  CHECK(app.cu.MemFree(py) == 0);
  CHECK(app.cu.StreamDestroy(s) == 0);
}

namespace {

// `threads` application threads on one tuner, each with its own stream and its own buffers,
// over three keys (n = 2^14, 2^16, 2^18; one tuned before the threads start): each thread
// visits them in its own order for six rounds, so a key is new to the first thread that meets
// it while others find it tuned (or wait for it). Every thread's output is checked against
// its own CPU reference.
void many_streams(App& app, int threads) {
  constexpr int kMaxN = 1 << 18;
  constexpr int kRounds = 6;
  const int sizes[] = {1 << 14, 1 << 16, 1 << 18};
  auto tuner = Autotuner::make(saxpy(), interop_options()).value();
  {
    // The largest key is known before any thread starts.
    const CUdeviceptr px = app.alloc(kMaxN * 4), py = app.alloc(kMaxN * 4);
    auto x = cuda::wrap_buffer(*app.dev, px, kMaxN * 4).value();
    auto y = cuda::wrap_buffer(*app.dev, py, kMaxN * 4).value();
    REQUIRE(tuner->tune(*app.dev, saxpy_args(x, y, 1.0f, kMaxN)).ok());
    x.reset();
    y.reset();
    REQUIRE(app.cu.MemFree(px) == 0);
    REQUIRE(app.cu.MemFree(py) == 0);
  }
  std::vector<std::string> errors(static_cast<std::size_t>(threads));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::string& error = errors[static_cast<std::size_t>(t)];
      if (app.cu.CtxSetCurrent(app.ctx) != 0) {
        error = "cuCtxSetCurrent failed";
        return;
      }
      CUstream s = nullptr;
      CUdeviceptr px = 0, py = 0;
      if (app.cu.StreamCreate(&s, kStreamNonBlocking) != 0 ||
          app.cu.MemAlloc(&px, kMaxN * 4) != 0 || app.cu.MemAlloc(&py, kMaxN * 4) != 0) {
        error = "the application's stream or memory";
        return;
      }
      std::vector<float> want =
          random_floats(kMaxN, 50 + static_cast<std::uint32_t>(t));  // y, as it must end
      (void)app.cu.MemcpyHtoD(py, want.data(), kMaxN * 4);
      {
        auto x = cuda::wrap_buffer(*app.dev, px, kMaxN * 4);
        auto y = cuda::wrap_buffer(*app.dev, py, kMaxN * 4);
        if (!x.ok() || !y.ok()) error = "wrap_buffer failed";
        for (int round = 0; error.empty() && round < kRounds; ++round) {
          const int n = sizes[(t + round) % 3];
          const float v = static_cast<float>(t + 1) * 0.25f + static_cast<float>(round);
          if (app.cu.MemsetD32Async(px, bits_of(v), static_cast<std::size_t>(n), s) != 0) {
            error = "cuMemsetD32Async failed";
            break;
          }
          Status st = tuner->run(*app.dev, saxpy_args(*x, *y, 2.0f, n), LaunchTarget::stream(s));
          if (!st.ok()) {
            error = "round " + std::to_string(round) + " (n " + std::to_string(n) +
                    "): " + st.to_string();
            break;
          }
          for (int i = 0; i < n; ++i) want[static_cast<std::size_t>(i)] += 2.0f * v;
        }
        std::vector<float> got(kMaxN);
        if (error.empty() &&
            (app.cu.StreamSynchronize(s) != 0 || app.cu.MemcpyDtoH(got.data(), py, kMaxN * 4) != 0))
          error = "reading y back failed";
        if (error.empty()) error = mismatches(got.data(), want);
      }  // the wrappers go before the memory
      (void)app.cu.MemFree(px);
      (void)app.cu.MemFree(py);
      (void)app.cu.StreamDestroy(s);
    });
  }
  for (auto& th : pool) th.join();
  for (int t = 0; t < threads; ++t) {
    CAPTURE(t);
    CHECK_MESSAGE(errors[static_cast<std::size_t>(t)].empty(), errors[static_cast<std::size_t>(t)]);
  }
}

}  // namespace

TEST_CASE("one application thread on its own stream, keys new and known, every output right") {
  App app;
  many_streams(app, 1);
}

TEST_CASE("eight application threads on their own streams, keys new to some and known to others") {
  App app;
  many_streams(app, 8);
}

TEST_CASE("a miss captured in global mode with nothing tuned launches the first candidate") {
  App app;
  constexpr int n = 1 << 16;
  const CUstream s = app.stream();
  const CUdeviceptr px = app.alloc(n * 4), py = app.alloc(n * 4);
  const auto x0 = random_floats(n, 11), y0 = random_floats(n, 12);
  app.upload(px, x0);
  app.upload(py, y0);
  {
    auto x = cuda::wrap_buffer(*app.dev, px, n * 4).value();
    auto y = cuda::wrap_buffer(*app.dev, py, n * 4).value();
    const float a = 1.5f;
    auto fresh = Autotuner::make(saxpy(), interop_options()).value();  // nothing compiled
    REQUIRE(app.cu.StreamBeginCapture(s, kCaptureGlobal) == 0);
    Status first = fresh->run(*app.dev, saxpy_args(x, y, a, n), LaunchTarget::stream(s));
    CUgraph graph = nullptr;
    const CUresult ended = app.cu.StreamEndCapture(s, &graph);
    REQUIRE_MESSAGE(first.ok(), first.to_string());
    REQUIRE_MESSAGE(ended == 0, "the capture was invalidated: cuStreamEndCapture " << ended);
    CHECK_FALSE(fresh->best(*app.dev, saxpy_args(x, y, a, n)).has_value());
    CUgraphExec exec = nullptr;
    REQUIRE(app.cu.GraphInstantiate(&exec, graph, 0) == 0);
    REQUIRE(app.cu.GraphLaunch(exec, s) == 0);
    REQUIRE(app.cu.StreamSynchronize(s) == 0);
    std::vector<float> want(n);
    for (int i = 0; i < n; ++i) want[static_cast<std::size_t>(i)] = a * x0[i] + y0[i];
    check_close(app.download(py, n), want);
    CHECK(app.cu.GraphExecDestroy(exec) == 0);
    CHECK(app.cu.GraphDestroy(graph) == 0);
  }
  CHECK(app.cu.MemFree(px) == 0);
  CHECK(app.cu.MemFree(py) == 0);
  CHECK(app.cu.StreamDestroy(s) == 0);
}

TEST_CASE("two contexts: the application's current context is its own after every call") {
  App app;  // libtune on device 0's primary context
  constexpr int n = 1 << 16;
  const CUstream s = app.stream();  // a stream of the primary context
  const CUdeviceptr px = app.alloc(n * 4), py = app.alloc(n * 4);
  const auto x0 = random_floats(n, 13), y0 = random_floats(n, 14);
  app.upload(px, x0);
  app.upload(py, y0);
  // A second context of the application, current on this thread from here on.
  CUcontext other = nullptr;
  REQUIRE(app.cu.CtxCreate(&other, 0, app.device) == 0);
  auto current = [&] {
    CUcontext c = nullptr;
    REQUIRE(app.cu.CtxGetCurrent(&c) == 0);
    return c;
  };
  REQUIRE(current() == other);
  {
    auto x = cuda::wrap_buffer(*app.dev, px, n * 4).value();
    CHECK(current() == other);
    auto y = cuda::wrap_buffer(*app.dev, py, n * 4).value();
    auto tuner = Autotuner::make(saxpy(), interop_options()).value();
    const float a = 0.25f;
    std::vector<float> want = y0;
    for (int call = 0; call < 2; ++call) {  // a miss (tuned on libtune's stream), then a hit
      CAPTURE(call);
      Status st = tuner->run(*app.dev, saxpy_args(x, y, a, n), LaunchTarget::stream(s));
      REQUIRE_MESSAGE(st.ok(), st.to_string());
      CHECK(current() == other);
      for (int i = 0; i < n; ++i) want[static_cast<std::size_t>(i)] += a * x0[i];
    }
    // The application waits for its stream in its primary context, then makes `other` current
    // again for libtune's blocking calls.
    app.current();
    REQUIRE(app.cu.StreamSynchronize(s) == 0);
    REQUIRE(app.cu.CtxSetCurrent(other) == 0);
    std::vector<float> got(n);
    REQUIRE(app.dev->download(*y, got.data(), n * 4).ok());
    CHECK(current() == other);
    check_close(got, want);
    REQUIRE(app.dev->synchronize().ok());
    CHECK(current() == other);
  }
  CHECK(app.cu.CtxDestroy(other) == 0);
  app.current();
  CHECK(app.cu.MemFree(px) == 0);
  CHECK(app.cu.MemFree(py) == 0);
  CHECK(app.cu.StreamDestroy(s) == 0);
}

TEST_CASE("the application's stream as the device's queue: tuned and run there, never destroyed") {
  Status st = cuda::driver_status();
  if (!st.ok()) TUNE_SKIP("no CUDA driver: " + st.to_string());
  App probe;  // resolves the entry points and makes the primary context current
  CUstream s = probe.stream();
  {
    cuda::OpenOptions options;
    options.stream = s;
    options.use_stream = true;
    auto opened = cuda::open_device(options);
    REQUIRE_MESSAGE(opened.ok(), opened.status().to_string());
    auto& dev = **opened;
    CHECK(cuda::native_stream(dev) == s);
    constexpr int n = 1 << 16;
    const auto x0 = random_floats(n, 9), y0 = random_floats(n, 10);
    auto x = dev.alloc(n * 4).value();
    auto y = dev.alloc(n * 4).value();
    REQUIRE(dev.upload(*x, x0.data(), n * 4).ok());
    REQUIRE(dev.upload(*y, y0.data(), n * 4).ok());
    auto tuner = Autotuner::make(saxpy(), interop_options()).value();
    REQUIRE(tuner->run(dev, saxpy_args(x, y, 3.0f, n)).ok());
    std::vector<float> got(n), want(n);
    REQUIRE(dev.download(*y, got.data(), n * 4).ok());
    for (int i = 0; i < n; ++i) want[static_cast<std::size_t>(i)] = 3.0f * x0[i] + y0[i];
    check_close(got, want);
  }
  CHECK(probe.cu.StreamSynchronize(s) == 0);  // still a valid stream
  CHECK(probe.cu.StreamDestroy(s) == 0);
}
