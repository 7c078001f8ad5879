// Why these choices (few, and not fitted to one benchmark): a classifier of "top quantile vs
// the rest" is blind to the scale of run times and to outliers, and a failed configuration is
// simply in the worst class, so failures teach the model where not to go. The quantile is the
// best 15% of the evaluated points (at least 3): tight enough to point at the optimum's
// region, loose enough to give the classifier positives. The classifier alone converges on
// the region that is good on average and misses an optimum in a regime that is poor as a
// whole (a switch's slow setting): hence the local picks, which walk from the best point of
// each switch's setting to its neighbour that the regression predicts fastest (the
// regression, unlike the classifier, ranks points inside a poor region), and the picks by
// that regression's lower confidence bound, which reach scattered optima. Candidates are
// every unvisited accepted point when the space lists them (up to kScoreAll), else a random
// sample plus the neighbours of the best points.
#include "forest_proposal.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>

#include "search_features.hpp"

namespace tune::detail {
namespace {

// Spaces up to this many accepted points have every unvisited one scored each round.
constexpr std::size_t kScoreAll = 32768;
// Otherwise: this many random points, plus the neighbours of the best few.
constexpr std::size_t kSampledCandidates = 4096;
constexpr int kBestForNeighbours = 8;
constexpr double kQuantile = 0.15;
constexpr std::size_t kMinPositives = 3;
// The regression's lower confidence bound: its mean less this many spreads across trees.
constexpr float kSpreads = 1.0f;
// The regression's trees: fewer than the classifier's, to keep a proposal's cost down.
constexpr int kTimeTrees = 16;
// Dimensions of at most this many values (switches) split the history into niches.
constexpr std::uint64_t kNicheValues = 2;

// A numeric feature of a value: log2 of an integer's magnitude (sign kept), a boolean as 0/1;
// strings have only their index.
std::optional<float> log_value(const Value& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) {
    const double m = std::log2(1.0 + std::fabs(static_cast<double>(*i)));
    return static_cast<float>(*i < 0 ? -m : m);
  }
  if (const auto* b = std::get_if<bool>(&v)) return *b ? 1.0f : 0.0f;
  return std::nullopt;
}

// log2 of an integer's odd factor (|v| without its factors of two; 0 for 0): 0 for powers of
// two. GPU run times often hinge on alignment (warp and wavefront sizes, memory segments, bank
// counts), which neither a value's index nor its log2 isolates in one split.
std::optional<float> odd_factor(const Value& v) {
  const auto* i = std::get_if<std::int64_t>(&v);
  if (!i || *i == 0) return std::nullopt;
  std::uint64_t m = *i < 0 ? 0 - static_cast<std::uint64_t>(*i) : static_cast<std::uint64_t>(*i);
  while (m % 2 == 0) m /= 2;
  return static_cast<float>(std::log2(static_cast<double>(m)));
}

bool lower_first(const std::pair<float, std::uint64_t>& a,
                 const std::pair<float, std::uint64_t>& b) {
  return a.first < b.first;
}

bool contains(const std::vector<std::uint64_t>& v, std::uint64_t i) {
  return std::find(v.begin(), v.end(), i) != v.end();
}

}  // namespace

// The feature vector of every point: per dimension (a product space) or per parameter (a
// list), the value's index in its domain and, for numbers, log2 of the value and, for
// integers, log2 of its odd factor (odd_factor).
class ForestFeatures {
 public:
  explicit ForestFeatures(const Explorer& x) {
    const ConfigSpace& s = x.space();
    if (!s.is_list()) {
      for (const auto& d : s.dimensions()) add_column(d.values);
      return;
    }
    ListDomains list = list_domains(s);
    for (const auto& domain : list.domains) add_column(domain);
    list_rows_ = std::move(list.rows);
  }

  std::size_t size() const { return width_; }

  // Appends the features of point `index` to `out`.
  void append(const Explorer& x, std::uint64_t index, std::vector<float>& out) const {
    if (list_rows_.empty()) {
      const auto d = x.digits(index);
      for (std::size_t k = 0; k < columns_.size(); ++k) push(k, d[k], out);
    } else {
      const auto& row = list_rows_[index];
      for (std::size_t k = 0; k < columns_.size(); ++k) push(k, row[k], out);
    }
  }

 private:
  struct Column {
    bool numeric = false;
    std::vector<float> log2;  // per value index
    std::vector<float> odd;   // per value index; empty when the odd factors tell nothing
  };

  void add_column(const std::vector<Value>& values) {
    Column c;
    c.numeric = std::all_of(values.begin(), values.end(),
                            [](const Value& v) { return log_value(v).has_value(); });
    if (c.numeric)
      for (const auto& v : values) c.log2.push_back(*log_value(v));
    for (const auto& v : values) c.odd.push_back(odd_factor(v).value_or(0.0f));
    // Kept only for integers whose odd factors differ (else a split on them splits nothing).
    const bool integers = std::all_of(values.begin(), values.end(), [](const Value& v) {
      return std::holds_alternative<std::int64_t>(v);
    });
    if (!integers ||
        std::all_of(c.odd.begin(), c.odd.end(), [&](float o) { return o == c.odd.front(); }))
      c.odd.clear();
    width_ += (c.numeric ? 2 : 1) + (c.odd.empty() ? 0 : 1);
    columns_.push_back(std::move(c));
  }
  void push(std::size_t k, std::uint64_t value_index, std::vector<float>& out) const {
    const Column& c = columns_[k];
    if (value_index == ListDomains::kMissing) {
      out.push_back(-1.0f);
      if (c.numeric) out.push_back(-1.0f);
      if (!c.odd.empty()) out.push_back(-1.0f);
      return;
    }
    out.push_back(static_cast<float>(value_index));
    if (c.numeric) out.push_back(c.log2[value_index]);
    if (!c.odd.empty()) out.push_back(c.odd[value_index]);
  }

  std::vector<Column> columns_;
  std::size_t width_ = 0;
  std::vector<std::vector<std::uint32_t>> list_rows_;  // a list space's value indices per point
};

namespace {

// The evaluated points (finite values, best first) of each niche: the whole history, then,
// for each dimension of few values (a switch), the points with each of its values. A switch
// often selects another code path (shared memory or not): a regime the model rates poorly as
// a whole may hold the optimum, so its own best points are searched around too.
std::vector<std::vector<std::uint64_t>> niches(const Explorer& x) {
  std::vector<std::vector<std::uint64_t>> out;
  if (x.space().is_list()) return out;
  auto history = x.so_far().history;
  history.erase(std::remove_if(history.begin(), history.end(),
                               [](const auto& h) { return !std::isfinite(h.second); }),
                history.end());
  std::sort(history.begin(), history.end(),
            [](const auto& a, const auto& b) { return a.second < b.second; });
  out.emplace_back();
  for (const auto& h : history) out.back().push_back(h.first);
  const auto& radix = x.radix();
  for (std::size_t k = 0; k < radix.size(); ++k) {
    if (radix[k] < 2 || radix[k] > kNicheValues) continue;
    const std::size_t first = out.size();
    out.resize(first + radix[k]);
    for (const auto& h : history) out[first + x.digits(h.first)[k]].push_back(h.first);
  }
  out.erase(std::remove_if(out.begin(), out.end(), [](const auto& n) { return n.empty(); }),
            out.end());
  return out;
}

// The unvisited accepted point not in `taken` that differs from `at` in one dimension (any
// other value of it) and that `times` predicts fastest; nullopt when there is none.
std::optional<std::uint64_t> best_neighbour(Explorer& x, const ForestFeatures& features,
                                            const Forest& times, std::uint64_t at,
                                            const std::vector<std::uint64_t>& taken) {
  const auto digits = x.digits(at);
  std::optional<std::uint64_t> best;
  float best_score = -std::numeric_limits<float>::infinity();
  std::vector<float> row;
  for (std::size_t k = 0; k < digits.size(); ++k)
    for (std::uint64_t j = 0; j < x.radix()[k]; ++j) {
      if (j == digits[k]) continue;
      auto d = digits;
      d[k] = j;
      const std::uint64_t i = x.index_of(d);
      if (x.visited(i) || contains(taken, i)) continue;
      if (x.known_accepted() && !std::binary_search(x.accepted().begin(), x.accepted().end(), i))
        continue;
      row.clear();
      features.append(x, i, row);
      // Ties go to a random one of them: a small random term below the forest's resolution.
      const float score = -times.predict(row.data()) + 1e-4f * static_cast<float>(x.unit());
      if (score > best_score) best_score = score, best = i;
    }
  return best;
}

// Unvisited points worth scoring: all of them when the accepted points are listed and few
// enough, else a random sample and the neighbours of the best points.
std::vector<std::uint64_t> forest_candidates(Explorer& x) {
  std::vector<std::uint64_t> pool;
  if (x.known_accepted() && x.accepted().size() <= kScoreAll) {
    for (std::uint64_t i : x.accepted())
      if (!x.visited(i)) pool.push_back(i);
    return pool;
  }
  std::unordered_set<std::uint64_t> seen;
  for (std::size_t k = 0; k < kSampledCandidates; ++k)
    if (auto r = x.random_unvisited(); r && seen.insert(*r).second) pool.push_back(*r);
  auto history = x.so_far().history;
  std::sort(history.begin(), history.end(),
            [](const auto& a, const auto& b) { return a.second < b.second; });
  for (std::size_t t = 0; t < history.size() && t < kBestForNeighbours; ++t) {
    const auto digits = x.digits(history[t].first);
    for (std::size_t k = 0; k < digits.size(); ++k)
      for (int step : {-1, 1}) {
        auto d = digits;
        if ((step < 0 && d[k] == 0) || (step > 0 && d[k] + 1 >= x.radix()[k])) continue;
        d[k] = static_cast<std::uint64_t>(static_cast<std::int64_t>(d[k]) + step);
        const std::uint64_t i = x.index_of(d);
        if (!x.visited(i) && seen.insert(i).second) pool.push_back(i);
      }
  }
  return pool;
}

// How a call's `count` picks divide: local walks and lower-bound picks, each 2 of 7 (rounded),
// the rest the classifier's; a bound pick only where as many classifier picks remain.
struct Shares {
  std::size_t local, bound;
};
Shares shares(std::size_t count) {
  const std::size_t local = count >= 2 ? (2 * count + 3) / 7 : 0;
  const std::size_t bound = std::min((2 * count + 3) / 7, (count - local) / 2);
  return {local, bound};
}

}  // namespace

ForestProposal::ForestProposal(const Explorer& x)
    : features_(std::make_unique<const ForestFeatures>(x)) {}
ForestProposal::~ForestProposal() = default;

// Fits the classifier to every evaluation so far: 1 for the best quantile, 0 for the rest.
void ForestProposal::fit_classifier(Explorer& x) {
  const auto& history = x.so_far().history;
  std::vector<double> finite;
  for (const auto& [i, v] : history)
    if (std::isfinite(v)) finite.push_back(v);
  std::sort(finite.begin(), finite.end());
  double cut = -kInf;  // every evaluation failed: all in the worst class
  if (!finite.empty()) {
    const std::size_t k = std::max(
        kMinPositives, static_cast<std::size_t>(kQuantile * static_cast<double>(history.size())));
    cut = finite[std::min(k, finite.size()) - 1];
  }
  std::vector<float> xs, ys;
  xs.reserve(history.size() * features_->size());
  for (const auto& [i, v] : history) {
    features_->append(x, i, xs);
    ys.push_back(v <= cut ? 1.0f : 0.0f);
  }
  classifier_.fit(xs, features_->size(), ys, {}, x.rng());
}

// Fits the regression to log2 of every evaluation's value (a failure: one above the worst
// success).
void ForestProposal::fit_times(Explorer& x) {
  const auto& history = x.so_far().history;
  double worst = 0;
  bool any = false;
  for (const auto& [i, v] : history)
    if (std::isfinite(v) && v > 0)
      worst = any ? std::max(worst, std::log2(v)) : std::log2(v), any = true;
  std::vector<float> xs, ys;
  xs.reserve(history.size() * features_->size());
  for (const auto& [i, v] : history) {
    features_->append(x, i, xs);
    ys.push_back(static_cast<float>(std::isfinite(v) && v > 0 ? std::log2(v) : worst + 1));
  }
  Forest::Options opt;
  opt.trees = kTimeTrees;
  times_.fit(xs, features_->size(), ys, opt, x.rng());
}

std::vector<std::uint64_t> ForestProposal::propose(Explorer& x, std::size_t count,
                                                   const std::vector<std::uint64_t>& taken) {
  std::vector<std::uint64_t> out;
  if (count == 0) return out;
  const Shares share = shares(count);
  fit_classifier(x);
  if (share.local > 0 || share.bound > 0) fit_times(x);  // only their picks use the regression
  std::vector<std::uint64_t> excluded = taken;           // `taken` and the picks so far
  const auto add = [&](std::uint64_t i) {
    out.push_back(i);
    excluded.push_back(i);
  };
  const auto niche = niches(x);
  for (std::size_t p = 0; p < share.local && !niche.empty(); ++p) {
    // The first local pick always searches the whole history's niche; the rest take turns.
    const auto& members = p == 0 ? niche.front() : niche[turn_++ % niche.size()];
    for (std::uint64_t e : members)  // the best member whose neighbourhood is not exhausted
      if (auto n = best_neighbour(x, *features_, times_, e, excluded)) {
        add(*n);
        break;
      }
  }
  std::vector<std::uint64_t> pool = forest_candidates(x);
  std::shuffle(pool.begin(), pool.end(), x.rng());
  std::vector<std::pair<float, std::uint64_t>> scored, bound;
  scored.reserve(pool.size());
  bound.reserve(pool.size());
  std::vector<float> row;
  for (std::uint64_t i : pool) {
    if (contains(excluded, i)) continue;
    row.clear();
    features_->append(x, i, row);
    scored.emplace_back(-classifier_.predict(row.data()), i);
    if (share.bound == 0) continue;  // the regression's spreads: a fifth of a proposal's time
    const auto [mean, spread] = times_.predict_spread(row.data());
    bound.emplace_back(mean - kSpreads * spread, i);
  }
  const std::size_t bounded = std::min(bound.size(), share.bound);
  std::partial_sort(bound.begin(), bound.begin() + static_cast<std::ptrdiff_t>(bounded),
                    bound.end(), lower_first);
  for (std::size_t k = 0; k < bounded; ++k) add(bound[k].second);
  std::partial_sort(scored.begin(),
                    scored.begin() + static_cast<std::ptrdiff_t>(std::min(scored.size(), count)),
                    scored.end(), lower_first);
  for (std::size_t k = 0; k < scored.size() && out.size() < count; ++k)
    if (!contains(out, scored[k].second)) add(scored[k].second);
  return out;
}

}  // namespace tune::detail
