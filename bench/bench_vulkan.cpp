// bench_vulkan: per bundled GLSL kernel and size, the tuned configuration against the
// kernel's default configuration, timed with device timestamps (manual time), with bytes/s and
// flops/s counters from the workload's compulsory traffic and flops.
//
//   bench_vulkan                          small sizes (the demo sizes; fine on lavapipe)
//   bench_vulkan --large                  or TUNE_BENCH_LARGE=1: vector_add and reduce_sum
//                                         at 2^26, the matmuls at 4096^3 (for a real GPU)
//   bench_vulkan --benchmark_filter=matmul_f32
//
// The device is tune::open_device("vulkan") (TUNE_VULKAN_DEVICE selects one). Tuning uses the
// persistent cache like any program (TUNE_CACHE=off to disable). Each iteration is one
// time_kernel() call with the library's default budgets, as tuning times a configuration:
// warm-up, clock settling (the NVIDIA driver idles its clock between short bursts of Vulkan
// work), then 100 ms of launches, each after an L2 flush outside the timed span; the
// iteration's time is their median. Five iterations per benchmark.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tune/kernels/bundled.hpp"
#include "tune/tune.hpp"

namespace {

using namespace tune;

std::unique_ptr<Device> g_device;

// Everything one (kernel, size) needs, built on first use and shared by its two benchmarks.
struct Case {
  const kernels::BundledKernel* kernel = nullptr;
  std::vector<std::int64_t> size;
  std::unique_ptr<kernels::Workload> workload;
  std::unique_ptr<Autotuner> tuner;
  std::map<std::string, std::unique_ptr<CompiledKernel>> compiled;  // "tuned" / "default"
  std::map<std::string, Config> configs;
  Status status;
  bool ready = false;
};

std::vector<kernels::BundledKernel> g_kernels;
std::vector<std::unique_ptr<Case>> g_cases;

Status prepare(Case& c) {
  if (c.ready) return c.status;
  c.ready = true;
  c.workload = c.kernel->workload(c.size);
  Status s = c.workload->setup(*g_device, 2024);
  if (!s.ok()) return c.status = s;
  AutotunerOptions opts;  // the defaults a user gets, persistent cache included
  auto tuner = Autotuner::make(c.kernel->def, opts);
  if (!tuner.ok()) return c.status = tuner.status();
  c.tuner = std::move(*tuner);
  auto best = c.tuner->tune(*g_device, c.workload->args());
  if (!best.ok()) return c.status = best.status();
  c.configs["tuned"] = *best;
  c.configs["default"] = c.kernel->default_config;
  const KernelSource* src = c.kernel->def.source_for(g_device->language());
  for (const auto& [which, config] : c.configs) {
    auto ck = g_device->compile(*src, config);
    if (!ck.ok()) return c.status = ck.status().with_context(which + " config");
    c.compiled[which] = std::move(*ck);
  }
  // Verify both once, so a bench never reports the speed of a wrong kernel.
  for (const auto& [which, ck] : c.compiled) {
    TUNE_RETURN_IF_ERROR(c.workload->poison_outputs(*g_device));
    TUNE_RETURN_IF_ERROR(c.kernel->def.zero_reset_buffers(*g_device, c.workload->args()));
    const LaunchDims dims = c.kernel->def.dims(c.configs[which], c.workload->args());
    TUNE_RETURN_IF_ERROR(g_device->launch(*ck, dims, c.workload->args()));
    s = c.workload->check(*g_device);
    if (!s.ok()) return c.status = s.with_context(which + " config output");
  }
  return c.status;
}

void run_case(benchmark::State& state, Case* c, const std::string& which) {
  Status s = prepare(*c);
  if (!s.ok()) {
    state.SkipWithError(s.to_string().c_str());
    return;
  }
  const Config& config = c->configs[which];
  const CompiledKernel& ck = *c->compiled[which];
  ArgList args = c->workload->args();
  const LaunchDims dims = c->kernel->def.dims(config, args);
  auto resets = c->kernel->def.zero_resets(args);
  if (!resets.ok()) {
    state.SkipWithError(resets.status().to_string().c_str());
    return;
  }
  BeforeLaunch before;  // the accumulators zeroed, recorded beside the timed launches
  before.resets = std::move(*resets);
  const BenchOptions opts;  // the budgets tuning uses
  for (auto _ : state) {
    auto t = time_kernel(*g_device, ck, dims, args, opts, before);
    if (!t.ok()) {
      state.SkipWithError(t.status().to_string().c_str());
      return;
    }
    state.SetIterationTime(t->median * 1e-9);
  }
  state.counters["bytes_per_second"] =
      benchmark::Counter(c->workload->bytes(), benchmark::Counter::kIsIterationInvariantRate,
                         benchmark::Counter::OneK::kIs1000);
  state.counters["flops"] =
      benchmark::Counter(c->workload->flops(), benchmark::Counter::kIsIterationInvariantRate,
                         benchmark::Counter::OneK::kIs1000);
  state.SetLabel(config.to_string());
}

std::vector<std::vector<std::int64_t>> sizes_for(const kernels::BundledKernel& k, bool large) {
  if (!large) return k.demo_sizes;
  if (k.name == "vector_add" || k.name == "reduce_sum") return {{std::int64_t{1} << 26}};
  if (k.name == "matmul_f32" || k.name == "matmul_f16") return {{4096, 4096, 4096}};
  return k.demo_sizes;
}

std::string size_name(const std::vector<std::int64_t>& s) {
  std::string out;
  for (auto v : s) out += (out.empty() ? "" : "x") + std::to_string(v);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  bool large = false;
  if (const char* e = std::getenv("TUNE_BENCH_LARGE")) large = std::strcmp(e, "1") == 0;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--large") == 0) {
      large = true;
    } else {
      args.push_back(argv[i]);
    }
  }
  int nargs = static_cast<int>(args.size());
  benchmark::Initialize(&nargs, args.data());

  auto dev = open_device("vulkan");
  if (!dev.ok()) {
    std::fprintf(stderr, "bench_vulkan: %s\n", dev.status().to_string().c_str());
    return 1;
  }
  g_device = std::move(*dev);
  const DeviceInfo& info = g_device->info();
  benchmark::AddCustomContext("device", info.name);
  benchmark::AddCustomContext("driver", info.driver_version);
  benchmark::AddCustomContext("compiler", info.compiler_version);
  benchmark::AddCustomContext("sizes", large ? "large" : "small");

  g_kernels = kernels::bundled_kernels(Language::glsl);
  for (const auto& k : g_kernels) {
    for (const auto& size : sizes_for(k, large)) {
      auto c = std::make_unique<Case>();
      c->kernel = &k;
      c->size = size;
      Case* cp = c.get();
      g_cases.push_back(std::move(c));
      for (const char* which : {"tuned", "default"}) {
        const std::string name = k.name + "/" + size_name(size) + "/" + which;
        benchmark::RegisterBenchmark(
            name.c_str(),
            [cp, w = std::string(which)](benchmark::State& st) { run_case(st, cp, w); })
            ->UseManualTime()
            ->Iterations(5)
            ->Unit(benchmark::kMicrosecond);
      }
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  g_cases.clear();  // kernels, workloads and tuners before the device
  g_device.reset();
  return 0;
}
