// bench_cuda: libtune's CUDA backend against raw launches, cuBLAS and the copy ceiling.
//
//   bench_cuda                       everything below, then a summary table of ratios
//   bench_cuda --benchmark_filter=X  Google Benchmark's usual flags
//   bench_cuda --verify-cost[=MB]    tuning with and without verification, side by side
//                                    (bench/verify_cost.hpp; default 256 MiB; rounds:
//                                    --verify-rounds=N, default 3)
//   bench_cuda --cold-floor[=ROUNDS] the 16-config fp16 matmul 4096^3 tuned cold against its
//                                    floor (bench/cold_floor.hpp; set CUDA_CACHE_DISABLE=1)
//   bench_cuda --interleaved         the app-stream dispatch pair measured interleaved in one
//                                    loop (bench/interleaved_pair.hpp); prints a table
//   bench_cuda --matmul-hopper       issue 16 on an sm_90 GPU: the wgmma matmuls (tuned), the
//                                    mma.sync matmul_f16 (tuned) and cuBLAS, fp16 and bf16, at
//                                    4096^3, 8192^3, 8192x8192x512 and 3001x4104x2056, in
//                                    TFLOP/s; the tuner's pick against the best of the whole
//                                    space (screened alone, then the winner, the best, cuBLAS
//                                    and mma.sync timed interleaved: same clocks for all);
//                                    tuning time cold and warm; every output checked against
//                                    the CPU reference. Also timed: the best of the space
//                                    without the TMA-store epilogue (WG_TMA_STORE). Options:
//                                    --shapes=MxNxK[,MxNxK...] (instead of those four and the
//                                    copy path's 4095x4097x4095), --types=f16|bf16,
//                                    --no-mma-sync, --no-tuning-time, --screen (each
//                                    configuration's screening time, one line each)
//
// Figures (issue 4): dispatch overhead of an autotuned call on a cache hit vs a raw
// cuLaunchKernel of the same CUfunction, on libtune's queue and (issue 13) on the application's
// stream with its own memory; tuning time of the 16-config fp16 matmul at 4096^3 in
// a fresh process with cold caches (compiling included) and in a second fresh process with the
// caches warm (both run as child processes of this one, sharing a new TUNE_CACHE_DIR); tuned vs
// default config vs cuBLAS for fp16 matmul 4096^3 and 8192^3 and fp32 matmul 4096^3 (SGEMM,
// no TF32); vector add 2^26 vs a device-to-device copy. Kernel times are medians of
// event-timed launches with L2 flushed before each, through the same Device::time() the
// tuner uses; cuBLAS and the copy are timed the same way with events on the same stream.
// Without a CUDA driver or device it prints why and exits with status 77.
#include <benchmark/benchmark.h>
#include <cublas_v2.h>
#include <cuda.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cold_floor.hpp"
#include "gpu_device.hpp"
#include "interleaved_contenders.hpp"
#include "interleaved_pair.hpp"
#include "tune/cuda.hpp"
#include "tune/kernels/bundled.hpp"
#include "tune/tune.hpp"
#include "verify_cost.hpp"

namespace {

using Clock = std::chrono::steady_clock;

tune::Device* g_dev = nullptr;
tune::Buffer g_flush;  // L2 flush scratch for cuBLAS/copy timings; freed before the device
std::vector<tune::kernels::BundledKernel> g_kernels;
std::map<std::string, double> g_results;  // summary figures, printed at the end

const tune::kernels::BundledKernel& kernel(const std::string& name) {
  for (const auto& k : g_kernels)
    if (k.name == name) return k;
  std::fprintf(stderr, "bench_cuda: no bundled kernel %s\n", name.c_str());
  std::exit(1);
}

void die(const std::string& what, const tune::Status& s) {
  std::fprintf(stderr, "bench_cuda: %s: %s\n", what.c_str(), s.to_string().c_str());
  std::exit(1);
}

void check(CUresult rc, const char* what) {
  if (rc == CUDA_SUCCESS) return;
  std::fprintf(stderr, "bench_cuda: %s failed: CUresult %d\n", what, static_cast<int>(rc));
  std::exit(1);
}

template <class T>
T must(tune::Result<T> r, const std::string& what) {
  if (!r.ok()) die(what, r.status());
  return std::move(*r);
}

// Driver entry points the bench calls directly (the library loaded the driver already).
struct Raw {
  decltype(&::cuLaunchKernel) launch;
  decltype(&::cuEventCreate) event_create;
  decltype(&::cuEventDestroy) event_destroy;
  decltype(&::cuEventRecord) event_record;
  decltype(&::cuEventSynchronize) event_sync;
  decltype(&::cuEventElapsedTime) elapsed;
  decltype(&::cuMemcpyDtoDAsync) copy;
  decltype(&::cuStreamSynchronize) sync;
  // The application's side of the interop figures: its context, memory and stream.
  decltype(&::cuDevicePrimaryCtxRetain) primary_retain;
  decltype(&::cuDevicePrimaryCtxRelease) primary_release;
  decltype(&::cuCtxSetCurrent) set_current;
  decltype(&::cuMemAlloc) mem_alloc;
  decltype(&::cuMemFree) mem_free;
  decltype(&::cuStreamCreate) stream_create;
  decltype(&::cuStreamDestroy) stream_destroy;
};

#define BENCH_STR2(x) #x
#define BENCH_STR(x) BENCH_STR2(x)  // cuda.h's versioned names (cuEventElapsedTime_v2 ...)
template <class F>
F sym(const char* name) {
  void* p = tune::cuda::driver_symbol(name);
  if (p == nullptr) {
    std::fprintf(stderr, "bench_cuda: driver lacks %s\n", name);
    std::exit(1);
  }
  return reinterpret_cast<F>(p);
}
Raw load_raw() {
  return Raw{sym<decltype(&::cuLaunchKernel)>(BENCH_STR(cuLaunchKernel)),
             sym<decltype(&::cuEventCreate)>(BENCH_STR(cuEventCreate)),
             sym<decltype(&::cuEventDestroy)>(BENCH_STR(cuEventDestroy)),
             sym<decltype(&::cuEventRecord)>(BENCH_STR(cuEventRecord)),
             sym<decltype(&::cuEventSynchronize)>(BENCH_STR(cuEventSynchronize)),
             sym<decltype(&::cuEventElapsedTime)>(BENCH_STR(cuEventElapsedTime)),
             sym<decltype(&::cuMemcpyDtoDAsync)>(BENCH_STR(cuMemcpyDtoDAsync)),
             sym<decltype(&::cuStreamSynchronize)>(BENCH_STR(cuStreamSynchronize)),
             sym<decltype(&::cuDevicePrimaryCtxRetain)>(BENCH_STR(cuDevicePrimaryCtxRetain)),
             sym<decltype(&::cuDevicePrimaryCtxRelease)>(BENCH_STR(cuDevicePrimaryCtxRelease)),
             sym<decltype(&::cuCtxSetCurrent)>(BENCH_STR(cuCtxSetCurrent)),
             sym<decltype(&::cuMemAlloc)>(BENCH_STR(cuMemAlloc)),
             sym<decltype(&::cuMemFree)>(BENCH_STR(cuMemFree)),
             sym<decltype(&::cuStreamCreate)>(BENCH_STR(cuStreamCreate)),
             sym<decltype(&::cuStreamDestroy)>(BENCH_STR(cuStreamDestroy))};
}

CUdeviceptr ptr_of(const tune::DeviceBuffer& b) {
  return static_cast<const tune::gpu::GpuBuffer&>(b).ptr();
}
CUstream stream() { return static_cast<CUstream>(tune::cuda::native_stream(*g_dev)); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// Device times (ns) of `reps` launches of `fn` enqueued on the device stream, L2 flushed
// before each, after two warm-up launches.
template <class Fn>
std::vector<double> samples_on_stream(const Raw& raw, int reps, Fn fn) {
  if (!g_flush) {
    const std::uint64_t bytes = std::max<std::uint64_t>(g_dev->info().l2_bytes, 64ull << 20);
    g_flush = must(g_dev->alloc(bytes & ~std::uint64_t{3}), "L2 flush buffer");
  }
  tune::DeviceBuffer* flush = g_flush.get();
  CUevent start = nullptr, end = nullptr;
  raw.event_create(&start, CU_EVENT_DEFAULT);
  raw.event_create(&end, CU_EVENT_DEFAULT);
  std::vector<double> ns;
  for (int r = 0; r < reps + 2; ++r) {  // two warmup reps
    if (auto s = g_dev->fill(*flush, static_cast<std::uint32_t>(r), flush->size_bytes(), 0);
        !s.ok())
      die("L2 flush", s);
    raw.event_record(start, stream());
    fn();
    raw.event_record(end, stream());
    raw.event_sync(end);
    float ms = 0;
    raw.elapsed(&ms, start, end);
    if (r >= 2) ns.push_back(ms * 1e6);
  }
  raw.event_destroy(start);
  raw.event_destroy(end);
  return ns;
}

// Median device time (ns) of `fn` enqueued on the device stream, L2 flushed before each rep.
template <class Fn>
double time_on_stream(const Raw& raw, int reps, Fn fn) {
  return median(samples_on_stream(raw, reps, fn));
}

std::unique_ptr<tune::CompiledKernel> compile_variant(const tune::kernels::BundledKernel& k,
                                                      const tune::Config& c) {
  return must(g_dev->compile(*k.def.source_for(tune::Language::cuda_hip), c),
              "compile " + k.name + " " + c.to_string());
}

// Device times (ns) of `reps` launches of a compiled variant through Device::time() (the
// tuner's own timing: L2 flushed, outputs reset), after one untimed batch.
std::vector<double> variant_samples(const tune::kernels::BundledKernel& k,
                                    const tune::CompiledKernel& ck, const tune::Config& c,
                                    tune::kernels::Workload& w, int reps) {
  tune::TimingPlan plan;
  plan.reps = reps;
  plan.resets = must(k.def.zero_resets(w.args()), "reset_to_zero " + k.name);
  (void)must(g_dev->time(ck, k.def.dims(c, w.args()), w.args(), plan), "warmup " + k.name);
  return must(g_dev->time(ck, k.def.dims(c, w.args()), w.args(), plan), "time " + k.name);
}

double time_variant(const tune::kernels::BundledKernel& k, const tune::Config& c,
                    tune::kernels::Workload& w, int reps) {
  auto ck = compile_variant(k, c);
  tune::TimingPlan plan;
  plan.reps = reps;
  plan.resets = must(k.def.zero_resets(w.args()), "reset_to_zero " + k.name);
  (void)must(g_dev->time(*ck, k.def.dims(c, w.args()), w.args(), plan), "warmup " + k.name);
  auto t = must(g_dev->time(*ck, k.def.dims(c, w.args()), w.args(), plan), "time " + k.name);
  if (auto s = w.check(*g_dev); !s.ok()) die(k.name + " " + c.to_string() + " output", s);
  return median(t);
}

std::unique_ptr<tune::Autotuner> make_tuner(const tune::kernels::BundledKernel& k,
                                            bool persistent) {
  tune::AutotunerOptions opts;
  opts.persistent = persistent;
  return must(tune::Autotuner::make(k.def, opts), "autotuner " + k.name);
}

// ---- dispatch overhead ---------------------------------------------------------------------

constexpr std::int64_t kDispatchN = 1 << 12;  // a tiny launch: the GPU keeps up with the host

void BM_dispatch_autotuned(benchmark::State& state) {
  const auto& k = kernel("vector_add");
  auto w = k.workload(std::vector<std::int64_t>{kDispatchN});
  if (auto s = w->setup(*g_dev, 1); !s.ok()) die("setup", s);
  auto tuner = make_tuner(k, false);
  if (auto s = tuner->run(*g_dev, w->args()); !s.ok()) die("tuning vector_add", s);
  (void)g_dev->synchronize();
  std::int64_t i = 0;
  for (auto _ : state) {
    if (auto s = tuner->run(*g_dev, w->args()); !s.ok()) die("run", s);
    if (++i % 512 == 0) {  // keep the queue from filling; host launch time only
      state.PauseTiming();
      (void)g_dev->synchronize();
      state.ResumeTiming();
    }
  }
  (void)g_dev->synchronize();
  state.SetItemsProcessed(state.iterations());
}

void BM_dispatch_raw(benchmark::State& state) {
  const Raw raw = load_raw();
  const auto& k = kernel("vector_add");
  auto w = k.workload(std::vector<std::int64_t>{kDispatchN});
  if (auto s = w->setup(*g_dev, 1); !s.ok()) die("setup", s);
  auto tuner = make_tuner(k, false);
  const tune::Config best = must(tuner->tune(*g_dev, w->args()), "tune vector_add");
  auto ck = must(g_dev->compile(*k.def.source_for(tune::Language::cuda_hip), best), "compile");
  auto f = static_cast<CUfunction>(tune::cuda::native_function(*ck));
  const tune::LaunchDims d = k.def.dims(best, w->args());
  CUdeviceptr a = ptr_of(*w->args()[0].buffer), b = ptr_of(*w->args()[1].buffer),
              c = ptr_of(*w->args()[2].buffer);
  int n = static_cast<int>(kDispatchN);
  void* params[] = {&a, &b, &c, &n};
  std::int64_t i = 0;
  for (auto _ : state) {
    if (raw.launch(f, d.grid.x, d.grid.y, d.grid.z, d.block.x, d.block.y, d.block.z, d.shared_bytes,
                   stream(), params, nullptr) != CUDA_SUCCESS) {
      state.SkipWithError("cuLaunchKernel failed");
      break;
    }
    if (++i % 512 == 0) {
      state.PauseTiming();
      raw.sync(stream());
      state.ResumeTiming();
    }
  }
  raw.sync(stream());
  state.SetItemsProcessed(state.iterations());
}

// ---- dispatch on the application's stream and memory (issue 13) ----------------------------
//
// The same pair as above, the way a CUDA application calls libtune: vector_add's three buffers
// are the application's (cuMemAlloc in device 0's primary context, the one g_dev uses, wrapped
// with cuda::wrap_buffer) and every launch goes on a stream of the application's
// (LaunchTarget::stream). BM_stream_dispatch_autotuned is a cache hit of
// Autotuner::run(dev, args, LaunchTarget::stream(s)); BM_stream_dispatch_raw is cuLaunchKernel
// of the winner's CUfunction with the same pointers on the same stream.

struct AppSide {
  Raw raw = load_raw();
  CUdevice device = 0;
  CUcontext ctx = nullptr;
  CUstream stream = nullptr;
  CUdeviceptr ptr[3] = {};  // a, b, c
  tune::Buffer wrapped[3];
  std::unique_ptr<tune::Autotuner> tuner;
  std::unique_ptr<tune::CompiledKernel> best;  // the winner, compiled again for the raw launch
  tune::LaunchDims dims;
  std::vector<tune::ArgValue> args;

  AppSide() {
    check(raw.primary_retain(&ctx, device), "cuDevicePrimaryCtxRetain");
    check(raw.set_current(ctx), "cuCtxSetCurrent");
    check(raw.stream_create(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    const std::uint64_t bytes = kDispatchN * sizeof(float);
    for (int i = 0; i < 3; ++i) {
      check(raw.mem_alloc(&ptr[i], bytes), "cuMemAlloc");
      wrapped[i] = must(tune::cuda::wrap_buffer(*g_dev, ptr[i], bytes), "wrap_buffer");
      if (auto s = g_dev->fill(*wrapped[i], 0x3f800000u, bytes); !s.ok()) die("fill", s);  // 1.0f
      args.push_back(tune::ArgValue::buf(*wrapped[i], tune::ElemType::f32, kDispatchN));
    }
    args.emplace_back(static_cast<int>(kDispatchN));
    const auto& k = kernel("vector_add");
    tuner = make_tuner(k, false);
    const auto target = tune::LaunchTarget::stream(stream);
    if (auto s = tuner->run(*g_dev, args, target); !s.ok()) die("tuning vector_add on a stream", s);
    raw.sync(stream);
    const tune::Config config = *tuner->best(*g_dev, args);
    best = must(g_dev->compile(*k.def.source_for(tune::Language::cuda_hip), config), "compile");
    dims = k.def.dims(config, args);
  }
  ~AppSide() {
    raw.sync(stream);
    tuner.reset();
    best.reset();
    for (int i = 0; i < 3; ++i) {
      wrapped[i].reset();  // before the memory it names
      raw.mem_free(ptr[i]);
    }
    raw.stream_destroy(stream);
    raw.primary_release(device);
  }
};
std::unique_ptr<AppSide> g_app;  // built by the first of the pair, destroyed before the device

AppSide& app_side() {
  if (!g_app) g_app = std::make_unique<AppSide>();
  return *g_app;
}

void BM_stream_dispatch_autotuned(benchmark::State& state) {
  AppSide& app = app_side();
  const auto target = tune::LaunchTarget::stream(app.stream);
  std::int64_t i = 0;
  for (auto _ : state) {
    if (auto s = app.tuner->run(*g_dev, app.args, target); !s.ok()) die("run on the stream", s);
    if (++i % 512 == 0) {  // keep the stream from filling; host launch time only
      state.PauseTiming();
      app.raw.sync(app.stream);
      state.ResumeTiming();
    }
  }
  app.raw.sync(app.stream);
  state.SetItemsProcessed(state.iterations());
}

void BM_stream_dispatch_raw(benchmark::State& state) {
  AppSide& app = app_side();
  auto f = static_cast<CUfunction>(tune::cuda::native_function(*app.best));
  const tune::LaunchDims& d = app.dims;
  int n = static_cast<int>(kDispatchN);
  void* params[] = {&app.ptr[0], &app.ptr[1], &app.ptr[2], &n};
  std::int64_t i = 0;
  for (auto _ : state) {
    if (app.raw.launch(f, d.grid.x, d.grid.y, d.grid.z, d.block.x, d.block.y, d.block.z,
                       d.shared_bytes, app.stream, params, nullptr) != CUDA_SUCCESS) {
      state.SkipWithError("cuLaunchKernel failed");
      break;
    }
    if (++i % 512 == 0) {
      state.PauseTiming();
      app.raw.sync(app.stream);
      state.ResumeTiming();
    }
  }
  app.raw.sync(app.stream);
  state.SetItemsProcessed(state.iterations());
}

// bench_cuda --interleaved: the stream pair above measured interleaved in one loop
// (bench/interleaved_pair.hpp): batches of 64 launches per side, the stream synchronised
// before each batch (outside the timed span), so no launch waits on a full queue whatever the
// GPU clock; the per-launch host time of both sides is taken under the same machine state.
int stream_pair_interleaved() {
  AppSide& app = app_side();
  const auto target = tune::LaunchTarget::stream(app.stream);
  auto f = static_cast<CUfunction>(tune::cuda::native_function(*app.best));
  const tune::LaunchDims& d = app.dims;
  int n = static_cast<int>(kDispatchN);
  void* params[] = {&app.ptr[0], &app.ptr[1], &app.ptr[2], &n};
  auto report = [](const tune::Status& s) {
    if (!s.ok()) std::fprintf(stderr, "bench_cuda: %s\n", s.to_string().c_str());
    return s.ok();
  };
  auto hit = [&] { return report(app.tuner->run(*g_dev, app.args, target)); };
  auto backend = [&] { return report(g_dev->launch_on(*app.best, d, app.args, target)); };
  auto raw = [&] {
    const bool launched =
        app.raw.launch(f, d.grid.x, d.grid.y, d.grid.z, d.block.x, d.block.y, d.block.z,
                       d.shared_bytes, app.stream, params, nullptr) == CUDA_SUCCESS;
    if (!launched) std::fprintf(stderr, "bench_cuda: cuLaunchKernel failed\n");
    return launched;
  };
  auto sync = [&] { app.raw.sync(app.stream); };
  // The pair, then its decomposition: the backend's launch alone (no Autotuner) against the
  // raw launch, and the harness against itself (its own bias: both sides equal).
  tune::bench::PairFigure fig, fb, fc;
  if (!tune::bench::measure_pair(2000, 64, 50, hit, raw, sync, &fig) ||
      !tune::bench::measure_pair(2000, 64, 50, backend, raw, sync, &fb) ||
      !tune::bench::measure_pair(2000, 64, 50, raw, raw, sync, &fc))
    return 1;
  std::printf("device: %s, driver %s\n", g_dev->info().name.c_str(),
              g_dev->info().driver_version.c_str());
  tune::bench::print_pair_header();
  tune::bench::print_pair("vector_add on the app's stream: Autotuner::run vs cuLaunchKernel", fig);
  tune::bench::print_pair("  the backend alone: Device::launch_on vs cuLaunchKernel", fb);
  tune::bench::print_pair("  control: cuLaunchKernel vs itself (the harness's bias)", fc);
  return 0;
}

// ---- tuning time: two fresh processes sharing one new cache directory ----------------------

int tuning_child(const std::string& name) {
  const auto& k = kernel(name);
  auto w = k.workload(std::vector<std::int64_t>{4096, 4096, 4096});
  if (auto s = w->setup(*g_dev, 3); !s.ok()) die("setup", s);
  if (auto s = g_dev->synchronize(); !s.ok()) die("sync", s);
  auto tuner = make_tuner(k, true);
  const auto t0 = Clock::now();
  if (auto s = tuner->run(*g_dev, w->args()); !s.ok()) die("tuning " + name, s);
  if (auto s = g_dev->synchronize(); !s.ok()) die("sync", s);
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  auto report = tuner->last_report(*g_dev, w->args());
  std::printf("TUNING seconds=%.4f source=%s winner=%s\n", seconds,
              report ? std::string(tune::to_string(report->source)).c_str() : "?",
              report ? report->winner.to_string().c_str() : "?");
  if (report) std::fprintf(stderr, "%s\n", report->to_string().c_str());
  return 0;
}

// Runs this binary as `--tuning-child <kernel>` and returns the seconds it reports.
double run_tuning_child(const std::string& cache_dir, const std::string& kernel_name,
                        std::string* line) {
  std::string cmd = "TUNE_CACHE_DIR='" + cache_dir + "' /proc/" + std::to_string(::getpid()) +
                    "/exe --tuning-child " + kernel_name;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return -1;
  char buf[4096];
  double seconds = -1;
  while (std::fgets(buf, sizeof buf, p) != nullptr) {
    std::string s(buf);
    if (s.rfind("TUNING ", 0) == 0) {
      *line = s;
      seconds = std::atof(s.c_str() + s.find('=') + 1);
    }
  }
  ::pclose(p);
  return seconds;
}

void BM_tuning_time_f16_4096(benchmark::State& state) {
  for (auto _ : state) {
    char tmpl[] = "/tmp/libtune-bench-cache-XXXXXX";
    const char* dir = ::mkdtemp(tmpl);
    if (dir == nullptr) {
      state.SkipWithError("mkdtemp failed");
      return;
    }
    std::string cold_line, warm_line;
    const double cold = run_tuning_child(dir, "matmul_f16", &cold_line);
    const double warm = run_tuning_child(dir, "matmul_f16", &warm_line);
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    if (cold < 0 || warm < 0) {
      state.SkipWithError("a tuning child process failed (its stderr is above)");
      return;
    }
    std::printf("  cold: %s  warm: %s", cold_line.c_str(), warm_line.c_str());
    state.SetIterationTime(cold);
    state.counters["cold_s"] = cold;
    state.counters["warm_s"] = warm;
    g_results["tuning_cold_s"] = cold;
    g_results["tuning_warm_s"] = warm;
  }
}

// ---- tuned vs default vs vendor ------------------------------------------------------------

struct Gemm {
  const char* kernel;
  std::int64_t size;
  bool half;
};

void BM_matmul(benchmark::State& state, Gemm g) {
  const Raw raw = load_raw();
  const auto& k = kernel(g.kernel);
  auto w = k.workload(std::vector<std::int64_t>{g.size, g.size, g.size});
  if (auto s = w->setup(*g_dev, 5); !s.ok()) die("setup", s);
  auto tuner = make_tuner(k, true);
  const tune::Config best = must(tuner->tune(*g_dev, w->args()), std::string("tune ") + g.kernel);
  const int reps = 20;
  for (auto _ : state) {
    const double tuned = time_variant(k, best, *w, reps);
    const double dflt = time_variant(k, k.default_config, *w, reps);
    cublasHandle_t h = nullptr;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
      state.SkipWithError("cublasCreate failed");
      return;
    }
    cublasSetStream(h, reinterpret_cast<cudaStream_t>(stream()));
    cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);  // fp32: no TF32
    const int n = static_cast<int>(g.size);
    auto* A = reinterpret_cast<void*>(ptr_of(*w->args()[0].buffer));
    auto* B = reinterpret_cast<void*>(ptr_of(*w->args()[1].buffer));
    auto* C = reinterpret_cast<void*>(ptr_of(*w->args()[2].buffer));
    const float one = 1.0f, zero = 0.0f;
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    // Row-major C = A B is column-major C^T = B^T A^T: pass B first.
    const double vendor = time_on_stream(raw, reps, [&] {
      if (g.half) {
        st = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, B, CUDA_R_16F, n, A,
                          CUDA_R_16F, n, &zero, C, CUDA_R_16F, n, CUBLAS_COMPUTE_32F,
                          CUBLAS_GEMM_DEFAULT);
      } else {
        st = cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, static_cast<float*>(B), n,
                         static_cast<float*>(A), n, &zero, static_cast<float*>(C), n);
      }
    });
    cublasDestroy(h);
    if (st != CUBLAS_STATUS_SUCCESS) {
      state.SkipWithError("cuBLAS gemm failed");
      return;
    }
    if (auto s = w->check(*g_dev); !s.ok()) die("cuBLAS output vs CPU reference", s);
    const double tflop = w->flops() / 1e12;
    state.SetIterationTime(tuned * 1e-9);
    state.counters["tuned_TFLOPs"] = tflop / (tuned * 1e-9);
    state.counters["default_TFLOPs"] = tflop / (dflt * 1e-9);
    state.counters["cublas_TFLOPs"] = tflop / (vendor * 1e-9);
    state.counters["tuned_vs_cublas"] = vendor / tuned;
    state.SetLabel("winner " + best.to_string());
    const std::string key = std::string(g.kernel) + "_" + std::to_string(g.size);
    g_results[key + "_tuned_TFLOPs"] = tflop / (tuned * 1e-9);
    g_results[key + "_default_TFLOPs"] = tflop / (dflt * 1e-9);
    g_results[key + "_cublas_TFLOPs"] = tflop / (vendor * 1e-9);
  }
}

// ---- issue 16: the sm_90 wgmma matmuls against mma.sync and cuBLAS ------------------------

// cuBLAS on the workload's buffers: row-major C = A B is column-major C^T = B^T A^T, so B
// goes first. One handle on the device stream for the object's life.
class CublasMatmul {
 public:
  CublasMatmul(const Raw& raw, tune::kernels::Workload& w, const std::vector<std::int64_t>& s,
               cudaDataType type)
      : raw_(raw), w_(w), type_(type) {
    if (cublasCreate(&h_) != CUBLAS_STATUS_SUCCESS) die("cublasCreate", tune::Status());
    cublasSetStream(h_, reinterpret_cast<cudaStream_t>(stream()));
    m_ = static_cast<int>(s[0]);
    n_ = static_cast<int>(s[1]);
    k_ = static_cast<int>(s[2]);
  }
  ~CublasMatmul() { cublasDestroy(h_); }
  CublasMatmul(const CublasMatmul&) = delete;
  CublasMatmul& operator=(const CublasMatmul&) = delete;

  // Device times (ns) of `reps` L2-flushed calls.
  std::vector<double> samples(int reps) {
    auto* A = reinterpret_cast<void*>(ptr_of(*w_.args()[0].buffer));
    auto* B = reinterpret_cast<void*>(ptr_of(*w_.args()[1].buffer));
    auto* C = reinterpret_cast<void*>(ptr_of(*w_.args()[2].buffer));
    const float one = 1.0f, zero = 0.0f;
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    auto ns = samples_on_stream(raw_, reps, [&] {
      st = cublasGemmEx(h_, CUBLAS_OP_N, CUBLAS_OP_N, n_, m_, k_, &one, B, type_, n_, A, type_, k_,
                        &zero, C, type_, n_, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    });
    if (st != CUBLAS_STATUS_SUCCESS) die("cublasGemmEx failed", tune::Status());
    return ns;
  }

 private:
  const Raw& raw_;
  tune::kernels::Workload& w_;
  cudaDataType type_;
  cublasHandle_t h_ = nullptr;
  int m_ = 0, n_ = 0, k_ = 0;
};

// A contender's first round runs on poisoned outputs and is checked against the CPU reference.
tune::bench::Contender checked(std::string name, tune::kernels::Workload& w,
                               std::function<std::vector<double>()> round) {
  auto first = std::make_shared<bool>(true);
  return {name, [name, &w, round = std::move(round), first] {
            if (!*first) return round();
            *first = false;
            if (auto p = w.poison_outputs(*g_dev); !p.ok()) die("poison", p);
            auto ns = round();
            if (auto c = w.check(*g_dev); !c.ok()) die(name + " output vs CPU reference", c);
            return ns;
          }};
}

tune::Config tune_winner(const tune::kernels::BundledKernel& k, tune::kernels::Workload& w) {
  auto tuner = make_tuner(k, true);
  return must(tuner->tune(*g_dev, w.args()), "tune " + k.name);
}

// --matmul-hopper's options (see the top of this file).
struct HopperOptions {
  // The last default shape (N and K odd) is one TMA cannot address: the wgmma kernels' copy
  // path.
  std::vector<std::vector<std::int64_t>> shapes = {{4096, 4096, 4096},
                                                   {8192, 8192, 8192},
                                                   {8192, 8192, 512},
                                                   {3001, 4104, 2056},
                                                   {4095, 4097, 4095}};
  std::vector<bool> bf16 = {false, true};
  bool mma_sync = true, tuning_time = true, screen = false;
};

HopperOptions hopper_options(int argc, char** argv) {
  HopperOptions o;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.starts_with("--shapes=")) {
      o.shapes.clear();
      std::string list = a.substr(9);
      for (std::size_t at = 0; at <= list.size();) {
        const std::size_t end = std::min(list.find(',', at), list.size());
        long long m = 0, n = 0, k = 0;
        if (std::sscanf(list.substr(at, end - at).c_str(), "%lldx%lldx%lld", &m, &n, &k) != 3 ||
            m < 1 || n < 1 || k < 1)
          die("--shapes: '" + list.substr(at, end - at) + "' is not MxNxK", tune::Status());
        o.shapes.push_back({m, n, k});
        at = end + 1;
      }
    } else if (a == "--types=f16" || a == "--types=bf16") {
      o.bf16 = {a == "--types=bf16"};
    } else if (a == "--no-mma-sync") {
      o.mma_sync = false;
    } else if (a == "--no-tuning-time") {
      o.tuning_time = false;
    } else if (a == "--screen") {
      o.screen = true;
    } else {
      die("bench_cuda --matmul-hopper: unknown option '" + a + "'", tune::Status());
    }
  }
  return o;
}

int matmul_hopper(const HopperOptions& opt) {
  const tune::DeviceInfo& info = g_dev->info();
  if (info.arch != "sm_90") {
    std::fprintf(stderr, "bench_cuda --matmul-hopper: needs an sm_90 GPU; this is %s (%s)\n",
                 info.name.c_str(), info.arch.c_str());
    return 77;
  }
  const Raw raw = load_raw();
  const int reps = 20, rounds = 8;
  std::printf(
      "== matmul on %s (%s, %s, %s, %u SMs); TFLOP/s, medians of %d rounds x %d "
      "L2-flushed launches, contenders interleaved\n",
      info.name.c_str(), info.arch.c_str(), info.driver_version.c_str(),
      info.compiler_version.c_str(), info.compute_units, rounds, reps);
  std::printf("%-5s %-16s %8s %8s %8s %8s %8s %10s  %s\n", "type", "MxNxK", "wgmma", "no-store",
              "mma.sync", "cuBLAS", "wg/cuBLAS", "chosen/best",
              "wgmma winner (best of space; best without the TMA store)");
  for (const bool bf16 : opt.bf16) {
    const auto& wg = kernel(bf16 ? "matmul_wgmma_bf16" : "matmul_wgmma_f16");
    for (const auto& s : opt.shapes) {
      auto w = wg.workload(s);
      if (auto st = w->setup(*g_dev, 11); !st.ok()) die("setup", st);
      const double tflop = w->flops() / 1e12;
      const tune::Config winner = tune_winner(wg, *w);
      // A screen for the best of the whole space: each configuration timed alone (compiles
      // between them let the GPU cool, so these times are not compared with the winner's);
      // the figures come from the interleaved rounds below.
      double screen_ns = std::numeric_limits<double>::infinity(), plain_ns = screen_ns;
      tune::Config best = winner, plain = wg.default_config;
      for (const tune::Config& c : must(wg.def.space.enumerate(info), "enumerate")) {
        const double ns = time_variant(wg, c, *w, reps);
        if (opt.screen)
          std::printf("  screen %s %lldx%lldx%lld %.1f TFLOP/s %s\n", bf16 ? "bf16" : "f16",
                      static_cast<long long>(s[0]), static_cast<long long>(s[1]),
                      static_cast<long long>(s[2]), tflop / (ns * 1e-9), c.to_string().c_str());
        if (ns < screen_ns) {
          screen_ns = ns;
          best = c;
        }
        if (ns < plain_ns && c.find("WG_TMA_STORE") == nullptr) {
          plain_ns = ns;
          plain = c;
        }
      }
      auto ck_winner = compile_variant(wg, winner);
      auto ck_best = compile_variant(wg, best);
      auto ck_plain = compile_variant(wg, plain);
      CublasMatmul vendor(raw, *w, s, bf16 ? CUDA_R_16BF : CUDA_R_16F);
      std::vector<tune::bench::Contender> cs = {
          checked("wgmma winner", *w,
                  [&] { return variant_samples(wg, *ck_winner, winner, *w, reps); }),
          checked("wgmma best", *w, [&] { return variant_samples(wg, *ck_best, best, *w, reps); }),
          checked("cuBLAS", *w, [&] { return vendor.samples(reps); }),
          checked("wgmma best without the TMA store", *w,
                  [&] { return variant_samples(wg, *ck_plain, plain, *w, reps); })};
      // The mma.sync kernel (fp16 only) on its own workload, tuned the same way.
      std::unique_ptr<tune::kernels::Workload> wo;
      std::unique_ptr<tune::CompiledKernel> ck_old;
      tune::Config old_winner;
      const auto& old = kernel("matmul_f16");
      if (!bf16 && opt.mma_sync) {
        wo = old.workload(s);
        if (auto st = wo->setup(*g_dev, 11); !st.ok()) die("setup", st);
        old_winner = tune_winner(old, *wo);
        ck_old = compile_variant(old, old_winner);
        cs.push_back(checked("mma.sync", *wo,
                             [&] { return variant_samples(old, *ck_old, old_winner, *wo, reps); }));
      }
      const std::vector<double> med = tune::bench::interleaved_medians(cs, rounds);
      const double old_tflops = med.size() > 4 ? tflop / (med[4] * 1e-9) : -1;
      const std::string shape =
          std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" + std::to_string(s[2]);
      std::printf("%-5s %-16s %8.1f %8.1f %8.1f %8.1f %8.2f %10.3f  %s (%s; %s)\n",
                  bf16 ? "bf16" : "f16", shape.c_str(), tflop / (med[0] * 1e-9),
                  tflop / (med[3] * 1e-9), old_tflops, tflop / (med[2] * 1e-9), med[2] / med[0],
                  med[0] / med[1], winner.to_string().c_str(), best.to_string().c_str(),
                  plain.to_string().c_str());
      std::fflush(stdout);
    }
  }
  // Tuning time of the new space at 4096^3: a fresh process with empty caches (compiling
  // included), then a second fresh process with the caches warm.
  if (!opt.tuning_time) return 0;
  for (const char* name : {"matmul_wgmma_f16", "matmul_wgmma_bf16"}) {
    char tmpl[] = "/tmp/libtune-bench-cache-XXXXXX";
    const char* dir = ::mkdtemp(tmpl);
    if (dir == nullptr) return 1;
    std::string cold_line, warm_line;
    const double cold = run_tuning_child(dir, name, &cold_line);
    const double warm = run_tuning_child(dir, name, &warm_line);
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    std::printf("tuning %s 4096^3: cold %.2f s, warm %.3f s\n  cold: %s  warm: %s", name, cold,
                warm, cold_line.c_str(), warm_line.c_str());
  }
  return 0;
}

void BM_vector_add_vs_copy(benchmark::State& state) {
  const Raw raw = load_raw();
  const auto& k = kernel("vector_add");
  const std::int64_t n = std::int64_t{1} << 26;
  auto w = k.workload(std::vector<std::int64_t>{n});
  if (auto s = w->setup(*g_dev, 9); !s.ok()) die("setup", s);
  auto tuner = make_tuner(k, true);
  const tune::Config best = must(tuner->tune(*g_dev, w->args()), "tune vector_add");
  for (auto _ : state) {
    const double tuned = time_variant(k, best, *w, 50);
    const double dflt = time_variant(k, k.default_config, *w, 50);
    const std::uint64_t bytes = static_cast<std::uint64_t>(n) * 4;
    const double copy = time_on_stream(raw, 50, [&] {
      raw.copy(ptr_of(*w->args()[2].buffer), ptr_of(*w->args()[0].buffer), bytes, stream());
    });
    const double tuned_gbs = w->bytes() / tuned;  // bytes per ns = GB/s
    const double copy_gbs = 2.0 * static_cast<double>(bytes) / copy;
    state.SetIterationTime(tuned * 1e-9);
    state.counters["tuned_GBs"] = tuned_gbs;
    state.counters["default_GBs"] = w->bytes() / dflt;
    state.counters["copy_GBs"] = copy_gbs;
    state.counters["tuned_vs_copy"] = tuned_gbs / copy_gbs;
    state.SetLabel("winner " + best.to_string());
    g_results["vector_add_tuned_GBs"] = tuned_gbs;
    g_results["vector_add_default_GBs"] = w->bytes() / dflt;
    g_results["copy_GBs"] = copy_gbs;
  }
}

void print_summary() {
  auto get = [](const std::string& k) {
    auto it = g_results.find(k);
    return it == g_results.end() ? -1.0 : it->second;
  };
  std::printf("\n=== summary: %s (%s, %s, %s) ===\n", g_dev->info().name.c_str(),
              g_dev->info().arch.c_str(), g_dev->info().driver_version.c_str(),
              g_dev->info().compiler_version.c_str());
  if (get("tuning_cold_s") >= 0)
    std::printf(
        "tuning 16-config fp16 matmul 4096^3: cold %.2f s (target <= 3), warm second "
        "process %.3f s (target <= 0.3)\n",
        get("tuning_cold_s"), get("tuning_warm_s"));
  for (const char* key : {"matmul_f16_4096", "matmul_f16_8192", "matmul_f32_4096"}) {
    const double t = get(std::string(key) + "_tuned_TFLOPs");
    if (t < 0) continue;
    const double c = get(std::string(key) + "_cublas_TFLOPs");
    std::printf("%s: tuned %.1f TFLOP/s, default %.1f, cuBLAS %.1f -> tuned/cuBLAS %.0f%%\n", key,
                t, get(std::string(key) + "_default_TFLOPs"), c, 100.0 * t / c);
  }
  if (get("vector_add_tuned_GBs") >= 0)
    std::printf("vector_add 2^26: tuned %.0f GB/s, default %.0f, copy ceiling %.0f -> %.0f%%\n",
                get("vector_add_tuned_GBs"), get("vector_add_default_GBs"), get("copy_GBs"),
                100.0 * get("vector_add_tuned_GBs") / get("copy_GBs"));
  std::printf("dispatch overhead: compare BM_dispatch_autotuned and BM_dispatch_raw (time/iter)\n");
  std::printf(
      "on the application's stream and memory: compare BM_stream_dispatch_autotuned and "
      "BM_stream_dispatch_raw (target <= 1.05x)\n");
}

}  // namespace

int main(int argc, char** argv) {
  ::setenv("NVIDIA_TF32_OVERRIDE", "0", 1);  // SGEMM comparisons are true fp32
  const int cold_rounds = tune::bench::cold_floor_flag(argc, argv);  // before the device opens
  auto dev = tune::open_device("cuda");
  if (!dev.ok()) {
    std::fprintf(stderr, "bench_cuda: cannot run without a CUDA device: %s\n",
                 dev.status().to_string().c_str());
    return 77;
  }
  g_dev = dev->get();
  g_kernels = tune::kernels::bundled_kernels(tune::Language::cuda_hip);
  if (argc > 1 && std::string(argv[1]) == "--tuning-child")
    return tuning_child(argc > 2 ? argv[2] : "matmul_f16");
  if (cold_rounds > 0) {
    const int rc = tune::bench::run_cold_floor(
        *g_dev, kernel("matmul_f16"), std::vector<std::int64_t>{4096, 4096, 4096}, cold_rounds);
    g_kernels.clear();
    return rc;
  }
  if (const std::uint64_t mb = tune::bench::verify_cost_flag(argc, argv, 256); mb > 0)
    return tune::bench::run_verify_cost(*g_dev, mb, tune::bench::verify_rounds_flag(argc, argv, 3));
  if (argc > 1 && std::string(argv[1]) == "--matmul-hopper") {
    const int rc = matmul_hopper(hopper_options(argc, argv));
    g_flush.reset();
    g_kernels.clear();
    return rc;
  }
  if (argc > 1 && std::string(argv[1]) == "--interleaved") {
    const int rc = stream_pair_interleaved();
    g_app.reset();
    return rc;
  }

  // Side by side, 5 repetitions each, medians reported: host time per launch call.
  benchmark::RegisterBenchmark("BM_dispatch_raw", BM_dispatch_raw)
      ->Repetitions(5)
      ->ReportAggregatesOnly(true);
  benchmark::RegisterBenchmark("BM_dispatch_autotuned", BM_dispatch_autotuned)
      ->Repetitions(5)
      ->ReportAggregatesOnly(true);
  benchmark::RegisterBenchmark("BM_stream_dispatch_raw", BM_stream_dispatch_raw)
      ->Repetitions(5)
      ->ReportAggregatesOnly(true);
  benchmark::RegisterBenchmark("BM_stream_dispatch_autotuned", BM_stream_dispatch_autotuned)
      ->Repetitions(5)
      ->ReportAggregatesOnly(true);
  benchmark::RegisterBenchmark("BM_tuning_time_f16_4096", BM_tuning_time_f16_4096)
      ->Iterations(1)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  for (Gemm g : {Gemm{"matmul_f16", 4096, true}, Gemm{"matmul_f16", 8192, true},
                 Gemm{"matmul_f32", 4096, false}}) {
    benchmark::RegisterBenchmark(
        (std::string("BM_") + g.kernel + "/" + std::to_string(g.size)).c_str(), BM_matmul, g)
        ->Iterations(1)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::RegisterBenchmark("BM_vector_add_vs_copy/67108864", BM_vector_add_vs_copy)
      ->Iterations(1)
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  print_summary();
  g_app.reset();
  g_flush.reset();
  g_kernels.clear();
  return 0;
}
