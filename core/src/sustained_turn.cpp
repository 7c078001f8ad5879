#include "sustained_turn.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "stats.hpp"

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

// A permutation of 0..n-1 drawn from `seed` (Fisher-Yates on std::mt19937_64, whose output is
// fixed by the standard, unlike std::shuffle's use of it).
std::vector<std::size_t> permutation(std::size_t n, std::uint64_t seed) {
  std::vector<std::size_t> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = i;
  std::mt19937_64 rng(seed);
  for (std::size_t i = n; i > 1; --i) std::swap(out[i - 1], out[rng() % i]);
  return out;
}

// How far pair `pair`'s forward order is turned against the drawn one. The turns of the first
// n pairs are distinct (so n pairs in a row form a Latin square: every contender in every
// place once) and consecutive ones differ by about n/2:
// - odd n = 2m + 1: a constant step m (prime to n), so every contender moves by m or m + 1
//   places from each pair to the next, the wrap from pair n - 1 to pair n included;
// - even n = 2m: a constant step near m would have to be prime to n, and for n = 4 and 6 only
//   1 and n - 1 are (the neighbours of a pair's turning point would take it next), so the
//   turns alternate between the halves, 0, m, 1, m + 1, ..., m - 1, 2m - 1: every contender
//   moves by m places from an even pair to the next (from pair 0 to pair 1, the two every
//   decision takes), by m - 1 or m + 1 from an odd one (for n = 4: 1 or 3), and by one
//   place (all but one contender) at the wrap from pair n - 1 to pair n.
std::size_t order_shift(std::size_t n, std::size_t pair) {
  if (n == 0) return 0;
  const std::size_t p = pair % n, m = n / 2;
  if (n % 2 == 1) return p * m % n;
  return p / 2 + (p % 2) * m;
}

}  // namespace

std::vector<std::size_t> turn_order(std::size_t n, int round, std::uint64_t seed) {
  const auto pair = static_cast<std::size_t>(std::max(0, round) / 2);
  const std::vector<std::size_t> base = permutation(n, seed);
  std::vector<std::size_t> out(n);
  const std::size_t shift = order_shift(n, pair);
  for (std::size_t i = 0; i < n; ++i) out[i] = base[(i + shift) % n];
  if (std::max(0, round) % 2 == 1) std::reverse(out.begin(), out.end());
  return out;
}

std::vector<std::size_t> forward_order(const std::vector<std::size_t>& among, int pair,
                                       std::uint64_t seed, std::size_t previous) {
  std::vector<std::size_t> out;
  out.reserve(among.size());
  for (std::size_t j : turn_order(among.size(), 2 * std::max(0, pair), seed))
    out.push_back(among[j]);
  if (out.size() >= 2 && out.back() == previous)
    std::rotate(out.rbegin(), out.rbegin() + 1, out.rend());
  return out;
}

std::uint64_t fresh_seed() {
  std::random_device device;
  const std::uint64_t s = (static_cast<std::uint64_t>(device()) << 32) ^ device();
  return s == 0 ? 1 : s;
}

std::vector<std::vector<double>> pair_medians(const std::vector<std::vector<double>>& medians) {
  std::vector<std::vector<double>> out(medians.size());
  for (std::size_t k = 0; k < medians.size(); ++k)
    for (std::size_t r = 0; r + 1 < medians[k].size(); r += 2)
      out[k].push_back((medians[k][r] + medians[k][r + 1]) / 2);
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

bool live(const std::vector<double>& m) { return !m.empty() && all_finite(m); }

}  // namespace

// Among those with the most rounds: a contender left out of later rounds is compared with the
// leader over the rounds both ran, never made leader on rounds the others ran at another clock.
std::size_t sustained_leader(const std::vector<std::vector<double>>& medians) {
  std::size_t most = 0;
  for (const auto& m : medians)
    if (live(m)) most = std::max(most, m.size());
  std::size_t leader = medians.size();
  for (std::size_t k = 0; k < medians.size(); ++k) {
    if (!live(medians[k]) || medians[k].size() != most) continue;
    if (leader == medians.size() || mean_of(medians[k]) < mean_of(medians[leader])) leader = k;
  }
  return leader;
}

namespace {

// Every other live contender's per-round gaps to a reference contender (m_k / m_ref - 1, over
// the rounds both ran), and their variance pooled over the contenders.
struct Gaps {
  std::size_t ref = 0;                    // the leader, or the contender asked about
  std::vector<std::size_t> others;        // live contenders but ref
  std::vector<std::vector<double>> gaps;  // gaps[i]: others[i]'s gaps, round by round
  double variance = 0;
  std::size_t dof = 0;  // 0: no spread to judge the noise by
  // The mean gap of others[i] less the one-sided `confidence` Student-t quantile (at the
  // pooled degrees of freedom; none below confidence 1/2) times its standard error. NaN for a
  // confidence outside (0, 1): no comparison with it holds, so nothing is decided on it.
  double lower(std::size_t i, double confidence) const {
    const double se = std::sqrt(variance / static_cast<double>(gaps[i].size()));
    const double t = student_t_quantile(confidence, dof);
    return mean_of(gaps[i]) - (std::isnan(t) ? t : std::max(0.0, t)) * se;
  }
};

// Gaps to `ref`, a live contender (medians.size(): none; then `others` is empty).
Gaps gaps_to(const std::vector<std::vector<double>>& medians, std::size_t ref) {
  Gaps out;
  out.ref = ref;
  if (ref >= medians.size() || !live(medians[ref])) return out;
  const std::vector<double>& base = medians[ref];
  double squares = 0;
  for (std::size_t k = 0; k < medians.size(); ++k) {
    if (k == ref || !live(medians[k])) continue;
    std::vector<double> g;
    for (std::size_t r = 0; r < std::min(medians[k].size(), base.size()); ++r)
      if (base[r] > 0) g.push_back(medians[k][r] / base[r] - 1.0);
    const double m = mean_of(g);
    for (double x : g) squares += (x - m) * (x - m);
    out.dof += g.empty() ? 0 : g.size() - 1;
    out.others.push_back(k);
    out.gaps.push_back(std::move(g));
  }
  if (out.dof > 0) out.variance = squares / static_cast<double>(out.dof);
  return out;
}

Gaps gaps_to_leader(const std::vector<std::vector<double>>& medians) {
  return gaps_to(medians, sustained_leader(medians));
}

}  // namespace

bool pick_decided(const std::vector<std::vector<double>>& medians, std::size_t pick,
                  double tolerance, double confidence) {
  if (pick >= medians.size() || !live(medians[pick]))
    return std::none_of(medians.begin(), medians.end(), live);
  const Gaps g = gaps_to(medians, pick);
  if (g.others.empty()) return true;
  if (g.dof == 0) return false;
  for (std::size_t i = 0; i < g.others.size(); ++i)
    if (g.gaps[i].empty() || !(g.lower(i, confidence) >= -std::max(0.0, tolerance))) return false;
  return true;
}

bool leader_decided(const std::vector<std::vector<double>>& medians, double tolerance,
                    double confidence) {
  return pick_decided(medians, sustained_leader(medians), tolerance, confidence);
}

std::vector<bool> ruled_out(const std::vector<std::vector<double>>& medians, double confidence) {
  std::vector<bool> out(medians.size(), false);
  const Gaps g = gaps_to_leader(medians);
  if (g.dof == 0) return out;
  for (std::size_t i = 0; i < g.others.size(); ++i)
    out[g.others[i]] = !g.gaps[i].empty() && g.lower(i, confidence) > 0;
  return out;
}

std::vector<double> turn_levels(const std::vector<std::vector<double>>& medians) {
  std::vector<double> out(medians.size(), NAN);
  const Gaps g = gaps_to_leader(medians);
  if (g.ref == medians.size()) return out;
  // A mean ratio to the leader is 1 + the mean gap.
  const double level = mean_of(medians[g.ref]);
  out[g.ref] = level;
  for (std::size_t i = 0; i < g.others.size(); ++i) {
    const std::size_t k = g.others[i];
    out[k] = g.gaps[i].empty() ? mean_of(medians[k]) : level * (1.0 + mean_of(g.gaps[i]));
  }
  return out;
}

}  // namespace tune
