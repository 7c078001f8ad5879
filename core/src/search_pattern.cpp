// Pattern (compass) search over value indices: poll every dimension moved by +-step from the
// best point of the current run, move to the best improving point, halve the steps when none
// improves; at unit steps without improvement, restart from a random point (alternating with
// a kick of a few neighbouring steps from the best point found), as iterated local search does.
#include <algorithm>
#include <cmath>

#include "search_explorer.hpp"

namespace tune {
namespace {

using detail::Explorer;

class PatternSearch final : public detail::ExplorerStrategy {
 public:
  std::string_view name() const noexcept override { return "pattern"; }

 protected:
  Result<SearchResult> explore(Explorer& x, std::uint64_t /*seed*/) const override {
    const auto& radix = x.radix();
    std::optional<std::uint64_t> cur = x.random_unvisited();
    int level = 2, restarts = 0, idle_polls = 0;
    while (cur && !x.exhausted() && idle_polls < detail::kStaleLimit) {
      auto fc = x.eval(*cur);
      if (!fc) break;
      bool fresh_any = false;
      std::uint64_t best = *cur;
      double fbest = *fc;
      const auto digits = x.digits(*cur);
      std::vector<std::size_t> dims(radix.size());
      for (std::size_t k = 0; k < dims.size(); ++k) dims[k] = k;
      std::shuffle(dims.begin(), dims.end(), x.rng());
      bool all_unit = true;
      for (std::size_t k : dims) {
        if (radix[k] < 2) continue;
        const std::uint64_t step = std::max<std::uint64_t>(1, radix[k] >> level);
        all_unit = all_unit && step == 1;
        for (int sign : {-1, 1}) {
          auto d = digits;
          if (sign < 0) {
            if (d[k] == 0) continue;
            d[k] = d[k] >= step ? d[k] - step : 0;
          } else {
            if (d[k] + 1 >= radix[k]) continue;
            d[k] = std::min(radix[k] - 1, d[k] + step);
          }
          const std::uint64_t i = x.index_of(d);
          bool fresh = false;
          auto v = x.eval(i, &fresh);
          fresh_any = fresh_any || fresh;
          if (v && *v < fbest) {
            fbest = *v;
            best = i;
          }
        }
      }
      idle_polls = fresh_any ? 0 : idle_polls + 1;
      if (best != *cur) {
        cur = best;
      } else if (!all_unit) {
        ++level;
      } else {
        level = 2;
        cur = restart(x, ++restarts);
      }
    }
    return x.finish();
  }

 private:
  // Odd restarts kick the best point by three neighbouring steps; even ones (and a kick that
  // lands on a seen or rejected point) take a random unvisited point.
  static std::optional<std::uint64_t> restart(Explorer& x, int n) {
    if (n % 2 == 1) {
      std::uint64_t k = x.best_index();
      for (int s = 0; s < 3; ++s) k = x.neighbour(k);
      if (!x.visited(k) && x.eval(k)) return k;
    }
    return x.random_unvisited();
  }
};

}  // namespace

std::unique_ptr<SearchStrategy> make_pattern_search() { return std::make_unique<PatternSearch>(); }

}  // namespace tune
