// `tune stability --quality` and `--heat-ms`. See stability_reference.hpp.
#include "stability_reference.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

namespace tune::cli {

Result<std::map<std::string, double>> reference_medians(Device& dev,
                                                        const kernels::BundledKernel& k,
                                                        const kernels::Workload& w, double rep_ms) {
  AutotunerOptions opts;
  opts.persistent = false;
  opts.print = false;
  opts.bench.racing = false;  // every candidate its whole budget: no early stop, no showdown
  opts.bench.rep_ms = rep_ms;
  opts.bench.max_reps = 100000;
  TUNE_ASSIGN_OR_RETURN(auto tuner, Autotuner::make(k.def, opts));
  TUNE_ASSIGN_OR_RETURN(std::vector<Config> configs, tuner->candidates(dev, w.args()));
  TUNE_ASSIGN_OR_RETURN(auto forward, tuner->measure(dev, w.args(), configs));
  std::vector<Config> reversed(configs.rbegin(), configs.rend());
  TUNE_ASSIGN_OR_RETURN(auto backward, tuner->measure(dev, w.args(), reversed));
  std::map<std::string, double> out;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const ConfigResult& a = forward[i];
    const ConfigResult& b = backward[configs.size() - 1 - i];
    if (!a.status.ok() || !b.status.ok()) continue;
    out[configs[i].to_string()] = 0.5 * (a.stats.median + b.stats.median);
  }
  return out;
}

double fastest(const std::map<std::string, double>& reference) {
  double best = INFINITY;
  for (const auto& [config, ns] : reference) best = std::min(best, ns);
  return best;
}

Status heat_gpu(Device& dev, double ms) {
  if (ms <= 0) return {};
  const kernels::BundledKernel* matmul = nullptr;
  const auto all = kernels::bundled_kernels(dev.language());
  for (const auto& k : all)
    if (k.name == "matmul_f16" || (matmul == nullptr && k.name == "matmul_f32")) matmul = &k;
  if (matmul == nullptr || matmul->demo_sizes.empty())
    return Status(StatusCode::unavailable,
                  "heating the GPU: no bundled matmul for " + dev.info().backend);
  auto w = matmul->workload(matmul->demo_sizes.back());
  TUNE_RETURN_IF_ERROR(w->setup(dev, 7).with_context("heating the GPU: " + matmul->name));
  const Config& c = matmul->default_config;
  TUNE_ASSIGN_OR_RETURN(auto kernel, dev.compile(*matmul->def.source_for(dev.language()), c));
  const LaunchDims dims = matmul->def.dims(c, w->args());
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::duration<double, std::milli>(ms);
  while (std::chrono::steady_clock::now() < until) {
    for (int i = 0; i < 8; ++i)
      TUNE_RETURN_IF_ERROR(dev.launch(*kernel, dims, w->args()).with_context("heating the GPU"));
    TUNE_RETURN_IF_ERROR(dev.synchronize().with_context("heating the GPU"));
  }
  return {};
}

}  // namespace tune::cli
