// bench_hip: the HIP backend's figures (vector add vs a device copy, matmul tuned vs default),
// for an AMD GPU. No AMD GPU exists on our machines: there it prints why and exits with 77.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "tune/kernels/bundled.hpp"
#include "tune/tune.hpp"

namespace {

tune::Device* g_dev = nullptr;
std::vector<tune::kernels::BundledKernel> g_kernels;

double median_ns(const tune::kernels::BundledKernel& k, const tune::Config& c,
                 tune::kernels::Workload& w, benchmark::State& state) {
  auto ck = g_dev->compile(*k.def.source_for(tune::Language::cuda_hip), c);
  if (!ck.ok()) {
    state.SkipWithError(ck.status().to_string().c_str());
    return 0;
  }
  tune::TimingPlan plan;
  plan.reps = 20;
  auto t = g_dev->time(**ck, k.def.dims(c, w.args()), w.args(), plan);
  if (!t.ok()) {
    state.SkipWithError(t.status().to_string().c_str());
    return 0;
  }
  std::sort(t->begin(), t->end());
  return (*t)[t->size() / 2];
}

// Tuned vs default configuration of one bundled kernel at one size.
void BM_kernel(benchmark::State& state, std::string name, std::vector<std::int64_t> size) {
  for (const auto& k : g_kernels) {
    if (k.name != name) continue;
    auto w = k.workload(size);
    if (auto s = w->setup(*g_dev, 1); !s.ok()) {
      state.SkipWithError(s.to_string().c_str());
      return;
    }
    tune::AutotunerOptions opts;
    opts.persistent = false;
    auto tuner = tune::Autotuner::make(k.def, opts);
    if (!tuner.ok()) {
      state.SkipWithError(tuner.status().to_string().c_str());
      return;
    }
    auto best = (*tuner)->tune(*g_dev, w->args());
    if (!best.ok()) {
      state.SkipWithError(best.status().to_string().c_str());
      return;
    }
    for (auto _ : state) {
      const double tuned = median_ns(k, *best, *w, state);
      const double dflt = median_ns(k, k.default_config, *w, state);
      if (tuned <= 0 || dflt <= 0) return;
      state.SetIterationTime(tuned * 1e-9);
      state.counters["tuned_vs_default"] = dflt / tuned;
      state.counters["GBs"] = w->bytes() / tuned;
      state.counters["TFLOPs"] = w->flops() / tuned / 1e3;
      state.SetLabel("winner " + best->to_string());
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  auto dev = tune::open_device("hip");
  if (!dev.ok()) {
    std::fprintf(stderr, "bench_hip: cannot run without a HIP device: %s\n",
                 dev.status().to_string().c_str());
    return 77;
  }
  g_dev = dev->get();
  g_kernels = tune::kernels::bundled_kernels(tune::Language::cuda_hip);
  const std::vector<std::pair<std::string, std::vector<std::int64_t>>> cases = {
      {"vector_add", {std::int64_t{1} << 26}},
      {"reduce_sum", {std::int64_t{1} << 26}},
      {"matmul_f32", {4096, 4096, 4096}},
      {"matmul_f16", {4096, 4096, 4096}},
  };
  for (const auto& [name, size] : cases) {
    benchmark::RegisterBenchmark(("BM_" + name).c_str(), BM_kernel, name, size)
        ->Iterations(1)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  g_kernels.clear();
  return 0;
}
