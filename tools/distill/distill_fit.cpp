#include "distill_fit.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace tune::distill {
namespace {

// A cost, compared unknown picks first, then the objective's value.
struct Cost {
  std::size_t unknown = 0;
  double value = 0;  // sum of log-slowdowns, or the largest slowdown
  bool operator<(const Cost& o) const {
    if (unknown != o.unknown) return unknown < o.unknown;
    return value < o.value - 1e-12 * std::max(1.0, std::abs(o.value));
  }
};

void add(Cost& c, double slowdown, Objective obj) {
  if (!std::isfinite(slowdown)) {
    ++c.unknown;
    return;
  }
  if (obj == Objective::worst)
    c.value = std::max(c.value, slowdown);
  else
    c.value += std::log(slowdown);
}

// The cost of `keys` when each takes its best configuration among `chosen`.
Cost oracle_cost(const DecisionTable& t, const std::vector<std::size_t>& keys,
                 const std::vector<std::size_t>& chosen) {
  Cost c;
  for (std::size_t k : keys) {
    double best = kUnknown;
    for (std::size_t cfg : chosen) best = std::min(best, t.keys[k].slowdown[cfg]);
    add(c, best, Objective::geomean);
  }
  return c;
}

// The one configuration (index into `among`) cheapest over `keys`, and its cost.
std::pair<std::size_t, Cost> best_single(const DecisionTable& t,
                                         const std::vector<std::size_t>& keys,
                                         const std::vector<std::size_t>& among, Objective obj) {
  std::pair<std::size_t, Cost> best{0, Cost{keys.size() + 1, 0}};
  for (std::size_t i = 0; i < among.size(); ++i) {
    Cost c;
    for (std::size_t k : keys) add(c, t.keys[k].slowdown[among[i]], obj);
    if (c < best.second) best = {i, c};
  }
  return best;
}

std::vector<std::size_t> greedy_selection(const DecisionTable& t,
                                          const std::vector<std::size_t>& keys, std::size_t k) {
  std::vector<std::size_t> chosen;
  Cost current{keys.size() + 1, 0};
  while (chosen.size() < k) {
    std::size_t best = t.configs.size();
    Cost best_cost = current;
    for (std::size_t c = 0; c < t.configs.size(); ++c) {
      if (std::find(chosen.begin(), chosen.end(), c) != chosen.end()) continue;
      std::vector<std::size_t> trial = chosen;
      trial.push_back(c);
      const Cost cost = oracle_cost(t, keys, trial);
      if (cost < best_cost) best = c, best_cost = cost;
    }
    if (best == t.configs.size()) break;  // nothing lowers the cost any more
    chosen.push_back(best);
    current = best_cost;
  }
  return chosen;
}

// Greedy is myopic: its first pick is the best single configuration, which a pair of
// specialists can make useless. Replaces one chosen configuration by another while that
// lowers the cost (each swap lowers it strictly, so this ends).
void improve_by_swaps(const DecisionTable& t, const std::vector<std::size_t>& keys,
                      std::vector<std::size_t>& chosen) {
  Cost current = oracle_cost(t, keys, chosen);
  for (bool improved = true; improved;) {
    improved = false;
    for (std::size_t i = 0; i < chosen.size(); ++i) {
      for (std::size_t c = 0; c < t.configs.size(); ++c) {
        if (std::find(chosen.begin(), chosen.end(), c) != chosen.end()) continue;
        std::vector<std::size_t> trial = chosen;
        trial[i] = c;
        const Cost cost = oracle_cost(t, keys, trial);
        if (!(cost < current)) continue;
        chosen = std::move(trial);
        current = cost;
        improved = true;
      }
    }
  }
}

// Whether key `k` goes left at a split on `feature` at `threshold` / `category`.
bool goes_left(const DecisionTable& t, const KeyRow& k, std::size_t feature, double threshold,
               const std::string& category) {
  return t.features[feature].numeric ? k.value[feature] <= threshold : k.text[feature] == category;
}

struct Split {
  Cost cost;
  std::size_t feature = 0;
  double threshold = 0;
  std::string category;
  std::vector<std::size_t> left, right;
};

// The cheapest split of `keys` honouring min_leaf; its cost is the sides' leaf costs.
Split best_split(const DecisionTable& t, const std::vector<std::size_t>& keys,
                 const std::vector<std::size_t>& chosen, std::size_t min_leaf) {
  Split best;
  best.cost = Cost{keys.size() + 1, 0};
  for (std::size_t f = 0; f < t.features.size(); ++f) {
    std::vector<std::string> cats;  // the candidate thresholds or categories, as text
    for (std::size_t k : keys) cats.push_back(t.keys[k].text[f]);
    std::sort(cats.begin(), cats.end());
    cats.erase(std::unique(cats.begin(), cats.end()), cats.end());
    for (const std::string& c : cats) {
      const double threshold = t.features[f].numeric ? std::strtod(c.c_str(), nullptr) : 0;
      Split s;
      for (std::size_t k : keys)
        (goes_left(t, t.keys[k], f, threshold, c) ? s.left : s.right).push_back(k);
      if (s.left.size() < min_leaf || s.right.size() < min_leaf) continue;
      const Cost l = best_single(t, s.left, chosen, Objective::geomean).second;
      const Cost r = best_single(t, s.right, chosen, Objective::geomean).second;
      s.cost = Cost{l.unknown + r.unknown, l.value + r.value};
      if (!(s.cost < best.cost)) continue;
      s.feature = f;
      s.threshold = threshold;
      s.category = t.features[f].numeric ? std::string() : c;
      best = std::move(s);
    }
  }
  return best;
}

// Grows the subtree of `keys` at d.nodes[at].
void grow(const DecisionTable& t, Distilled& d, std::size_t at,
          const std::vector<std::size_t>& keys, int depth, const FitOptions& opts) {
  const auto [leaf, leaf_cost] = best_single(t, keys, d.configs, Objective::geomean);
  d.nodes[at].leaf = leaf;
  if (depth >= opts.max_depth || keys.size() < 2 * opts.min_leaf) return;
  Split s = best_split(t, keys, d.configs, std::max<std::size_t>(opts.min_leaf, 1));
  if (!(s.cost < leaf_cost)) return;
  d.nodes[at].feature = static_cast<int>(s.feature);
  d.nodes[at].threshold = s.threshold;
  d.nodes[at].category = s.category;
  d.nodes[at].left = static_cast<int>(d.nodes.size());
  d.nodes[at].right = static_cast<int>(d.nodes.size() + 1);
  d.nodes.resize(d.nodes.size() + 2);
  grow(t, d, static_cast<std::size_t>(d.nodes[at].left), s.left, depth + 1, opts);
  grow(t, d, static_cast<std::size_t>(d.nodes[at].right), s.right, depth + 1, opts);
}

// Drops each chosen configuration the others make useless (the cost without it is no higher):
// greedy's early picks can be, once later ones cover their keys.
void drop_unneeded(const DecisionTable& t, const std::vector<std::size_t>& keys,
                   std::vector<std::size_t>& chosen) {
  const Cost current = oracle_cost(t, keys, chosen);
  for (std::size_t i = chosen.size(); i-- > 0 && chosen.size() > 1;) {
    std::vector<std::size_t> trial = chosen;
    trial.erase(trial.begin() + static_cast<std::ptrdiff_t>(i));
    if (!(current < oracle_cost(t, keys, trial))) chosen = std::move(trial);
  }
}

// Removes the chosen configurations no leaf picks (the tree could not separate their keys),
// so the emitted table lists only what it can return.
void drop_unpicked(Distilled& d) {
  std::vector<std::size_t> renumber(d.configs.size(), d.configs.size());
  std::vector<std::size_t> kept;
  for (const Node& n : d.nodes) {
    if (n.feature >= 0 || renumber[n.leaf] != d.configs.size()) continue;
    renumber[n.leaf] = kept.size();
    kept.push_back(d.configs[n.leaf]);
  }
  for (Node& n : d.nodes)
    if (n.feature < 0) n.leaf = renumber[n.leaf];
  d.configs = std::move(kept);
}

}  // namespace

Result<Distilled> fit(const DecisionTable& t, const std::vector<std::size_t>& keys,
                      const FitOptions& opts) {
  if (opts.configs < 1)
    return Status(StatusCode::invalid_argument,
                  "--configs " + std::to_string(opts.configs) + ": at least 1 configuration");
  if (keys.empty()) return Status(StatusCode::invalid_argument, "no key to fit");
  if (opts.objective == Objective::worst && !opts.single)
    return Status(StatusCode::invalid_argument,
                  "--worst judges one configuration for every key: it needs --single");
  Distilled d;
  std::vector<std::size_t> all(t.configs.size());
  std::iota(all.begin(), all.end(), std::size_t{0});
  if (opts.single) {
    d.configs.push_back(all[best_single(t, keys, all, opts.objective).first]);
  } else {
    d.configs = greedy_selection(t, keys, opts.configs);
    improve_by_swaps(t, keys, d.configs);
    drop_unneeded(t, keys, d.configs);
    if (d.configs.empty()) d.configs.push_back(0);  // every key unknown everywhere: any one
  }
  d.nodes.resize(1);
  grow(t, d, 0, keys, 0, opts.single ? FitOptions{1, true, opts.objective, 0, 1} : opts);
  drop_unpicked(d);
  return d;
}

double best_of_set_geomean(const DecisionTable& t, const Distilled& d,
                           const std::vector<std::size_t>& keys) {
  double log_sum = 0;
  std::size_t known = 0;
  for (std::size_t k : keys) {
    double best = kUnknown;
    for (std::size_t c : d.configs) best = std::min(best, t.keys[k].slowdown[c]);
    if (!std::isfinite(best)) continue;
    log_sum += std::log(best);
    ++known;
  }
  return known > 0 ? std::exp(log_sum / static_cast<double>(known)) : 1.0;
}

std::size_t pick(const Distilled& d, const KeyRow& k) {
  std::size_t at = 0;
  while (d.nodes[at].feature >= 0) {
    const Node& n = d.nodes[at];
    const auto f = static_cast<std::size_t>(n.feature);
    const bool left = n.category.empty() ? k.value[f] <= n.threshold : k.text[f] == n.category;
    at = static_cast<std::size_t>(left ? n.left : n.right);
  }
  return d.nodes[at].leaf;
}

Evaluation evaluate(const DecisionTable& t, const Distilled& d,
                    const std::vector<std::size_t>& keys) {
  Evaluation e;
  double log_sum = 0;
  for (std::size_t k : keys) {
    const std::size_t p = pick(d, t.keys[k]);
    e.picks.push_back(p);
    ++e.keys;
    const double s = t.keys[k].slowdown[d.configs[p]];
    if (!std::isfinite(s)) {
      ++e.unknown;
      continue;
    }
    log_sum += std::log(s);
    e.worst = std::max(e.worst, s);
  }
  const std::size_t known = e.keys - e.unknown;
  e.geomean = known > 0 ? std::exp(log_sum / static_cast<double>(known)) : 1.0;
  return e;
}

Result<HeldOut> held_out(const DecisionTable& t, const FitOptions& opts, double fraction,
                         std::uint64_t seed) {
  const std::size_t n = t.keys.size();
  if (n < 2) return Status(StatusCode::invalid_argument, "a held-out check needs 2 keys or more");
  if (!(fraction >= 0 && fraction < 1))
    return Status(StatusCode::invalid_argument,
                  "--holdout " + std::to_string(fraction) + ": a fraction in [0, 1)");
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::vector<std::vector<std::size_t>> tests;  // the keys each fit leaves out
  HeldOut h;
  if (fraction == 0) {
    h.method = "leave-one-out";
    for (std::size_t i = 0; i < n; ++i) tests.push_back({i});
  } else {
    std::mt19937_64 rng(seed);
    std::shuffle(order.begin(), order.end(), rng);
    const auto count = std::clamp<std::size_t>(
        static_cast<std::size_t>(std::llround(fraction * static_cast<double>(n))), 1, n - 1);
    tests.emplace_back(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(count));
    char buf[96];
    std::snprintf(buf, sizeof buf, "holdout %.3g (%zu keys, seed %llu)", fraction, count,
                  static_cast<unsigned long long>(seed));
    h.method = buf;
  }
  double log_sum = 0;
  for (const auto& test : tests) {
    std::vector<std::size_t> train;
    for (std::size_t i = 0; i < n; ++i)
      if (std::find(test.begin(), test.end(), i) == test.end()) train.push_back(i);
    auto d = fit(t, train, opts);
    if (!d.ok()) return d.status();
    const Evaluation e = evaluate(t, *d, test);
    h.eval.keys += e.keys;
    h.eval.unknown += e.unknown;
    h.eval.worst = std::max(h.eval.worst, e.worst);
    log_sum += std::log(e.geomean) * static_cast<double>(e.keys - e.unknown);
    for (std::size_t p : e.picks) h.eval.picks.push_back(d->configs[p]);
  }
  const std::size_t known = h.eval.keys - h.eval.unknown;
  h.eval.geomean = known > 0 ? std::exp(log_sum / static_cast<double>(known)) : 1.0;
  return h;
}

}  // namespace tune::distill
