// Fitting a small table of configurations to a DecisionTable (`tune distill`): at most k
// configurations and a decision tree over the key's values that picks among them, minimising
// the geometric-mean slowdown against each key's own winner.
//
//   1. Selection (greedy): starting from none, add the configuration that most lowers the
//      cost when every key takes its best chosen configuration; stop at k, or when no
//      configuration lowers it (every key already at its winner); then swap one chosen
//      configuration for another while that lowers the cost (greedy alone keeps its first
//      pick, the best single configuration, even where two specialists beat it everywhere);
//      last, drop any chosen configuration the others make useless.
//   2. Tree (a small CART): a node's cost is the summed log-slowdown of the single chosen
//      configuration best over its keys; a split (numeric feature: value <= threshold, the
//      threshold a value the keys hold; categorical: value == category) is taken when it
//      lowers the summed cost of its two sides, within the depth limit and leaving at least
//      min_leaf keys on each side. Chosen configurations no leaf picks are then dropped
//      (Distilled::configs lists them in the order the tree's leaves first name them).
// Costs are compared first by the number of keys whose pick is unknown there (failed or never
// timed: decision_table.hpp), then by the sum of log-slowdowns (or, for Objective::worst, the
// largest slowdown). Ties go to the configuration first in the table's (sorted) order, so a
// fit is deterministic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "decision_table.hpp"

namespace tune::distill {

enum class Objective : std::uint8_t { geomean, worst };

struct FitOptions {
  std::size_t configs = 4;                   // k: at most this many configurations
  bool single = false;                       // one configuration for every key (no tree)
  Objective objective = Objective::geomean;  // worst: only with single
  int max_depth = 4;                         // the tree's depth limit (0: one leaf)
  std::size_t min_leaf = 2;                  // keys each side of a split keeps at least
};

// A tree node: a leaf picks `leaf` (an index into Distilled::configs); otherwise keys whose
// feature value is <= threshold (numeric) or == category (categorical) go to `left`.
struct Node {
  int feature = -1;  // -1: leaf
  double threshold = 0;
  std::string category;
  int left = -1, right = -1;
  std::size_t leaf = 0;
};

struct Distilled {
  std::vector<std::size_t> configs;  // indices into DecisionTable::configs, in pick order
  std::vector<Node> nodes;           // nodes[0] is the root
};

// What a Distilled table costs over some keys.
struct Evaluation {
  std::size_t keys = 0;
  std::size_t unknown = 0;  // keys whose pick has no ok row there
  double geomean = 1.0;     // over the other keys
  double worst = 1.0;       // over the other keys
  // Per key evaluated: an index into Distilled::configs (by held_out: into
  // DecisionTable::configs, since each held-out fit has its own list).
  std::vector<std::size_t> picks;
};

// Fits `opts` to the table's keys `keys` (indices into t.keys). invalid_argument when
// opts.configs < 1, keys is empty, or Objective::worst is asked without single.
Result<Distilled> fit(const DecisionTable& t, const std::vector<std::size_t>& keys,
                      const FitOptions& opts);
// The index into d.configs the tree picks for key `k`.
std::size_t pick(const Distilled& d, const KeyRow& k);
Evaluation evaluate(const DecisionTable& t, const Distilled& d,
                    const std::vector<std::size_t>& keys);
// The geometric-mean slowdown over `keys` (those with a known one) if each key took its best
// configuration of d.configs: what the tree could reach with a perfect choice.
double best_of_set_geomean(const DecisionTable& t, const Distilled& d,
                           const std::vector<std::size_t>& keys);

// The fit judged on keys it did not see: with fraction 0, leave-one-out (each key in turn
// held out of a fit of all the others); otherwise one split holding out round(fraction * n)
// keys drawn by `seed` (at least 1, at most n - 1). Needs at least 2 keys.
struct HeldOut {
  std::string method;  // "leave-one-out" or "holdout 0.25 (9 keys, seed 1)"
  Evaluation eval;
};
Result<HeldOut> held_out(const DecisionTable& t, const FitOptions& opts, double fraction,
                         std::uint64_t seed);

}  // namespace tune::distill
