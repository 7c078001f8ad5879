// See seeded_search.hpp.
#include "seeded_search.hpp"

#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "search_explorer.hpp"

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
    return search_batches(space, dev, one_by_one(objective), budget, seed);
  }

  // The seeds in one batch (their compiles overlap their timing), then the inner strategy's
  // batches.
  Result<SearchResult> search_batches(const ConfigSpace& space, const DeviceInfo& dev,
                                      const BatchObjective& objective, const SearchBudget& budget,
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
    std::vector<std::uint64_t> first;
    std::vector<Config> batch;
    std::set<std::string> picked;
    for (std::uint64_t index : seeds_) {
      if (cap != 0 && batch.size() >= cap) break;
      if (index >= space.raw_size()) continue;
      Config c = space.at(index);
      if (!space.accepts(c, dev) || !picked.insert(c.to_string()).second) continue;
      first.push_back(index);
      batch.push_back(std::move(c));
    }
    if (!batch.empty()) {
      const std::vector<double> values = ask_batch(objective, batch);
      for (std::size_t k = 0; k < batch.size(); ++k) record(first[k], batch[k], values[k]);
    }
    if (cap != 0 && out.evaluations >= cap) return out;
    // The inner strategy counts a seed it proposes again against its own budget, though it
    // costs nothing: it is given the whole budget, and the caller's own limit stops the
    // search at `cap` evaluations (the Autotuner enforces it whatever a strategy does).
    // The inner strategy sees every point it proposes as new: a seed proposed again is
    // answered from its value, without a second evaluation (nor a second history entry).
    std::uint64_t fresh = 0;
    BatchObjective remembered = [&](const std::vector<Config>& proposed) {
      std::vector<double> values(proposed.size());
      std::vector<std::size_t> ask;
      std::vector<Config> asked;
      for (std::size_t k = 0; k < proposed.size(); ++k) {
        if (auto it = seen.find(proposed[k].to_string()); it != seen.end()) {
          values[k] = it->second;
        } else {
          ask.push_back(k);
          asked.push_back(proposed[k]);
        }
      }
      if (!asked.empty()) {
        const std::vector<double> got = ask_batch(objective, asked);
        for (std::size_t j = 0; j < ask.size(); ++j) values[ask[j]] = got[j];
        fresh += asked.size();
      }
      return values;
    };
    auto inner = inner_->search_batches(space, dev, remembered, budget, seed);
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
