#include "tune/search.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <unordered_map>

#include "elapsed.hpp"

namespace tune {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Points of a product space small enough to list the accepted ones up front.
constexpr std::uint64_t kListLimit = 1u << 20;
// Consecutive proposals that cost no evaluation before a strategy gives up or restarts.
constexpr int kStaleLimit = 2000;
// Consecutive proposals rejected or seen before a local search jumps to a random point.
constexpr int kJumpAfter = 64;

// The shared machinery: index arithmetic, constraint filtering, memoised evaluation, budget.
class Explorer {
 public:
  Explorer(const ConfigSpace& space, const DeviceInfo& dev, const Objective& f,
           const SearchBudget& budget, std::uint64_t seed)
      : space_(space),
        dev_(dev),
        f_(f),
        budget_(budget),
        rng_(seed),
        t0_(std::chrono::steady_clock::now()) {
    if (space.is_list()) {
      radix_.push_back(space.raw_size());
    } else {
      for (const auto& d : space.dimensions()) radix_.push_back(d.values.size());
    }
    raw_ = space.raw_size();
    if (raw_ <= kListLimit) {
      for (std::uint64_t i = 0; i < raw_; ++i)
        if (space.accepts(space.at(i), dev)) accepted_.push_back(i);
      known_accepted_ = true;
    }
  }

  Status check() const {
    if (raw_ == 0) return Status(StatusCode::invalid_argument, "search over an empty config space");
    if (known_accepted_ && accepted_.empty())
      return Status(StatusCode::invalid_argument,
                    "search: no configuration of the space passes the constraints");
    return {};
  }

  bool out_of_budget() const {
    if (known_accepted_ && result_.evaluations >= accepted_.size()) return true;
    if (budget_.max_evaluations != 0 && result_.evaluations >= budget_.max_evaluations) return true;
    if (budget_.max_ms > 0 && detail::ms_since(t0_) >= budget_.max_ms) return true;
    return false;
  }

  // Value of point `index`: memoised; nullopt when the constraints reject it or the budget
  // is spent. `fresh` tells whether this call spent an evaluation.
  std::optional<double> eval(std::uint64_t index, bool* fresh = nullptr) {
    if (fresh) *fresh = false;
    if (auto it = memo_.find(index); it != memo_.end()) {
      if (std::isnan(it->second)) return std::nullopt;  // rejected earlier
      return it->second;
    }
    Config c = space_.at(index);
    if (!space_.accepts(c, dev_)) {
      memo_[index] = std::numeric_limits<double>::quiet_NaN();
      return std::nullopt;
    }
    if (out_of_budget()) return std::nullopt;
    double v = f_(c);
    if (std::isnan(v)) v = kInf;
    memo_[index] = v;
    ++result_.evaluations;
    result_.history.emplace_back(index, v);
    if (result_.evaluations == 1 || v < result_.best_value) {
      result_.best_value = v;
      result_.best = std::move(c);
      best_index_ = index;
    }
    if (fresh) *fresh = true;
    return v;
  }
  bool visited(std::uint64_t index) const { return memo_.count(index) != 0; }
  std::uint64_t best_index() const { return best_index_; }

  // A random accepted point not evaluated yet; nullopt when none can be found.
  std::optional<std::uint64_t> random_unvisited() {
    if (known_accepted_) {
      if (result_.evaluations >= accepted_.size()) return std::nullopt;
      for (int tries = 0; tries < 64; ++tries) {
        std::uint64_t i = accepted_[uniform(accepted_.size())];
        if (!visited(i)) return i;
      }
      for (std::uint64_t i : accepted_)  // dense fallback when most points are visited
        if (!visited(i)) return i;
      return std::nullopt;
    }
    for (int tries = 0; tries < 10000; ++tries) {
      std::uint64_t i = uniform(raw_);
      if (visited(i)) continue;
      if (space_.accepts(space_.at(i), dev_)) return i;
      memo_[i] = std::numeric_limits<double>::quiet_NaN();
    }
    return std::nullopt;
  }

  std::vector<std::uint64_t> digits(std::uint64_t index) const {
    std::vector<std::uint64_t> d(radix_.size());
    for (std::size_t k = radix_.size(); k-- > 0;) {
      d[k] = index % radix_[k];
      index /= radix_[k];
    }
    return d;
  }
  std::uint64_t index_of(const std::vector<std::uint64_t>& d) const {
    std::uint64_t i = 0;
    for (std::size_t k = 0; k < radix_.size(); ++k) i = i * radix_[k] + d[k];
    return i;
  }
  // One dimension moved by one step (reflected at the ends), or to any value for a list.
  std::uint64_t neighbour(std::uint64_t index) {
    auto d = digits(index);
    std::vector<std::size_t> movable;
    for (std::size_t k = 0; k < radix_.size(); ++k)
      if (radix_[k] > 1) movable.push_back(k);
    if (movable.empty()) return index;
    std::size_t k = movable[uniform(movable.size())];
    if (space_.is_list()) {
      d[k] = uniform(radix_[k]);
    } else if (d[k] == 0) {
      d[k] = 1;
    } else if (d[k] + 1 == radix_[k]) {
      d[k] -= 1;
    } else {
      d[k] = uniform(2) == 0 ? d[k] - 1 : d[k] + 1;
    }
    return index_of(d);
  }

  std::uint64_t uniform(std::uint64_t n) { return n <= 1 ? 0 : rng_() % n; }
  double unit() { return std::uniform_real_distribution<double>(0.0, 1.0)(rng_); }
  const std::vector<std::uint64_t>& radix() const { return radix_; }
  bool exhausted() const { return out_of_budget(); }

  SearchResult finish() {
    result_.accepted_points = known_accepted_ ? accepted_.size() : 0;
    if (result_.evaluations == 0) result_.best_value = kInf;
    return std::move(result_);
  }
  const std::vector<std::uint64_t>& accepted() const { return accepted_; }
  bool known_accepted() const { return known_accepted_; }
  std::uint64_t raw() const { return raw_; }

 private:
  const ConfigSpace& space_;
  const DeviceInfo& dev_;
  const Objective& f_;
  SearchBudget budget_;
  std::mt19937_64 rng_;
  std::chrono::steady_clock::time_point t0_;
  std::vector<std::uint64_t> radix_;
  std::uint64_t raw_ = 0;
  bool known_accepted_ = false;
  std::vector<std::uint64_t> accepted_;
  std::unordered_map<std::uint64_t, double> memo_;  // NaN marks a rejected point
  SearchResult result_;
  std::uint64_t best_index_ = 0;
};

class Exhaustive final : public SearchStrategy {
 public:
  std::string_view name() const noexcept override { return "exhaustive"; }
  Result<SearchResult> search(const ConfigSpace& space, const DeviceInfo& dev, const Objective& f,
                              const SearchBudget& budget, std::uint64_t seed) const override {
    Explorer x(space, dev, f, budget, seed);
    TUNE_RETURN_IF_ERROR(x.check());
    for (std::uint64_t i = 0; i < x.raw() && !x.exhausted(); ++i) x.eval(i);
    return x.finish();
  }
};

class RandomSearch final : public SearchStrategy {
 public:
  std::string_view name() const noexcept override { return "random"; }
  Result<SearchResult> search(const ConfigSpace& space, const DeviceInfo& dev, const Objective& f,
                              const SearchBudget& budget, std::uint64_t seed) const override {
    Explorer x(space, dev, f, budget, seed);
    TUNE_RETURN_IF_ERROR(x.check());
    if (x.known_accepted()) {
      std::vector<std::uint64_t> order = x.accepted();
      std::mt19937_64 rng(seed);
      std::shuffle(order.begin(), order.end(), rng);
      for (std::uint64_t i : order) {
        if (x.exhausted()) break;
        x.eval(i);
      }
    } else {
      while (!x.exhausted()) {
        auto i = x.random_unvisited();
        if (!i) break;
        x.eval(*i);
      }
    }
    return x.finish();
  }
};

class Annealing final : public SearchStrategy {
 public:
  explicit Annealing(int patience) : patience_(std::max(1, patience)) {}
  std::string_view name() const noexcept override { return "annealing"; }
  Result<SearchResult> search(const ConfigSpace& space, const DeviceInfo& dev, const Objective& f,
                              const SearchBudget& budget, std::uint64_t seed) const override {
    Explorer x(space, dev, f, budget, seed);
    TUNE_RETURN_IF_ERROR(x.check());
    auto start = x.random_unvisited();
    if (!start) return x.finish();
    std::uint64_t cur = *start;
    auto v0 = x.eval(cur);
    if (!v0) return x.finish();
    double fcur = *v0;
    // Temperature as a relative slowdown: a move 10% worse is taken with probability
    // exp(-0.1 / T). It cools geometrically from 0.2 to 0.002 over the evaluation budget.
    const double t0 = 0.2;
    const double evals =
        budget.max_evaluations ? static_cast<double>(budget.max_evaluations) : 1000.0;
    const double decay = std::pow(0.01, 1.0 / evals);
    double temp = t0;
    int since_improvement = 0, stale = 0, restarts = 0;
    double best_seen = fcur;
    while (!x.exhausted() && stale < kStaleLimit) {
      std::uint64_t nb = x.neighbour(cur);
      bool fresh = false;
      auto v = x.eval(nb, &fresh);
      if (!fresh) ++stale;
      if (!v) {
        // Every neighbour rejected by the constraints (BM == BN, say) or spent: jump to a
        // fresh random point instead of proposing neighbours until the stale limit.
        if (stale % kJumpAfter != 0) continue;
        auto r = x.random_unvisited();
        if (!r) break;
        if (auto rv = x.eval(*r)) {
          cur = *r;
          fcur = *rv;
          since_improvement = 0;
          stale = 0;
        }
        continue;
      }
      if (fresh) {
        stale = 0;
        temp *= decay;
        if (*v < best_seen) {
          best_seen = *v;
          since_improvement = 0;
        } else {
          ++since_improvement;
        }
      }
      double rel = std::isfinite(fcur) ? (*v - fcur) / std::max(std::fabs(fcur), 1e-30) : -1.0;
      if (*v < fcur || (std::isfinite(*v) && x.unit() < std::exp(-rel / temp))) {
        cur = nb;
        fcur = *v;
      }
      if (since_improvement >= patience_ || stale >= kStaleLimit / 2) {
        // Iterated local search: alternate between a kick from the best point so far (a few
        // random steps) and a fresh random point.
        std::optional<std::uint64_t> r;
        if (++restarts % 2 == 1 && !x.exhausted()) {
          std::uint64_t kicked = x.best_index();
          for (int k = 0; k < 3; ++k) kicked = x.neighbour(kicked);
          if (!x.visited(kicked) && x.eval(kicked)) r = kicked;
        }
        if (!r) r = x.random_unvisited();
        if (!r) break;
        auto rv = x.eval(*r);
        if (!rv) continue;
        cur = *r;
        fcur = *rv;
        since_improvement = 0;
        stale = 0;
      }
    }
    return x.finish();
  }

 private:
  int patience_;
};

class Genetic final : public SearchStrategy {
 public:
  explicit Genetic(int population) : population_(std::max(4, population)) {}
  std::string_view name() const noexcept override { return "genetic"; }
  Result<SearchResult> search(const ConfigSpace& space, const DeviceInfo& dev, const Objective& f,
                              const SearchBudget& budget, std::uint64_t seed) const override {
    Explorer x(space, dev, f, budget, seed);
    TUNE_RETURN_IF_ERROR(x.check());
    struct Individual {
      std::uint64_t index;
      double value;
    };
    std::vector<Individual> pop;
    for (int i = 0; i < population_ && !x.exhausted(); ++i) {
      auto r = x.random_unvisited();
      if (!r) break;
      if (auto v = x.eval(*r)) pop.push_back({*r, *v});
    }
    if (pop.empty()) return x.finish();
    const auto& radix = x.radix();
    auto tournament = [&]() -> const Individual& {
      const Individual* best = &pop[x.uniform(pop.size())];
      for (int k = 0; k < 2; ++k) {
        const Individual& c = pop[x.uniform(pop.size())];
        if (c.value < best->value) best = &c;
      }
      return *best;
    };
    int stale = 0;
    while (!x.exhausted() && stale < kStaleLimit) {
      std::sort(pop.begin(), pop.end(),
                [](const Individual& a, const Individual& b) { return a.value < b.value; });
      std::vector<Individual> next(pop.begin(), pop.begin() + std::min<std::size_t>(2, pop.size()));
      while (static_cast<int>(next.size()) < population_ && !x.exhausted() && stale < kStaleLimit) {
        auto a = x.digits(tournament().index);
        auto b = x.digits(tournament().index);
        std::vector<std::uint64_t> child(radix.size());
        for (std::size_t k = 0; k < radix.size(); ++k) child[k] = x.uniform(2) ? a[k] : b[k];
        std::uint64_t idx = x.index_of(child);
        // Mutate: at least one neighbouring step, more while the child was seen already.
        int steps = x.uniform(radix.size() + 1) == 0 ? 0 : 1;
        for (int s = 0; s < steps || (x.visited(idx) && s < 8); ++s) idx = x.neighbour(idx);
        bool fresh = false;
        auto v = x.eval(idx, &fresh);
        if (!fresh) {
          ++stale;
          if (stale % 64 == 0) {  // the population has converged: inject a random immigrant
            if (auto r = x.random_unvisited()) {
              if (auto rv = x.eval(*r)) next.push_back({*r, *rv});
            } else {
              stale = kStaleLimit;
            }
          }
          continue;
        }
        stale = 0;
        if (v) next.push_back({idx, *v});
      }
      pop = std::move(next);
    }
    return x.finish();
  }

 private:
  int population_;
};

}  // namespace

std::unique_ptr<SearchStrategy> make_exhaustive_search() { return std::make_unique<Exhaustive>(); }
std::unique_ptr<SearchStrategy> make_random_search() { return std::make_unique<RandomSearch>(); }
std::unique_ptr<SearchStrategy> make_annealing_search(int patience) {
  return std::make_unique<Annealing>(patience);
}
std::unique_ptr<SearchStrategy> make_genetic_search(int population) {
  return std::make_unique<Genetic>(population);
}
std::unique_ptr<SearchStrategy> make_search(std::string_view name) {
  if (name == "exhaustive") return make_exhaustive_search();
  if (name == "random") return make_random_search();
  if (name == "annealing") return make_annealing_search();
  if (name == "genetic") return make_genetic_search();
  return nullptr;
}

}  // namespace tune
