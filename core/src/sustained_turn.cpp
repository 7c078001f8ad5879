#include "tune/sustained_turn.hpp"

#include <algorithm>
#include <cmath>

#include "tune/stats.hpp"

namespace tune {

int sustained_turn_reps(double turn_ms, double per_launch_ns, int max_reps) {
  const double per_launch = std::isfinite(per_launch_ns) ? std::max(1.0, per_launch_ns) : 1.0;
  const double hi = static_cast<double>(std::max(2, max_reps));
  const double want =
      std::isfinite(turn_ms) ? std::ceil(std::max(0.0, turn_ms) * 1e6 / per_launch) : hi;
  return static_cast<int>(std::clamp(want, 2.0, hi));
}

std::vector<double> second_half(std::span<const double> turn) {
  return {turn.begin() + static_cast<std::ptrdiff_t>(turn.size() / 2), turn.end()};
}

std::vector<double> level_turns(const std::vector<std::vector<double>>& turns) {
  std::vector<double> medians;
  for (const auto& t : turns)
    if (!t.empty()) medians.push_back(quantile(t, 0.5));
  if (medians.empty()) return {};
  double mean = 0;
  for (double m : medians) mean += m / static_cast<double>(medians.size());
  std::vector<double> out;
  std::size_t i = 0;
  for (const auto& t : turns) {
    if (t.empty()) continue;
    const double m = medians[i++];
    const double scale = m > 0 ? mean / m : 1.0;
    for (double ns : t) out.push_back(ns * scale);
  }
  return out;
}

namespace {

double mean_of_finite(const std::vector<double>& v) {
  double sum = 0;
  int n = 0;
  for (double x : v)
    if (std::isfinite(x)) {
      sum += x;
      ++n;
    }
  return n == 0 ? INFINITY : sum / n;
}

}  // namespace

bool rounds_agree(const std::vector<std::vector<double>>& medians) {
  std::size_t leader = medians.size();
  double best = INFINITY;
  for (std::size_t k = 0; k < medians.size(); ++k) {
    const double m = mean_of_finite(medians[k]);
    if (m < best) {
      best = m;
      leader = k;
    }
  }
  if (leader == medians.size()) return true;  // nobody has a turn
  for (std::size_t r = 0; r < medians[leader].size(); ++r) {
    const double mine = medians[leader][r];
    if (!std::isfinite(mine)) continue;
    for (std::size_t k = 0; k < medians.size(); ++k)
      if (k != leader && r < medians[k].size() && medians[k][r] < mine) return false;
  }
  return true;
}

}  // namespace tune
