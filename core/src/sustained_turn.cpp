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

double mean_of(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? INFINITY : sum / static_cast<double>(v.size());
}

bool all_finite(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

}  // namespace

bool leader_decided(const std::vector<std::vector<double>>& medians, double tolerance, double z) {
  std::vector<std::size_t> live;
  std::size_t leader = medians.size();
  for (std::size_t k = 0; k < medians.size(); ++k) {
    if (medians[k].empty() || !all_finite(medians[k])) continue;
    live.push_back(k);
    if (leader == medians.size() || mean_of(medians[k]) < mean_of(medians[leader])) leader = k;
  }
  if (live.size() < 2) return true;
  // Each other contender's gaps to the leader, over the rounds both ran.
  std::vector<std::vector<double>> gaps;
  double squares = 0;
  std::size_t dof = 0;
  for (std::size_t k : live) {
    if (k == leader) continue;
    std::vector<double> g;
    for (std::size_t r = 0; r < std::min(medians[k].size(), medians[leader].size()); ++r)
      if (medians[leader][r] > 0) g.push_back(medians[k][r] / medians[leader][r] - 1.0);
    if (g.empty()) return false;
    const double m = mean_of(g);
    for (double x : g) squares += (x - m) * (x - m);
    dof += g.size() - 1;
    gaps.push_back(std::move(g));
  }
  if (dof == 0) return false;
  const double variance = squares / static_cast<double>(dof);
  for (const auto& g : gaps) {
    const double se = std::sqrt(variance / static_cast<double>(g.size()));
    if (!(mean_of(g) - z * se >= -std::max(0.0, tolerance))) return false;
  }
  return true;
}

}  // namespace tune
