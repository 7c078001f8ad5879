// Why these choices, measured on the benchmark hub's replayed spaces (bench/RESULTS.md) and
// prototyped first in Python:
// - A failed configuration (+inf) is left out of the model rather than given a made-up time:
//   a fictitious "slow" value distorts the surface around it; the point stays visited, so it
//   is never proposed again.
// - The improvement is counted beyond the best by kXi (standardised units), which leans the
//   picks towards uncertain points: with xi = 0 the search settled in a local optimum more
//   often.
// - Candidates are a random sample plus every one-dimension neighbour of the best points and
//   the points two dimensions away from the best (all, or a sample in a wide space): the optimum of
//   a GPU kernel's space is often one or two settings away from a good point, where a random sample
//   rarely looks.
// - The training set is capped (the best half and the most recent rest): the Cholesky is cubic
//   in it, and far from the best the model need not be exact.
// - The lengthscales are refitted once kRefitEvery more evaluations are in (whatever the batch
//   size), from the last ones: they change slowly once a few dozen points are in.
// - The posterior's buffers (a few MB: training points x candidates) are kept from one call to
//   the next: allocated afresh, their pages were faulted in and zeroed every round, a quarter
//   of a proposal's time.
#include "gp_proposal.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "expected_improvement.hpp"
#include "gaussian_process.hpp"

namespace tune::detail {
namespace {

// Random candidates scored per round (all unvisited points when fewer).
constexpr std::size_t kRandomCandidates = 1000;
// Product spaces listed up to this many accepted points sample their candidates from the list
// of unvisited ones; larger ones (or unlisted) by rejection through Explorer::random_unvisited.
constexpr std::size_t kListCandidates = 65536;
// Moves two dimensions away from the best point scored per round, at most (all of them when
// fewer: 261 on the hub's convolution, 578 on its dedispersion).
constexpr std::uint64_t kTwoAwayCandidates = 1024;
// The best points whose one-dimension neighbours are candidates.
constexpr std::size_t kTopForNeighbours = 8;
// Training points: at most kTrainingCap, the best kTrainingBest of them by time.
constexpr std::size_t kTrainingCap = 200;
constexpr std::size_t kTrainingBest = 100;
constexpr std::size_t kRefitEvery = 32;
constexpr double kXi = 0.1;

// The evaluated points the process learns from, in evaluation order: features (rows) and
// ln(time).
struct TrainingSet {
  std::vector<double> x, y;
};

// Every evaluated point with a finite positive time, capped at kTrainingCap: the best
// kTrainingBest and the most recent others, kept in evaluation order.
TrainingSet training_set(const Explorer& x, const Features& features) {
  std::vector<std::pair<std::uint64_t, double>> ok;
  for (const auto& [i, v] : x.so_far().history)
    if (std::isfinite(v) && v > 0) ok.emplace_back(i, std::log(v));
  if (ok.size() > kTrainingCap) {
    std::vector<std::size_t> order(ok.size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return ok[a].second < ok[b].second; });
    std::vector<char> keep(ok.size(), 0);
    for (std::size_t k = 0; k < kTrainingBest; ++k) keep[order[k]] = 1;
    std::size_t kept = kTrainingBest;
    for (std::size_t k = ok.size(); k-- > 0 && kept < kTrainingCap;)
      if (!keep[k]) keep[k] = 1, ++kept;
    std::size_t w = 0;
    for (std::size_t k = 0; k < ok.size(); ++k)
      if (keep[k]) ok[w++] = ok[k];
    ok.resize(w);
  }
  TrainingSet t;
  t.x.reserve(ok.size() * features.size());
  for (const auto& [i, y] : ok) {
    features.append(x, i, t.x);
    t.y.push_back(y);
  }
  return t;
}

// Up to kRandomCandidates distinct unvisited accepted points, uniformly at random.
std::vector<std::uint64_t> random_candidates(Explorer& x) {
  std::vector<std::uint64_t> pool;
  if (x.known_accepted() && x.accepted().size() <= kListCandidates) {
    for (std::uint64_t i : x.accepted())
      if (!x.visited(i)) pool.push_back(i);
    // A partial Fisher-Yates shuffle: the first kRandomCandidates are a uniform sample.
    const std::size_t n = std::min(pool.size(), kRandomCandidates);
    for (std::size_t k = 0; k < n; ++k) std::swap(pool[k], pool[k + x.uniform(pool.size() - k)]);
    pool.resize(n);
    return pool;
  }
  pool = x.random_unvisited(kRandomCandidates, {});
  std::sort(pool.begin(), pool.end());
  return pool;
}

// Appends every unvisited accepted point that differs from `at` in one dimension.
void add_neighbours(Explorer& x, std::uint64_t at, std::vector<std::uint64_t>& pool) {
  auto d = x.digits(at);
  const auto& radix = x.radix();
  for (std::size_t k = 0; k < d.size(); ++k) {
    const std::uint64_t own = d[k];
    for (std::uint64_t v = 0; v < radix[k]; ++v) {
      if (v == own) continue;
      d[k] = v;
      const std::uint64_t i = x.index_of(d);
      if (!x.visited(i) && x.accepts(i)) pool.push_back(i);
    }
    d[k] = own;
  }
}

// How many points differ from a point in exactly two dimensions of `radix` (accepted or not).
std::uint64_t two_away_count(const std::vector<std::uint64_t>& radix) {
  std::uint64_t total = 0;
  for (std::size_t a = 0; a < radix.size(); ++a)
    for (std::size_t b = a + 1; b < radix.size(); ++b) total += (radix[a] - 1) * (radix[b] - 1);
  return total;
}

// The two-dimension move of `at`'s digits `d` numbered `t` (0 <= t < two_away_count): the
// pairs of dimensions in order, each pair's other values row by row.
void apply_two_away(const std::vector<std::uint64_t>& radix, std::uint64_t t,
                    std::vector<std::uint64_t>& d) {
  for (std::size_t a = 0; a < radix.size(); ++a)
    for (std::size_t b = a + 1; b < radix.size(); ++b) {
      const std::uint64_t moves = (radix[a] - 1) * (radix[b] - 1);
      if (t >= moves) {
        t -= moves;
        continue;
      }
      // The t-th pair of other values: skip each dimension's own value.
      const std::uint64_t va = t / (radix[b] - 1), vb = t % (radix[b] - 1);
      d[a] = va >= d[a] ? va + 1 : va;
      d[b] = vb >= d[b] ? vb + 1 : vb;
      return;
    }
}

// Appends the unvisited accepted points that differ from `at` in exactly two dimensions: all
// of them when there are at most kTwoAwayCandidates such moves, else that many moves drawn at
// random (a wide space has too many to score each round: the proposal's cost grows with them).
void add_two_away(Explorer& x, std::uint64_t at, std::vector<std::uint64_t>& pool) {
  const auto& radix = x.radix();
  const std::uint64_t total = two_away_count(radix);
  const bool all = total <= kTwoAwayCandidates;
  const std::uint64_t draws = all ? total : kTwoAwayCandidates;
  const auto own = x.digits(at);
  for (std::uint64_t k = 0; k < draws; ++k) {
    auto d = own;
    apply_two_away(radix, all ? k : x.uniform(total), d);
    const std::uint64_t i = x.index_of(d);
    if (!x.visited(i) && x.accepts(i)) pool.push_back(i);
  }
}

// The unvisited accepted points not in `taken` scored this round, sorted: a random sample
// and, in a product space, the one-dimension neighbours of the best points and every point
// two dimensions away from the best one.
std::vector<std::uint64_t> candidates(Explorer& x, const std::vector<std::uint64_t>& taken) {
  std::vector<std::uint64_t> pool = random_candidates(x);
  if (!x.space().is_list()) {
    const std::vector<std::uint64_t> best = best_points(x.so_far().history, kTopForNeighbours);
    for (std::uint64_t b : best) add_neighbours(x, b, pool);
    if (!best.empty()) add_two_away(x, best.front(), pool);
  }
  std::sort(pool.begin(), pool.end());
  pool.erase(std::unique(pool.begin(), pool.end()), pool.end());
  std::erase_if(pool, [&](std::uint64_t i) {
    return std::find(taken.begin(), taken.end(), i) != taken.end();
  });
  return pool;
}

}  // namespace

std::vector<std::uint64_t> GpProposal::propose(Explorer& x, std::size_t count,
                                               const std::vector<std::uint64_t>& taken) {
  if (count == 0) return {};
  const TrainingSet train = training_set(x, features_);
  if (train.y.size() < 2) return {};
  std::optional<GaussianProcess> gp;
  const std::size_t evaluated = x.so_far().history.size();
  if (lengthscales_.empty() || evaluated >= fitted_at_ + kRefitEvery) {
    gp = fit_gaussian_process(train.x, features_.size(), train.y,
                              lengthscales_.empty() ? nullptr : &lengthscales_);
    fitted_at_ = evaluated;
  } else {
    gp = gaussian_process_with(train.x, features_.size(), train.y, lengthscales_);
  }
  if (!gp) return {};
  lengthscales_ = gp->lengthscales();
  const std::vector<std::uint64_t> pool = candidates(x, taken);
  rows_.clear();
  for (std::uint64_t i : pool) features_.append(x, i, rows_);
  gp->predict(rows_, posterior_);
  std::vector<std::uint64_t> out;
  for (std::size_t j : pick_by_expected_improvement(*gp, posterior_, count, kXi))
    out.push_back(pool[j]);
  return out;
}

}  // namespace tune::detail
