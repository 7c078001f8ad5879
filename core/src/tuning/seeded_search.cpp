// See seeded_search.hpp.
#include "seeded_search.hpp"

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tune::detail {
namespace {

class SeededSearch final : public SearchStrategy {
 public:
  SeededSearch(std::shared_ptr<const SearchStrategy> inner, std::vector<std::uint64_t> seeds)
      : inner_(std::move(inner)), seeds_(std::move(seeds)) {}

  std::string_view name() const noexcept override { return inner_->name(); }

  Result<SearchResult> search(const ConfigSpace& space, const DeviceInfo& dev,
                              const Objective& objective, const SearchBudget& budget,
                              std::uint64_t seed) const override {
    SearchResult out;
    out.best_value = std::numeric_limits<double>::infinity();
    std::map<std::string, double> seen;  // Config::to_string() -> value
    auto record = [&](std::uint64_t index, const Config& c, double v) {
      seen.emplace(c.to_string(), v);
      out.history.emplace_back(index, v);
      ++out.evaluations;
      if (!std::isnan(v) && v < out.best_value) {
        out.best_value = v;
        out.best = c;
      }
    };
    const std::uint64_t cap = budget.max_evaluations;
    for (std::uint64_t index : seeds_) {
      if (cap != 0 && out.evaluations >= cap) return out;
      if (index >= space.raw_size()) continue;
      const Config c = space.at(index);
      if (seen.count(c.to_string()) != 0 || !space.accepts(c, dev)) continue;
      record(index, c, objective(c));
    }
    if (cap != 0 && out.evaluations >= cap) return out;
    // The inner strategy counts a seed it proposes again against its own budget, though it
    // costs nothing: it is given the whole budget, and the caller's own limit stops the
    // search at `cap` evaluations (the Autotuner enforces it whatever a strategy does).
    const SearchBudget& rest = budget;
    // The inner strategy sees every point it proposes as new: a seed proposed again is
    // answered from its value, without a second evaluation (nor a second history entry).
    std::uint64_t fresh = 0;
    Objective remembered = [&](const Config& c) {
      if (auto it = seen.find(c.to_string()); it != seen.end()) return it->second;
      ++fresh;
      return objective(c);
    };
    auto inner = inner_->search(space, dev, remembered, rest, seed);
    if (!inner.ok()) return inner.status();
    const std::size_t seeded = out.history.size();
    for (const auto& [index, value] : inner->history) {
      const Config c = space.at(index);
      if (seen.count(c.to_string()) != 0) continue;
      out.history.emplace_back(index, value);
    }
    if (!std::isnan(inner->best_value) && inner->best_value < out.best_value) {
      out.best_value = inner->best_value;
      out.best = inner->best;
    }
    out.evaluations = seeded + fresh;
    out.accepted_points = inner->accepted_points;
    return out;
  }

 private:
  std::shared_ptr<const SearchStrategy> inner_;
  std::vector<std::uint64_t> seeds_;
};

}  // namespace

std::shared_ptr<const SearchStrategy> seeded_search(std::shared_ptr<const SearchStrategy> inner,
                                                    std::vector<std::uint64_t> seeds) {
  if (seeds.empty()) return inner;
  return std::make_shared<const SeededSearch>(std::move(inner), std::move(seeds));
}

}  // namespace tune::detail
