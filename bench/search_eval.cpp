// search_eval: how close each search strategy gets to the true best configuration after
// evaluating a given fraction of a space, median over 20 seeds.
//
//   search_eval                      # the synthetic matmul model (deterministic, no hardware)
//   search_eval --replay FILE.csv    # recorded timings: lines "config text<TAB>median_ns"
//
// The synthetic model is a roofline over an H100-like device with tile-level arithmetic
// intensity, register-tile ILP, occupancy from threads/shared memory/registers, wave
// quantisation and pipeline depth: parameters interact, as they do on real hardware. Its
// purpose is to rank strategies on a landscape of the right shape, not to predict a GPU.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "tune/search.hpp"

namespace {

using tune::Config;
using tune::ConfigSpace;

ConfigSpace matmul_space() {
  ConfigSpace s;
  s.param("BM", {16, 32, 64, 128, 256})
      .param("BN", {16, 32, 64, 128, 256})
      .param("BK", {8, 16, 32, 64})
      .param("TM", {1, 2, 4, 8})
      .param("TN", {1, 2, 4, 8})
      .param("STAGES", {1, 2, 3});
  s.constrain("threads", [](const Config& c, const tune::DeviceInfo& d) {
    auto t = (c.get_int("BM") / c.get_int("TM")) * (c.get_int("BN") / c.get_int("TN"));
    return t >= 32 && t <= d.max_threads_per_block;
  });
  s.constrain("smem", [](const Config& c, const tune::DeviceInfo& d) {
    auto bytes = 4 * c.get_int("STAGES") * c.get_int("BK") * (c.get_int("BM") + c.get_int("BN"));
    return bytes <= d.shared_bytes_per_block;
  });
  return s;
}

tune::DeviceInfo h100_like() {
  tune::DeviceInfo d;
  d.compute_units = 132;
  d.max_threads_per_block = 1024;
  d.shared_bytes_per_block = 48 * 1024;
  d.registers_per_block = 65536;
  return d;
}

// Modelled time in microseconds of a 4096^3 fp32 matmul.
double matmul_model(const Config& c) {
  const double M = 4096, N = 4096, K = 4096;
  double bm = c.get_int("BM"), bn = c.get_int("BN"), bk = c.get_int("BK");
  double tm = c.get_int("TM"), tn = c.get_int("TN"), st = c.get_int("STAGES");
  double threads = (bm / tm) * (bn / tn);
  double regs = 32 + tm * tn + tm + tn;  // accumulators + fragments + overhead
  double smem = 4 * st * bk * (bm + bn);
  double by_threads = std::floor(2048 / threads);
  double by_smem = std::floor(228.0 * 1024 / std::max(smem, 1.0));
  double by_regs = std::floor(65536 / (regs * threads));
  double blocks_per_sm = std::max(1.0, std::min({by_threads, by_smem, by_regs, 32.0}));
  double occupancy = std::min(1.0, blocks_per_sm * threads / 2048);
  double tiles = std::ceil(M / bm) * std::ceil(N / bn);
  double waves = std::ceil(tiles / (132 * blocks_per_sm));
  double wave_eff = tiles / (waves * 132 * blocks_per_sm);
  double ilp = std::min(1.0, tm * tn / 32.0) * (regs > 255 ? 0.3 : 1.0);
  double pipe = st == 1 ? 0.6 : (st == 2 ? 0.9 : 1.0);
  double latency_hiding = std::min(1.0, 0.3 + occupancy * pipe + (bk >= 16 ? 0.1 : 0.0));
  double peak = 60e6;  // fp32 FLOP per us
  double compute_us = 2 * M * N * K / (peak * ilp * latency_hiding * wave_eff + 1);
  double intensity = (bm * bn) / (bm + bn) / 2;      // flops per byte from L2 per tile
  double mem_us = 2 * M * N * K / intensity / 10e6;  // 10 TB/s L2
  return std::max(compute_us, mem_us) * (1 + 0.02 * std::log2(bk));
}

struct Case {
  std::string name;
  ConfigSpace space;
  tune::Objective f;
};

Case replay_case(const char* path) {
  std::ifstream in(path);
  auto table = std::make_shared<std::map<std::string, double>>();
  std::vector<Config> configs;
  std::string line;
  while (std::getline(in, line)) {
    auto tab = line.find('\t');
    if (tab == std::string::npos) continue;
    auto c = Config::parse(line.substr(0, tab));
    if (!c.ok()) continue;
    double v = std::strtod(line.c_str() + tab + 1, nullptr);
    (*table)[c->to_string()] = v > 0 ? v : INFINITY;
    configs.push_back(*c);
  }
  Case k{std::string("replay ") + path, ConfigSpace::list(configs), nullptr};
  k.f = [table](const Config& c) { return table->at(c.to_string()); };
  return k;
}

}  // namespace

int main(int argc, char** argv) {
  Case k = argc == 3 && std::string(argv[1]) == "--replay"
               ? replay_case(argv[2])
               : Case{"synthetic fp32 matmul 4096^3 model", matmul_space(), matmul_model};
  tune::DeviceInfo dev = h100_like();
  auto all = tune::make_exhaustive_search()->search(k.space, dev, k.f, {}, 0);
  if (!all.ok()) {
    std::fprintf(stderr, "%s\n", all.status().to_string().c_str());
    return 1;
  }
  const double truth = all->best_value;
  const double n = static_cast<double>(all->evaluations);
  std::printf("%s: %.0f accepted configs (of %llu), true best %.4g {%s}\n\n", k.name.c_str(), n,
              static_cast<unsigned long long>(k.space.raw_size()), truth,
              all->best.to_string().c_str());
  const double fractions[] = {0.01, 0.02, 0.05, 0.10, 0.20};
  std::printf("| strategy | 1%% | 2%% | 5%% | 10%% | 20%% |\n|---|---|---|---|---|---|\n");
  for (const char* name : {"random", "annealing", "genetic"}) {
    auto strategy = tune::make_search(name);
    std::printf("| %s |", name);
    for (double frac : fractions) {
      tune::SearchBudget b;
      b.max_evaluations = static_cast<std::uint64_t>(std::max(1.0, std::round(frac * n)));
      std::vector<double> ratios;
      for (std::uint64_t seed = 1; seed <= 20; ++seed) {
        auto r = strategy->search(k.space, dev, k.f, b, seed);
        ratios.push_back(r.ok() ? r->best_value / truth : INFINITY);
      }
      std::sort(ratios.begin(), ratios.end());
      std::printf(" %.3f |", (ratios[9] + ratios[10]) / 2);
    }
    std::printf("\n");
  }
  std::printf(
      "\nCells: median over 20 seeds of best found / true best after evaluating that "
      "fraction of the accepted configs.\n");
  return 0;
}
