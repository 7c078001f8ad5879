// Device times of several contenders (kernels, library calls) for one workload, measured
// interleaved: `rounds` rounds in which every contender runs its batch of timed launches, the
// order reversed every other round (A B C, C B A, ...). What drifts during a run weighs on all
// of them alike: on the H200 the SM clock drops to 1.35-1.6 GHz under the sustained matmul
// load of a tuning and recovers within seconds (2026-12-02, 613a10d), so a kernel timed alone
// right after its tuning looked up to 1.26x slower than the same kernel timed later.
//
// A contender's `round` returns the per-launch device times (ns) of one batch; its figure is
// the median over the samples of every round. Blocking; the contenders run on the calling
// thread in turn.
#pragma once

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

namespace tune::bench {

struct Contender {
  std::string name;
  std::function<std::vector<double>()> round;
};

inline std::vector<double> interleaved_medians(const std::vector<Contender>& contenders,
                                               int rounds) {
  std::vector<std::vector<double>> samples(contenders.size());
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t j = 0; j < contenders.size(); ++j) {
      const std::size_t i = r % 2 == 0 ? j : contenders.size() - 1 - j;
      const std::vector<double> s = contenders[i].round();
      samples[i].insert(samples[i].end(), s.begin(), s.end());
    }
  }
  std::vector<double> medians;
  for (auto& s : samples) {
    std::sort(s.begin(), s.end());
    medians.push_back(s.empty() ? 0.0 : s[s.size() / 2]);
  }
  return medians;
}

}  // namespace tune::bench
