// Model-guided search: a likelihood-free Bayesian optimisation (as PyTorch Helion's LFBO). A
// random forest (search_forest.hpp) learns from every evaluation whether a point is in the best
// quantile; each round evaluates, in one batch, the unvisited points it rates most likely.
//
// Why these choices (few, and not fitted to one benchmark): a classifier of "top quantile vs
// the rest" is blind to the scale of run times and to outliers, and a failed configuration is
// simply in the worst class, so failures teach the model where not to go. Features are each
// dimension's value index (order) and log2 value (ratios, as tile sizes act), so a split can
// follow either. The quantile is the best 15% of the evaluated points (at least 3): tight
// enough to point at the optimum's region, loose enough to give the classifier positives.
// Candidates are every unvisited accepted point when the space lists them (up to kScoreAll),
// else a random sample plus the neighbours of the best points. One point of each batch is
// random, so that a wrong model is corrected by data from where it does not look.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <unordered_set>

#include "search_explorer.hpp"
#include "search_forest.hpp"

namespace tune {
namespace {

using detail::Explorer;

// Spaces up to this many accepted points have every unvisited one scored each round.
constexpr std::size_t kScoreAll = 32768;
// Otherwise: this many random points, plus the neighbours of the best few.
constexpr std::size_t kSampled = 4096;
constexpr int kTopForNeighbours = 8;
constexpr double kQuantile = 0.15;
constexpr std::size_t kMinPositives = 3;

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

// The feature vector of every point: per dimension (a product space) or per parameter (a
// list), the value's index in its domain and, for numbers, log2 of the value.
class Features {
 public:
  explicit Features(const Explorer& x) {
    const ConfigSpace& s = x.space();
    if (!s.is_list()) {
      for (const auto& d : s.dimensions()) add_column(d.values);
      return;
    }
    // A list: each parameter's distinct values, in the order they first appear.
    std::vector<std::string> names;
    std::vector<std::vector<Value>> domains;
    std::vector<Config> configs;
    for (std::uint64_t i = 0; i < s.raw_size(); ++i) configs.push_back(s.at(i));
    for (const auto& c : configs)
      for (const auto& [name, v] : c.params()) {
        auto it = std::find(names.begin(), names.end(), name);
        if (it == names.end()) {
          names.push_back(name);
          domains.emplace_back();
          it = names.end() - 1;
        }
        auto& dom = domains[static_cast<std::size_t>(it - names.begin())];
        if (std::find(dom.begin(), dom.end(), v) == dom.end()) dom.push_back(v);
      }
    list_rows_.resize(configs.size());
    for (std::size_t p = 0; p < names.size(); ++p) add_column(domains[p]);
    for (std::size_t r = 0; r < configs.size(); ++r)
      for (std::size_t p = 0; p < names.size(); ++p) {
        const Value* v = configs[r].find(names[p]);
        auto at = v ? std::find(domains[p].begin(), domains[p].end(), *v) : domains[p].end();
        list_rows_[r].push_back(v ? static_cast<std::uint32_t>(at - domains[p].begin()) : kMissing);
      }
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
  static constexpr std::uint32_t kMissing = 0xffffffffu;
  struct Column {
    bool numeric = false;
    std::vector<float> log2;  // per value index
  };

  void add_column(const std::vector<Value>& values) {
    Column c;
    c.numeric = std::all_of(values.begin(), values.end(),
                            [](const Value& v) { return log_value(v).has_value(); });
    if (c.numeric)
      for (const auto& v : values) c.log2.push_back(*log_value(v));
    width_ += c.numeric ? 2 : 1;
    columns_.push_back(std::move(c));
  }
  void push(std::size_t k, std::uint64_t value_index, std::vector<float>& out) const {
    const Column& c = columns_[k];
    if (value_index == kMissing) {
      out.push_back(-1.0f);
      if (c.numeric) out.push_back(-1.0f);
      return;
    }
    out.push_back(static_cast<float>(value_index));
    if (c.numeric) out.push_back(c.log2[value_index]);
  }

  std::vector<Column> columns_;
  std::size_t width_ = 0;
  std::vector<std::vector<std::uint32_t>> list_rows_;  // a list space's value indices per point
};

class ModelSearch final : public SearchStrategy {
 public:
  ModelSearch(int batch, int initial)
      : batch_(std::max(1, batch)), initial_(std::max(2, initial)) {}
  std::string_view name() const noexcept override { return "model"; }
  Result<SearchResult> search(const ConfigSpace& space, const DeviceInfo& dev, const Objective& f,
                              const SearchBudget& budget, std::uint64_t seed) const override {
    return run(space, dev, detail::one_by_one(f), budget, seed);
  }
  Result<SearchResult> search_batches(const ConfigSpace& space, const DeviceInfo& dev,
                                      const BatchObjective& f, const SearchBudget& budget,
                                      std::uint64_t seed) const override {
    return run(space, dev, f, budget, seed);
  }

 private:
  Result<SearchResult> run(const ConfigSpace& space, const DeviceInfo& dev, BatchObjective f,
                           const SearchBudget& budget, std::uint64_t seed) const {
    Explorer x(space, dev, std::move(f), budget, seed);
    TUNE_RETURN_IF_ERROR(x.check());
    const Features features(x);
    // The initial design: random points, one batch.
    std::vector<std::uint64_t> first;
    for (int i = 0; i < initial_; ++i) {
      auto r = x.random_unvisited();
      if (!r) break;
      if (std::find(first.begin(), first.end(), *r) == first.end()) first.push_back(*r);
    }
    x.eval_batch(first);
    int stale = 0;
    detail::Forest forest;
    while (!x.exhausted() && stale < 8) {
      fit(x, features, forest);
      std::vector<std::uint64_t> chosen = propose(x, features, forest);
      stale = x.eval_batch(chosen).empty() ? stale + 1 : 0;
    }
    return x.finish();
  }

  // Fits the forest to every evaluation so far: 1 for the best quantile, 0 for the rest.
  void fit(Explorer& x, const Features& features, detail::Forest& forest) const {
    const auto& history = x.so_far().history;
    std::vector<double> finite;
    for (const auto& [i, v] : history)
      if (std::isfinite(v)) finite.push_back(v);
    std::sort(finite.begin(), finite.end());
    double cut = -detail::kInf;  // every evaluation failed: all in the worst class
    if (!finite.empty()) {
      const std::size_t k = std::max(
          kMinPositives, static_cast<std::size_t>(kQuantile * static_cast<double>(history.size())));
      cut = finite[std::min(k, finite.size()) - 1];
    }
    std::vector<float> xs, ys;
    xs.reserve(history.size() * features.size());
    for (const auto& [i, v] : history) {
      features.append(x, i, xs);
      ys.push_back(v <= cut ? 1.0f : 0.0f);
    }
    forest.fit(xs, features.size(), ys, {}, x.rng());
  }

  // The batch to evaluate next: the unvisited candidates the forest rates highest (ties in
  // random order), and one random point.
  std::vector<std::uint64_t> propose(Explorer& x, const Features& features,
                                     const detail::Forest& forest) const {
    std::vector<std::uint64_t> pool = candidates(x);
    std::shuffle(pool.begin(), pool.end(), x.rng());
    std::vector<std::pair<float, std::uint64_t>> scored;
    scored.reserve(pool.size());
    std::vector<float> row;
    for (std::uint64_t i : pool) {
      row.clear();
      features.append(x, i, row);
      scored.emplace_back(-forest.predict(row.data()), i);
    }
    const std::size_t take =
        std::min<std::size_t>(scored.size(), static_cast<std::size_t>(std::max(1, batch_ - 1)));
    std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(take),
                      scored.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::uint64_t> out;
    for (std::size_t k = 0; k < take; ++k) out.push_back(scored[k].second);
    if (batch_ > 1)
      if (auto r = x.random_unvisited()) out.push_back(*r);
    return out;
  }

  // Unvisited points worth scoring: all of them when the accepted points are listed and few
  // enough, else a random sample and the neighbours of the best points.
  static std::vector<std::uint64_t> candidates(Explorer& x) {
    std::vector<std::uint64_t> pool;
    if (x.known_accepted() && x.accepted().size() <= kScoreAll) {
      for (std::uint64_t i : x.accepted())
        if (!x.visited(i)) pool.push_back(i);
      return pool;
    }
    std::unordered_set<std::uint64_t> seen;
    for (std::size_t k = 0; k < kSampled; ++k)
      if (auto r = x.random_unvisited(); r && seen.insert(*r).second) pool.push_back(*r);
    auto history = x.so_far().history;
    std::sort(history.begin(), history.end(),
              [](const auto& a, const auto& b) { return a.second < b.second; });
    for (std::size_t t = 0; t < history.size() && t < kTopForNeighbours; ++t) {
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

  int batch_;
  int initial_;
};

}  // namespace

std::unique_ptr<SearchStrategy> make_model_search(int batch, int initial) {
  return std::make_unique<ModelSearch>(batch, initial);
}

}  // namespace tune
