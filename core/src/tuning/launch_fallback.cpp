#include "launch_fallback.hpp"

#include "winner_rule.hpp"

namespace tune::detail {

bool may_fall_back(const Status& launch) noexcept {
  switch (launch.code()) {
    case StatusCode::launch_failed:
    case StatusCode::out_of_resources:
    case StatusCode::invalid_argument:
      return true;
    default:
      return false;
  }
}

std::vector<Config> fallback_order(const TuningReport& report, const Config& failed,
                                   double tie_tolerance) {
  std::vector<Config> out;
  for (std::size_t i : rank_by_winner_rule(report.results, tie_tolerance))
    if (!(report.results[i].config == failed)) out.push_back(report.results[i].config);
  return out;
}

std::string fallback_event(const Config& failed, const std::string& member, const Status& why,
                           const Config& used) {
  return "{" + failed.to_string() + "} failed at " + member + " (" + why.to_string() + "); {" +
         used.to_string() + "} launched instead";
}

}  // namespace tune::detail
