// Shared by the showdown's tests (showdown_test.cpp, sustained_turns_test.cpp): race entries
// with samples taken "earlier", on a SimDevice whose cost is a table by BM.
#pragma once

#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "race.hpp"
#include "sim_fixture.hpp"
#include "stats.hpp"
#include "tune/benchmark.hpp"

namespace tune::testing {

// n samples around `centre`, lognormal with `sigma`, from `seed`.
inline std::vector<double> samples_around(double centre, double sigma, int n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> z(0.0, 1.0);
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(centre * std::exp(sigma * z(gen)));
  return out;
}

// Showdown options: racing with the default showdown, no clock settling (it would run the
// modelled clock up before the showdown, which these tests model on purpose), and no screen
// (the screen's cases turn it on; elsewhere it would re-time the far contestants first).
inline BenchOptions showdown_bench() {
  BenchOptions b = tiny_bench();
  b.racing = true;
  b.expert.race_batch = 5;
  b.expert.settle_max_ms = 0;
  b.expert.showdown_screen_rounds = 0;
  return b;
}

// showdown_bench with the screen at its defaults.
inline BenchOptions screened_bench() {
  BenchOptions b = showdown_bench();
  b.expert.showdown_screen_rounds.reset();
  return b;
}

// What a Race runs on: `b` resolved for the standard effort.
inline TimingPolicy policy(const BenchOptions& b) { return resolve_timing(b, Effort::standard); }

// The sim device with a BM cost model from a table, and one compiled kernel per BM.
struct Contest {
  SimRig rig;
  std::vector<std::unique_ptr<CompiledKernel>> kernels;
  std::vector<Value> bms;
  std::vector<std::string> texts;  // each kernel's Config::to_string

  explicit Contest(std::map<std::int64_t, double> ns, DeviceInfo info = SimDevice::default_info())
      : rig(std::move(info)) {
    rig.dev.set_cost_model([ns](const Config& c, ArgList) { return ns.at(c.get_int("BM")); });
    for (const auto& [bm, t] : ns) {
      const Config config{{"BM", bm}};
      kernels.push_back(rig.dev.compile(sim_source(), config).value());
      texts.push_back(config.to_string());
    }
  }
  // An entry for kernel k with `samples` already taken (as if timed earlier in the race).
  RaceEntry entry(std::size_t k, std::vector<double> samples) const {
    RaceEntry e;
    e.kernel = kernels[k].get();
    e.config_text = texts[k];
    e.estimate_ns = samples.empty() ? 1000.0 : quantile(samples, 0.5);
    e.samples = std::move(samples);
    return e;
  }
};

inline double median_of(const RaceEntry& e) { return quantile(e.samples, 0.5); }

}  // namespace tune::testing
