#include "candidates.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "cache/cache_validation.hpp"
#include "user_code.hpp"

namespace tune::detail {
namespace {

constexpr std::size_t kMaxCandidates = std::size_t{1} << 20;

// Walks the first `raw_limit` points of the space, in order, and calls `visit(c)` for each
// that every constraint accepts, heuristic values set, until it returns false. `rejected`
// (may be null) counts the rejections by constraint. A throw of the space or a constraint is
// its status; so is an error `visit` returns (Result<bool>: true to go on).
template <class Visit>
Status for_each_accepted(const KernelDef& def, const DeviceInfo& info, const Config& heuristics,
                         std::uint64_t raw_limit, std::map<std::string, std::size_t>* rejected,
                         Visit&& visit) {
  try {
    for (std::uint64_t i = 0; i < raw_limit; ++i) {
      Config c = def.space.at(i);
      std::string by;
      if (!def.space.accepts(c, info, &by)) {
        if (rejected != nullptr) ++(*rejected)[by];
        continue;
      }
      for (const auto& [name, value] : heuristics.params()) c.set(name, value);
      Result<bool> more = visit(c);
      if (!more.ok()) return more.status();
      if (!*more) return {};
    }
  } catch (...) {
    return current_exception_status("the config space", nullptr);
  }
  return {};
}

// Points of the space that every constraint accepts, with heuristic values set, deduplicated.
Result<std::vector<Config>> accepted_points(const KernelDef& def, const DeviceInfo& info,
                                            const Config& heuristics) {
  std::map<std::string, std::size_t> rejected;
  std::vector<Config> out;
  std::set<std::string> seen;
  Status walked = for_each_accepted(
      def, info, heuristics, def.space.raw_size(), &rejected, [&](Config& c) -> Result<bool> {
        if (!heuristics.params().empty() && !seen.insert(c.to_string()).second) return true;
        out.push_back(std::move(c));
        if (out.size() > kMaxCandidates) {
          return Status(StatusCode::invalid_argument,
                        "more than 2^20 configurations pass the constraints; prune with a perf "
                        "model or a smaller space");
        }
        return true;
      });
  TUNE_RETURN_IF_ERROR(walked);
  if (out.empty()) {
    std::string why;
    for (const auto& [name, n] : rejected)
      why += " '" + name + "' rejected " + std::to_string(n) + ";";
    return Status(StatusCode::invalid_argument,
                  "no configuration passes the constraints on " + info.name + ":" + why);
  }
  return out;
}

Status apply_early_prune(const KernelDef& def, ArgList args, const Config& heuristics,
                         std::vector<Config>& cands) {
  std::vector<Config> kept;
  TUNE_RETURN_IF_ERROR(
      call_user("early_prune", nullptr, &kept, [&] { return def.early_prune(cands, args); }));
  if (kept.empty())
    return Status(StatusCode::invalid_argument,
                  "early_prune returned no configuration (it must keep at least one)");
  for (const Config& c : kept) {
    Status st = check_point(c, def.space, &heuristics);
    if (!st.ok())
      return Status(StatusCode::invalid_argument, "early_prune returned config {" + c.to_string() +
                                                      "}, which is not a point of the "
                                                      "space: " +
                                                      st.message());
  }
  cands = std::move(kept);
  return {};
}

Status apply_perf_model(const KernelDef& def, const DeviceInfo& info, ArgList args,
                        std::vector<Config>& cands) {
  std::vector<std::pair<double, std::size_t>> est;
  for (std::size_t i = 0; i < cands.size(); ++i) {
    double e = 0;
    TUNE_RETURN_IF_ERROR(call_user("perf_model", &cands[i], &e,
                                   [&] { return def.perf_model.estimate(cands[i], args, info); }));
    if (std::isnan(e)) return callback_failure("perf_model", &cands[i], "returned NaN");
    est.emplace_back(e, i);
  }
  std::stable_sort(est.begin(), est.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::size_t keep = cands.size();
  if (def.perf_model.top_k > 0)
    keep = std::min(keep, static_cast<std::size_t>(def.perf_model.top_k));
  if (def.perf_model.top_fraction > 0) {
    auto frac = static_cast<std::size_t>(
        std::ceil(def.perf_model.top_fraction * static_cast<double>(cands.size())));
    keep = std::min(keep, std::max<std::size_t>(1, frac));
  }
  std::vector<Config> kept;
  for (std::size_t i = 0; i < keep; ++i) kept.push_back(cands[est[i].second]);
  cands = std::move(kept);
  return {};
}

}  // namespace

Result<bool> empty_problem(const KernelDef& def, const DeviceInfo& info, ArgList args,
                           const Config& heuristics) {
  std::uint64_t seen = 0;
  bool launches = false;  // a configuration met has a grid with work in it
  Status walked = Status();
  try {
    const std::uint64_t raw = std::min<std::uint64_t>(def.space.raw_size(), kEmptyScan * 256);
    walked = for_each_accepted(def, info, heuristics, raw, nullptr, [&](Config& c) -> Result<bool> {
      ++seen;
      try {
        launches = def.dims(c, args).grid.product() != 0;
      } catch (...) {
        return current_exception_status("dims", &c);
      }
      return !launches && seen < kEmptyScan;
    });
  } catch (...) {
    return current_exception_status("the config space", nullptr);
  }
  TUNE_RETURN_IF_ERROR(walked);
  return !launches && seen > 0;
}

Result<Config> heuristic_values(const KernelDef& def, const DeviceInfo& info, ArgList args) {
  Config c;
  for (const auto& h : def.heuristics) {
    Value v;
    TUNE_RETURN_IF_ERROR(
        call_user("heuristic '" + h.param + "'", nullptr, &v, [&] { return h.fn(args, info); }));
    c.set(h.param, v);
  }
  return c;
}

Result<Candidates> make_candidates(const KernelDef& def, const DeviceInfo& info, ArgList args,
                                   const Config& heuristics) {
  auto accepted = accepted_points(def, info, heuristics);
  if (!accepted.ok()) return accepted.status();
  Candidates out;
  out.configs = std::move(*accepted);
  const std::size_t initial = out.configs.size();
  if (def.early_prune) TUNE_RETURN_IF_ERROR(apply_early_prune(def, args, heuristics, out.configs));
  if (def.perf_model && out.configs.size() > 1)
    TUNE_RETURN_IF_ERROR(apply_perf_model(def, info, args, out.configs));
  out.pruned = initial - std::min(initial, out.configs.size());
  return out;
}

}  // namespace tune::detail
