// See effort_plan.hpp.
#include "effort_plan.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "candidates.hpp"
#include "search_session.hpp"
#include "seeded_search.hpp"
#include "user_code.hpp"

namespace tune::detail {
namespace {

// How many evaluations `effort` allows on `candidates` points; 0: time every one.
std::uint64_t search_budget(Effort effort, std::uint64_t candidates) {
  switch (effort) {
    case Effort::quick:
      return candidates <= kQuickBudget ? 0 : kQuickBudget;
    case Effort::standard:
      return candidates <= kStandardBudget ? 0 : kStandardBudget;
    case Effort::thorough:
      return candidates <= kThoroughExhaustive ? 0 : kThoroughBudget;
  }
  return kStandardBudget;
}

// `c` without the parameters `heuristics` sets: the point of the space it was made from.
Config without_heuristics(const Config& c, const Config& heuristics) {
  Config out;
  for (const auto& [name, value] : c.params())
    if (!heuristics.has(name)) out.set(name, value);
  out.launch() = c.launch();
  return out;
}

// The space index of each of `wanted` (points of the space, as Config::to_string) among the
// accepted points, in one pass; nullopt for those not found. An empty `wanted` finds the first
// accepted point.
Result<std::vector<std::optional<std::uint64_t>>> accepted_indices(
    const KernelDef& def, const DeviceInfo& info, const std::vector<std::string>& wanted) {
  std::vector<std::optional<std::uint64_t>> found(std::max<std::size_t>(1, wanted.size()));
  std::size_t left = wanted.size();
  try {
    def.space.for_each(info, [&](std::uint64_t i, const Config& point) {
      if (wanted.empty()) {
        found[0] = i;
        return false;
      }
      const std::string text = point.to_string();
      for (std::size_t w = 0; w < wanted.size(); ++w)
        if (!found[w] && wanted[w] == text) {
          found[w] = i;
          --left;
        }
      return left > 0;
    });
  } catch (...) {
    return current_exception_status("the config space", nullptr);
  }
  return found;
}

// Appends to `seeds` the priors' points found in the space (`found` from index `from` on, in
// order), those not already there, at most `room` of them: the cap counts points that will be
// evaluated, not priors this device rejects or repeats.
void add_priors(const std::vector<std::optional<std::uint64_t>>& found, std::size_t from,
                std::uint64_t room, std::vector<std::uint64_t>& seeds) {
  std::uint64_t taken = 0;
  for (std::size_t k = from; k < found.size() && taken < room; ++k) {
    if (!found[k] || std::find(seeds.begin(), seeds.end(), *found[k]) != seeds.end()) continue;
    seeds.push_back(*found[k]);
    ++taken;
  }
}

}  // namespace

std::shared_ptr<const SearchStrategy> guided_search() { return make_search("model"); }

Result<std::optional<SearchOptions>> plan_search(const KernelDef& def, Effort effort,
                                                 const DeviceInfo& info, ArgList args,
                                                 const Config& heuristics,
                                                 const std::function<std::vector<Config>()>& priors,
                                                 std::optional<Candidates>* made) {
  SearchOptions plan = def.search;
  std::vector<std::string> wanted;  // the first candidate, then the priors
  std::uint64_t budget = 0;
  if (def.space.raw_size() <= kCountedPoints) {
    TUNE_ASSIGN_OR_RETURN(Candidates cands, make_candidates(def, info, args, heuristics));
    wanted.push_back(without_heuristics(cands.configs.front(), heuristics).to_string());
    if (!plan.strategy) budget = search_budget(effort, cands.configs.size());
    if (made != nullptr) *made = cands;
    if (!plan.strategy && budget == 0) return std::optional<SearchOptions>();
  } else if (!plan.strategy) {
    budget = effort == Effort::quick      ? kQuickBudget
             : effort == Effort::standard ? kStandardBudget
                                          : kThoroughBudget;
  }
  if (!plan.strategy) {
    plan.strategy = guided_search();
    plan.budget.max_evaluations = budget;
  }
  std::vector<std::uint64_t> seeds;
  if (wanted.empty()) {  // an uncounted space: its first accepted point stands first
    TUNE_ASSIGN_OR_RETURN(auto first, accepted_indices(def, info, {}));
    if (first[0]) seeds.push_back(*first[0]);
  }
  // Finding the priors walks the space: only where it was counted.
  const std::size_t firsts = wanted.size();  // the first candidate, when counted
  if (priors && def.space.raw_size() <= kCountedPoints)
    for (const Config& c : priors())
      wanted.push_back(without_heuristics(c, heuristics).to_string());
  if (!wanted.empty()) {
    TUNE_ASSIGN_OR_RETURN(auto found, accepted_indices(def, info, wanted));
    for (std::size_t k = 0; k < firsts; ++k)
      if (found[k]) seeds.push_back(*found[k]);
    const std::uint64_t b = plan.budget.max_evaluations;
    add_priors(found, firsts, b > 0 ? b / kPriorShareOf : std::numeric_limits<std::uint64_t>::max(),
               seeds);
  }
  plan.strategy = seeded_search(plan.strategy, std::move(seeds));
  return std::optional<SearchOptions>(std::move(plan));
}

Result<Selection> search_with_plan(const SessionContext& ctx, Device& dev, ArgList args,
                                   const KeyForms& forms, const KernelSource& src,
                                   SearchOptions plan, TuningReport& report) {
  KernelDef def = ctx.def;  // with the planned search; `src` stays one of ctx.def's sources
  def.search = std::move(plan);
  const SessionContext searching{
      def,       ctx.opts,     ctx.timing,   ctx.disabled,    ctx.strict,
      ctx.store, ctx.variants, ctx.zero_idx, ctx.restore_idx, ctx.gpu_lock_dir};
  report.strategy = std::string(def.search.strategy->name());
  return search_one_key(searching, dev, args, forms, src, report);
}

}  // namespace tune::detail
