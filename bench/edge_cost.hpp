// The cost of sound buckets (AutotunerOptions::check_bucket_edges, issue 39): the wall time of
// a first tuning of a bucketed key with the edge checks on against the same tuning with them
// off, each on a fresh Autotuner that persists nothing (compiled variants stay in the device's
// compile caches, so both sides after the first round compile alike). Sides alternate
// (off, on, off, on, ...); the first round of a process pays one-time initialisation and is
// printed apart; the ratio is taken on the medians of the later rounds. Prints, per side,
// the median wall, and for the checked side the edges checked, skipped and whether the
// bucket split. Blocks; prints to stdout.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cold_floor.hpp"  // median_of
#include "tune/kernels/bundled.hpp"
#include "tune/tune.hpp"

namespace tune::bench {

struct EdgeRound {
  double wall_ms = 0;
  std::size_t edges = 0, skipped = 0;
  bool split = false;
};

// One first tuning of `def` on `args`, edge checks `on` or off.
inline Result<EdgeRound> time_edge_tuning(Device& dev, const KernelDef& def, ArgList args,
                                          bool on) {
  AutotunerOptions opts;
  opts.persistent = false;
  opts.check_bucket_edges = on;
  opts.print = false;
  TUNE_ASSIGN_OR_RETURN(auto tuner, Autotuner::make(def, opts));
  TUNE_RETURN_IF_ERROR(dev.synchronize());
  const auto t0 = std::chrono::steady_clock::now();
  TUNE_RETURN_IF_ERROR(tuner->run(dev, args));
  TUNE_RETURN_IF_ERROR(dev.synchronize());
  EdgeRound r;
  r.wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  auto report = tuner->last_report(dev, args);
  if (!report) return Status(StatusCode::internal, "the tuning left no report");
  r.edges = report->bucket.edges.size();
  for (const EdgeCheck& e : report->bucket.edges) r.skipped += e.skipped.empty() ? 0 : 1;
  r.split = report->bucket.split;
  return r;
}

// `rounds` (>= 2) alternating pairs of `k` at `size` on `dev`; returns 0, or 1 with a message.
inline int run_edge_cost(Device& dev, const kernels::BundledKernel& k,
                         const std::vector<std::int64_t>& size, int rounds) {
  auto w = k.workload(size);
  if (auto s = w->setup(dev, 5); !s.ok()) {
    std::fprintf(stderr, "edge-cost: setup: %s\n", s.to_string().c_str());
    return 1;
  }
  std::printf("edge checks vs plain tuning: %s %s on %s\n", k.name.c_str(), w->size_text().c_str(),
              dev.info().name.c_str());
  std::printf("%-6s %10s %10s %6s %8s %6s\n", "round", "off_ms", "on_ms", "edges", "skipped",
              "split");
  std::vector<double> off, on;
  for (int i = 0; i < rounds; ++i) {
    auto a = time_edge_tuning(dev, k.def, w->args(), false);
    auto b = time_edge_tuning(dev, k.def, w->args(), true);
    if (!a.ok() || !b.ok()) {
      std::fprintf(stderr, "edge-cost: %s\n",
                   (a.ok() ? b.status() : a.status()).to_string().c_str());
      return 1;
    }
    std::printf("%-6s %10.1f %10.1f %6zu %8zu %6s\n", i == 0 ? "first" : std::to_string(i).c_str(),
                a->wall_ms, b->wall_ms, b->edges, b->skipped, b->split ? "yes" : "no");
    if (i == 0) continue;
    off.push_back(a->wall_ms);
    on.push_back(b->wall_ms);
  }
  const double mo = median_of(off), mn = median_of(on);
  std::printf("median of rounds 1..%d: off %.1f ms, on %.1f ms, ratio %.3f\n", rounds - 1, mo, mn,
              mo > 0 ? mn / mo : 0.0);
  return 0;
}

// --edge-cost[=<rounds>] (default 4, at least 2): the number of rounds, 0 when absent.
inline int edge_cost_flag(int argc, char** argv) {
  int rounds = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--edge-cost") == 0) rounds = 4;
    if (std::strncmp(argv[i], "--edge-cost=", 12) == 0)
      rounds = std::max(2, std::atoi(argv[i] + 12));
  }
  return rounds;
}

}  // namespace tune::bench
