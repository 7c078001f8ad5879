// `tune-lab stability --quality`'s judge. See stability_judge.hpp.
#include "stability_judge.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "stats.hpp"
#include "sustained_turn.hpp"

namespace tune::cli {

std::vector<std::string> judge_contenders(const std::map<std::string, int>& winners,
                                          const std::map<std::string, double>& reference, int top) {
  std::vector<std::pair<double, std::string>> by_time;
  for (const auto& [config, ns] : reference) by_time.emplace_back(ns, config);
  std::sort(by_time.begin(), by_time.end());
  std::vector<std::string> out;
  for (std::size_t i = 0; i < by_time.size(); ++i) {
    const std::string& config = by_time[i].second;
    if (i < static_cast<std::size_t>(std::max(top, 0)) || winners.count(config) > 0)
      out.push_back(config);
  }
  for (const auto& [config, runs] : winners)
    if (reference.count(config) == 0) out.push_back(config);
  return out;
}

double HeadToHead::ratio(const std::string& pick) const {
  const auto it = ns.find(pick);
  if (it == ns.end()) return std::numeric_limits<double>::quiet_NaN();
  return it->second / fastest(ns);
}

double HeadToHead::ratio_lower(const std::string& pick, double confidence) const {
  const auto it = ns.find(pick);
  if (it == ns.end()) return std::numeric_limits<double>::quiet_NaN();
  const auto best = std::min_element(
      ns.begin(), ns.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  if (best->first == pick) return 1.0;
  const std::vector<double> mine = pair_medians({rounds.at(pick)}).front();
  const std::vector<double> theirs = pair_medians({rounds.at(best->first)}).front();
  std::vector<double> r;
  for (std::size_t i = 0; i < std::min(mine.size(), theirs.size()); ++i)
    if (theirs[i] > 0) r.push_back(mine[i] / theirs[i]);
  if (r.size() < 2) return std::numeric_limits<double>::quiet_NaN();
  double mean = 0, squares = 0;
  for (double x : r) mean += x / static_cast<double>(r.size());
  for (double x : r) squares += (x - mean) * (x - mean);
  const double se =
      std::sqrt(squares / static_cast<double>(r.size() - 1) / static_cast<double>(r.size()));
  return mean - student_t_quantile(confidence, r.size() - 1) * se;
}

std::map<std::string, std::vector<double>> pair_means(
    const std::map<std::string, std::vector<double>>& rounds) {
  std::map<std::string, std::vector<double>> out;
  for (const auto& [config, ns] : rounds) {
    std::vector<double> pairs = pair_medians({ns}).front();
    const bool failed =
        std::any_of(pairs.begin(), pairs.end(), [](double x) { return std::isnan(x); });
    if (!failed && !pairs.empty()) out[config] = std::move(pairs);
  }
  return out;
}

Result<HeadToHead> head_to_head(Device& dev, const Candidates& c,
                                const std::vector<std::string>& contenders, double turn_ms,
                                int pairs, std::uint64_t seed) {
  std::vector<std::size_t> index;
  for (const std::string& config : contenders) index.push_back(c.find(config));
  TUNE_ASSIGN_OR_RETURN(auto turns, alternating_turns(dev, c, index, 2 * pairs, turn_ms, seed));
  HeadToHead out;
  for (std::size_t k = 0; k < contenders.size(); ++k)
    out.rounds[contenders[k]] = std::move(turns[k]);
  const auto pairs_of = pair_means(out.rounds);
  out.ns = pass_means(pairs_of);
  out.pair_spread = pass_spread(pairs_of);
  return out;
}

}  // namespace tune::cli
