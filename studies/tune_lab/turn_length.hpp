// tune-lab turns: does the length of a configuration's turn decide which of two near-equal
// configurations is faster? (issue 15's wrong picks after heat.)
//
// The tuner's race and showdown time a contestant in turns of race_batch (5) launches; `tune-lab
// stability --quality`'s reference gives each configuration 100 ms of launches in one turn.
// On a power-limited H200 the SM clock follows the load of the last few milliseconds, so a
// configuration that draws less power may run at a higher clock in a long turn of its own
// than in a short turn between others. If so, "the best configuration" depends on the turn
// length, and the tuner and the reference can disagree without either being noisy.
//
// For each turn length L, after `heat_ms` of the contenders' launches back to back, the
// contenders are timed in rounds of one turn each (L L2-flushed launches, Device::time), the
// order reversed every other round, about `samples` launches per contender in all. Prints, per
// L, each contender's median, its ratio to the fastest, and (L >= 10) the median of the first
// and last five launches of its turns: a clock that adapts within a turn shows there.
// Blocking; runs on the calling thread.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "tune/device.hpp"
#include "tune/kernels/bundled.hpp"

namespace tune::lab {

struct TurnContender {
  Config config;
  std::unique_ptr<CompiledKernel> kernel;
  LaunchDims dims;
  std::vector<double> all, first, last;  // samples of the current turn length
};

inline double turn_median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Launches every contender in turn, untimed, for `ms` of wall time.
inline Status heat_with(Device& dev, std::vector<TurnContender>& cs, ArgList args, double ms) {
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::duration<double, std::milli>(ms);
  while (std::chrono::steady_clock::now() < until) {
    for (TurnContender& c : cs) TUNE_RETURN_IF_ERROR(dev.launch(*c.kernel, c.dims, args));
    TUNE_RETURN_IF_ERROR(dev.synchronize());
  }
  return {};
}

// One turn of `length` timed launches of `c`, its samples filed by position in the turn.
inline Status time_turn(Device& dev, TurnContender& c, ArgList args, int length) {
  TimingPlan plan;
  plan.reps = length;
  TUNE_ASSIGN_OR_RETURN(std::vector<double> ns, dev.time(*c.kernel, c.dims, args, plan));
  for (std::size_t i = 0; i < ns.size(); ++i) {
    c.all.push_back(ns[i]);
    if (i < 5) c.first.push_back(ns[i]);
    if (i + 5 >= ns.size()) c.last.push_back(ns[i]);
  }
  return {};
}

inline Status print_turn_lengths(Device& dev, const kernels::BundledKernel& k,
                                 const std::vector<std::int64_t>& shape,
                                 const std::vector<std::string>& configs, double heat_ms,
                                 int samples) {
  auto w = k.workload(shape);
  TUNE_RETURN_IF_ERROR(w->setup(dev, 5));
  const KernelSource* src = k.def.source_for(dev.language());
  if (src == nullptr) return Status(StatusCode::unavailable, k.name + ": no source");
  std::vector<TurnContender> cs;
  for (const std::string& text : configs) {
    TurnContender c;
    TUNE_ASSIGN_OR_RETURN(c.config, Config::parse(text));
    TUNE_ASSIGN_OR_RETURN(c.kernel, dev.compile(*src, c.config));
    c.dims = k.def.dims(c.config, w->args());
    cs.push_back(std::move(c));
  }
  std::string size;
  for (std::int64_t s : shape) size += (size.empty() ? "" : "x") + std::to_string(s);
  std::printf(
      "== %s %s: turns of L L2-flushed launches, contenders alternating, %.0f ms of "
      "heat before each L\n",
      k.name.c_str(), size.c_str(), heat_ms);
  for (int length : {1, 5, 25, 100}) {
    for (TurnContender& c : cs) c.all.clear(), c.first.clear(), c.last.clear();
    TUNE_RETURN_IF_ERROR(heat_with(dev, cs, w->args(), heat_ms));
    const int rounds = std::max(2, samples / length);
    for (int r = 0; r < rounds; ++r)
      for (std::size_t j = 0; j < cs.size(); ++j)
        TUNE_RETURN_IF_ERROR(
            time_turn(dev, cs[r % 2 == 0 ? j : cs.size() - 1 - j], w->args(), length));
    double best = 0;
    for (const TurnContender& c : cs) {
      const double m = turn_median(c.all);
      best = best == 0 ? m : std::min(best, m);
    }
    for (const TurnContender& c : cs) {
      const double m = turn_median(c.all);
      std::printf("L=%-3d %-80s median %9.1f us  x%.3f", length, c.config.to_string().c_str(),
                  m / 1e3, m / best);
      if (length >= 10)
        std::printf("  first5 %9.1f us  last5 %9.1f us", turn_median(c.first) / 1e3,
                    turn_median(c.last) / 1e3);
      std::printf("\n");
    }
    std::fflush(stdout);
  }
  return {};
}

}  // namespace tune::lab
