// Differential evolution (Storn and Price's rand/1/bin) over value indices: each target's trial
// takes, per dimension with probability CR (and in one dimension always), a + F * (b - c) of
// three other individuals, rounded and clamped to the domain; the trial replaces its target
// when it is no slower. A trial already evaluated or rejected by the constraints costs nothing
// and is replaced by a random immigrant, so a converged population keeps exploring.
#include <algorithm>
#include <cmath>

#include "search_explorer.hpp"

namespace tune {
namespace {

using detail::Explorer;

constexpr double kF = 0.5;
constexpr double kCR = 0.7;

class DifferentialEvolution final : public detail::ExplorerStrategy {
 public:
  explicit DifferentialEvolution(int population) : population_(std::max(4, population)) {}
  std::string_view name() const noexcept override { return "differential_evolution"; }

 protected:
  Result<SearchResult> explore(Explorer& x, std::uint64_t /*seed*/) const override {
    using Individual = Explorer::Individual;
    std::vector<Individual> pop = x.random_population(population_);
    if (pop.size() < 4) return x.finish();
    const auto& radix = x.radix();
    int stale = 0;
    while (!x.exhausted() && stale < detail::kStaleLimit) {
      for (std::size_t t = 0; t < pop.size() && !x.exhausted(); ++t) {
        std::size_t a = t, b = t, c = t;
        while (a == t) a = x.uniform(pop.size());
        while (b == t || b == a) b = x.uniform(pop.size());
        while (c == t || c == a || c == b) c = x.uniform(pop.size());
        const auto da = x.digits(pop[a].index), db = x.digits(pop[b].index),
                   dc = x.digits(pop[c].index);
        auto trial = x.digits(pop[t].index);
        const std::size_t forced = x.uniform(radix.size());
        for (std::size_t k = 0; k < radix.size(); ++k) {
          if (k != forced && x.unit() >= kCR) continue;
          const double v = static_cast<double>(da[k]) +
                           kF * (static_cast<double>(db[k]) - static_cast<double>(dc[k]));
          trial[k] = static_cast<std::uint64_t>(
              std::clamp(std::round(v), 0.0, static_cast<double>(radix[k] - 1)));
        }
        std::uint64_t idx = x.index_of(trial);
        bool fresh = false;
        auto v = x.eval(idx, &fresh);
        if (!fresh) {
          ++stale;
          auto r = x.random_unvisited();
          if (!r) return x.finish();
          idx = *r;
          v = x.eval(idx, &fresh);
          if (!fresh) continue;
        }
        stale = 0;
        if (v && *v <= pop[t].value) pop[t] = {idx, *v};
      }
    }
    return x.finish();
  }

 private:
  int population_;
};

}  // namespace

std::unique_ptr<SearchStrategy> make_differential_evolution_search(int population) {
  return std::make_unique<DifferentialEvolution>(population);
}

}  // namespace tune
