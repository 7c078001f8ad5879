// Which search a key's tuning runs: KernelDef::search when it names a strategy, else the one
// AutotunerOptions::effort chooses from the number of candidates (docs/search.md gives the
// rules):
//
//   quick     at most kQuickBudget evaluations: every candidate when there are no more, else
//             the model-guided search with that budget;
//   standard  every candidate up to kStandardBudget, else the model-guided search with that
//             budget;
//   thorough  every candidate up to kThoroughExhaustive, else the model-guided search with
//             kThoroughBudget evaluations.
//
// Every search starts from the configuration the kernel runs untuned (the first candidate,
// candidates.hpp: what TUNE_DISABLE launches), evaluated first, then from what the store
// knows of the kernel's other keys and other devices (warm_start.hpp; at most a quarter of
// the budget), before the strategy proposes anything (seeded_search.hpp). Internal to the
// core.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "candidates.hpp"
#include "session.hpp"
#include "tune/autotuner.hpp"

namespace tune::detail {

inline constexpr std::uint64_t kQuickBudget = 30;
// The target for the model-guided search is within 2% of the optimum in at most 250
// evaluations at the 90th percentile: the standard budget is that, and a space with no more
// candidates than the budget is timed whole, which costs no more.
inline constexpr std::uint64_t kStandardBudget = 250;
inline constexpr std::uint64_t kThoroughExhaustive = 4096;
inline constexpr std::uint64_t kThoroughBudget = 1000;
// Spaces with more points than this before constraints are not counted (the constraints would
// run on each): they take the search, and their first accepted point seeds it.
inline constexpr std::uint64_t kCountedPoints = std::uint64_t{1} << 20;
// The store's points (warm_start.hpp) take at most 1 / kPriorShareOf of a search's budget: 7 of
// the quick effort's 30 (the untuned configuration comes on top).
inline constexpr std::uint64_t kPriorShareOf = 4;

// The model-guided search ("model"), what an effort searches with.
std::shared_ptr<const SearchStrategy> guided_search();

// The search to run for this call: nullopt when every candidate is timed (KeySession), else
// the strategy, budget and seed, the strategy seeded with the first candidate and then with
// `priors()` (asked only when there is a search: warm_start.hpp's points; those that are not
// accepted points of the space, and repeats, are dropped, then at most max_evaluations /
// kPriorShareOf are kept, or all where the budget sets no count: a kernel's own strategy
// with a time budget only). Errors are the candidates' (constraints,
// early_prune, perf model), as the tuning would report them. The candidates it made (a counted
// space's) go to `*made` when that is not null, so that timing them all does not make them
// again (early_prune and the perf model are user code: called once per tuning).
Result<std::optional<SearchOptions>> plan_search(
    const KernelDef& def, Effort effort, const DeviceInfo& info, ArgList args,
    const Config& heuristics, const std::function<std::vector<Config>()>& priors = {},
    std::optional<Candidates>* made = nullptr);

// Tunes one key by `plan` (plan_search's), as search_one_key does for KernelDef::search;
// report.strategy names the strategy.
Result<Selection> search_with_plan(const SessionContext& ctx, Device& dev, ArgList args,
                                   const KeyForms& forms, const KernelSource& src,
                                   SearchOptions plan, TuningReport& report);

}  // namespace tune::detail
