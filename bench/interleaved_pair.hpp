// Host time of two ways to do one thing (libtune's call and the hand-written one), measured
// interleaved in one process, so that what drifts during a run (CPU and GPU clocks, other
// processes, the driver's queues) weighs on both sides alike.
//
// A round times one batch of `calls` of each side, back to back, the order swapped every round
// (AB, BA, AB, ...); `between()` runs before each batch, outside the timed span (a stream
// synchronisation, a fresh command buffer), so a batch never waits on a full queue. The first
// rounds are discarded as warm-up. Reported: each side's median time per call over the rounds,
// the ratio of those medians, and the median, 10th and 90th percentile of the per-round ratios
// (the paired figure: both sides of a round saw the same machine state).
//
// Used by bench_cuda --interleaved and bench_vulkan --interleaved (bench/RESULTS.md).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace tune::bench {

struct PairFigure {
  double a_ns = 0;  // median per call, side A
  double b_ns = 0;  // median per call, side B
  double ratio_of_medians = 0;
  double round_ratio_p10 = 0;
  double round_ratio_p50 = 0;
  double round_ratio_p90 = 0;
  int rounds = 0;
  int calls = 0;
};

inline double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

// `a` and `b` return false to stop (their own error already printed). Blocking: runs
// rounds * 2 * calls calls on this thread.
template <class A, class B, class Between>
bool measure_pair(int rounds, int calls, int warmup_rounds, A&& a, B&& b, Between&& between,
                  PairFigure* out) {
  using clock = std::chrono::steady_clock;
  std::vector<double> per_a, per_b, ratio;
  auto batch = [&](auto& side, double* ns) {
    between();
    const auto t0 = clock::now();
    for (int i = 0; i < calls; ++i)
      if (!side()) return false;
    *ns = std::chrono::duration<double, std::nano>(clock::now() - t0).count() / calls;
    return true;
  };
  for (int r = 0; r < warmup_rounds + rounds; ++r) {
    double ta = 0, tb = 0;
    const bool a_first = r % 2 == 0;
    if (a_first ? !batch(a, &ta) || !batch(b, &tb) : !batch(b, &tb) || !batch(a, &ta)) return false;
    if (r < warmup_rounds) continue;
    per_a.push_back(ta);
    per_b.push_back(tb);
    ratio.push_back(ta / tb);
  }
  between();
  out->a_ns = percentile(per_a, 0.5);
  out->b_ns = percentile(per_b, 0.5);
  out->ratio_of_medians = out->a_ns / out->b_ns;
  out->round_ratio_p10 = percentile(ratio, 0.1);
  out->round_ratio_p50 = percentile(ratio, 0.5);
  out->round_ratio_p90 = percentile(ratio, 0.9);
  out->rounds = rounds;
  out->calls = calls;
  return true;
}

// One markdown table row: | what | A ns | B ns | A/B (medians) | per-round A/B p10 / p50 / p90 |
inline void print_pair(const char* what, const PairFigure& f) {
  std::printf("| %s | %.0f ns | %.0f ns | %.3fx | %.3f / %.3f / %.3f | %d x %d |\n", what, f.a_ns,
              f.b_ns, f.ratio_of_medians, f.round_ratio_p10, f.round_ratio_p50, f.round_ratio_p90,
              f.rounds, f.calls);
}

inline void print_pair_header() {
  std::printf(
      "| pair (A = libtune hit, B = hand-written) | A per call | B per call | A/B of medians | "
      "per-round A/B p10 / p50 / p90 | rounds x calls |\n|---|---|---|---|---|---|\n");
}

}  // namespace tune::bench
