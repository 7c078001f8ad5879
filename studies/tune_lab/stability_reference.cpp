// `tune-lab stability --quality` and `--heat-ms`. See stability_reference.hpp.
#include "stability_reference.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "stats.hpp"
#include "sustained_turn.hpp"

namespace tune::cli {

std::size_t Candidates::find(const std::string& text) const {
  for (std::size_t i = 0; i < configs.size(); ++i)
    if (configs[i].to_string() == text) return i;
  return configs.size();
}

Result<Candidates> compile_candidates(Device& dev, const kernels::BundledKernel& k,
                                      const kernels::Workload& w) {
  AutotunerOptions opts;
  opts.persistent = false;
  opts.print = false;
  TUNE_ASSIGN_OR_RETURN(auto tuner, Autotuner::make(k.def, opts));
  Candidates c;
  c.kernel = &k;
  c.workload = &w;
  TUNE_ASSIGN_OR_RETURN(c.configs, tuner->candidates(dev, w.args()));
  const KernelSource* src = k.def.source_for(dev.language());
  if (src == nullptr)
    return Status(StatusCode::unavailable, k.name + " has no source for " + dev.info().backend);
  c.compiled.resize(c.configs.size());
  for (std::size_t i = 0; i < c.configs.size(); ++i) {
    auto compiled = dev.compile(*src, c.configs[i]);
    if (compiled.ok()) c.compiled[i] = std::move(*compiled);
  }
  return c;
}

namespace {

// The median of the second half of one turn of `turn_ms` of candidate `i`, or why not.
Result<double> sustained_turn_median(Device& dev, const Candidates& c, std::size_t i,
                                     double turn_ms) {
  if (i >= c.compiled.size() || c.compiled[i] == nullptr)
    return Status(StatusCode::invalid_argument,
                  "candidate " + std::to_string(i) + " has no kernel");
  const ArgList args = c.workload->args();
  const LaunchDims dims = c.kernel->def.dims(c.configs[i], args);
  TimingPlan probe;
  probe.reps = 3;
  TUNE_ASSIGN_OR_RETURN(std::vector<double> est, dev.time(*c.compiled[i], dims, args, probe));
  TimingPlan plan;
  plan.reps = sustained_turn_reps(turn_ms, quantile(est, 0.5), 20000);
  TUNE_ASSIGN_OR_RETURN(std::vector<double> ns, dev.time(*c.compiled[i], dims, args, plan));
  return quantile(second_half(ns), 0.5);
}

}  // namespace

Result<std::vector<std::vector<double>>> alternating_turns(Device& dev, const Candidates& c,
                                                           const std::vector<std::size_t>& which,
                                                           int rounds, double turn_ms,
                                                           std::uint64_t seed) {
  const std::size_t n = which.size();
  std::vector<std::vector<double>> out(n);
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t j : turn_order(n, round, seed)) {
      auto m = sustained_turn_median(dev, c, which[j], turn_ms);
      if (m.status().code() == StatusCode::device_lost) return m.status();
      out[j].push_back(m.ok() ? *m : std::numeric_limits<double>::quiet_NaN());
    }
  }
  return out;
}

int passes_for(int wanted) { return 2 * ((std::max(2, wanted) + 1) / 2); }

Result<std::map<std::string, std::vector<double>>> reference_medians(
    Device& dev, const Candidates& c, double turn_ms, int passes_wanted, std::uint64_t seed) {
  std::vector<std::size_t> all(c.configs.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  TUNE_ASSIGN_OR_RETURN(auto passes,
                        alternating_turns(dev, c, all, passes_for(passes_wanted), turn_ms, seed));
  std::map<std::string, std::vector<double>> out;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (std::all_of(passes[i].begin(), passes[i].end(), [](double ns) { return !std::isnan(ns); }))
      out[c.configs[i].to_string()] = std::move(passes[i]);
  return out;
}

std::map<std::string, double> pass_means(const std::map<std::string, std::vector<double>>& passes) {
  std::map<std::string, double> out;
  for (const auto& [config, ns] : passes) {
    double sum = 0;
    for (double v : ns) sum += v;
    if (!ns.empty()) out[config] = sum / static_cast<double>(ns.size());
  }
  return out;
}

double pass_spread(const std::map<std::string, std::vector<double>>& passes) {
  const std::map<std::string, double> means = pass_means(passes);
  const double best = fastest(means);
  double spread = 0;
  for (const auto& [config, ns] : passes) {
    if (ns.size() < 2) continue;
    const double mean = means.at(config);
    if (!(mean <= 1.05 * best)) continue;
    const auto [lo, hi] = std::minmax_element(ns.begin(), ns.end());
    spread = std::max(spread, (*hi - *lo) / mean);
  }
  return spread;
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
