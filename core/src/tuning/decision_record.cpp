#include "decision_record.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "cache/row_rules.hpp"
#include "stats.hpp"
#include "tune/version.hpp"

namespace tune::detail {

std::optional<DecisionRecord> record_decision(const TuningReport& report, const std::string& winner,
                                              const std::vector<std::size_t>& ranked,
                                              const std::optional<DecisionRecord>& previous,
                                              const std::string& previous_winner) {
  const auto& results = report.results;
  const bool timed_now = std::any_of(results.begin(), results.end(), [](const ConfigResult& r) {
    return !r.from_store && r.stats.count > 0;
  });
  auto is_winner = [&](std::size_t i) { return results[i].config.to_string() == winner; };
  auto w = std::find_if(ranked.begin(), ranked.end(), is_winner);
  if (!timed_now || w == ranked.end()) return std::nullopt;
  DecisionRecord d;
  for (std::size_t i : ranked) {
    const ConfigResult& r = results[i];
    if (is_winner(i) || !r.status.ok()) continue;
    const SampleStats& best = results[*w].stats;
    d.runner_up = r.config.to_string();
    d.margin = r.stats.median / best.median - 1;
    d.confidence = probability_faster(best, r.stats);
    break;
  }
  d.timing = std::string(to_string(report.timing_cache));
  d.sustained_turns = report.showdown.sustained_turns;
  d.library_version = std::string(kVersion);
  d.unix_time = cache::now_unix();
  if (previous) {
    // Saturated: a count at its limit stays there (flips stay below tunings).
    constexpr std::uint32_t kMax = std::numeric_limits<std::uint32_t>::max();
    d.tunings = previous->tunings == kMax ? kMax : previous->tunings + 1;
    d.flips = previous->flips + (previous_winner != winner && previous->flips + 1 < d.tunings);
  }
  return d;
}

std::optional<std::pair<std::string, DecisionRecord>> last_decision(
    const std::map<std::string, StoredResult>& stored) {
  std::optional<std::pair<std::string, DecisionRecord>> last;
  for (const auto& [config, row] : stored) {
    if (!row.decision) continue;
    // Two records can only come from processes deciding at once: the later one is the last.
    if (!last || row.decision->unix_time > last->second.unix_time)
      last.emplace(config, *row.decision);
  }
  return last;
}

bool attach_decision(const DecisionRecord& record, const std::string& winner,
                     const std::map<std::string, StoredResult>& stored,
                     std::vector<StoredResult>& rows) {
  auto row_for = [&](const std::string& config) -> StoredResult* {
    for (StoredResult& r : rows)
      if (r.config == config) return &r;
    auto it = stored.find(config);
    // A bundle's row (origin set) stays the bundle's: never copied into the user's store.
    if (it == stored.end() || !it->second.origin.empty()) return nullptr;
    return &rows.emplace_back(it->second);
  };
  // A winner whose row cannot take the record leaves every record where it is.
  const bool in_rows = std::any_of(rows.begin(), rows.end(),
                                   [&](const StoredResult& r) { return r.config == winner; });
  auto it = stored.find(winner);
  if (!in_rows && (it == stored.end() || !it->second.origin.empty())) return false;
  // Clear every other record first (rows.emplace_back may move what row_for returned).
  for (const auto& [config, row] : stored) {
    if (config == winner || !row.decision) continue;
    if (StoredResult* r = row_for(config)) r->decision.reset();
  }
  for (StoredResult& r : rows)
    if (r.config != winner) r.decision.reset();
  row_for(winner)->decision = record;
  return true;
}

void keep_decisions(const std::map<std::string, StoredResult>& stored,
                    std::vector<StoredResult>& rows) {
  for (StoredResult& r : rows) {
    if (r.decision) continue;
    auto it = stored.find(r.config);
    if (it != stored.end()) r.decision = it->second.decision;
  }
}

}  // namespace tune::detail
