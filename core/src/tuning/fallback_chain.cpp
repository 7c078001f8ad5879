// The device-family fallback chain. See fallback_chain.hpp and tune/fallback.hpp.
#include "fallback_chain.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "cache/device_family.hpp"
#include "tune/environment.hpp"
#include "tune/log.hpp"

namespace tune {

std::string_view to_string(FallbackLevel level) noexcept {
  switch (level) {
    case FallbackLevel::none:
      return "none";
    case FallbackLevel::same_device:
      return "same device";
    case FallbackLevel::same_architecture:
      return "same architecture";
    case FallbackLevel::same_vendor:
      return "same vendor";
    case FallbackLevel::nearest_key:
      return "nearest key";
    case FallbackLevel::default_config:
      return "default config";
  }
  return "none";
}

std::string_view to_string(FallbackPolicy policy) noexcept {
  switch (policy) {
    case FallbackPolicy::tune:
      return "tune";
    case FallbackPolicy::keep:
      return "keep";
    case FallbackPolicy::background:
      return "background";
  }
  return "tune";
}

FallbackPolicy fallback_policy_from_env() {
  const std::string v = env_text("TUNE_FALLBACK");
  for (FallbackPolicy p : {FallbackPolicy::tune, FallbackPolicy::keep, FallbackPolicy::background})
    if (v == to_string(p)) return p;
  if (!v.empty())
    log_warning("TUNE_FALLBACK='" + v + "' is not one of tune, keep, background; using tune");
  return FallbackPolicy::tune;
}

}  // namespace tune

namespace tune::detail {
namespace {

std::optional<FallbackLevel> level_of(cache::FamilyLevel f) {
  switch (f) {
    case cache::FamilyLevel::exact:
      return FallbackLevel::same_device;
    case cache::FamilyLevel::same_architecture:
      return FallbackLevel::same_architecture;
    case cache::FamilyLevel::same_vendor:
      return FallbackLevel::same_vendor;
    case cache::FamilyLevel::other:
      break;
  }
  return std::nullopt;
}

// `c` compiled, launched and checked here as Autotuner::measure does it; its result (tagged
// with `level` and `origin`) goes into `report`. The selection when it passed, else why not.
Result<Selection> try_here(const SessionContext& ctx, Device& dev, ArgList args,
                           const KeyForms& forms, const KernelSource& src, const Config& c,
                           FallbackLevel level, const std::string& origin, TuningReport& report) {
  TuningReport scratch;
  Result<std::vector<ConfigResult>> measured =
      measure_configs(ctx, dev, args, forms, {&c, 1}, scratch);
  report.times.compile += scratch.times.compile;
  report.times.verify += scratch.times.verify;
  report.times.benchmark += scratch.times.benchmark;
  if (!measured.ok()) return measured.status();
  ConfigResult r = measured->front();
  r.fallback = level;
  r.origin = origin;
  report.results.push_back(r);
  if (!r.status.ok()) return r.status;
  std::shared_ptr<Variant> v = ctx.variants.compile(dev, src, {c}).front().get();
  if (!v->status.ok()) return v->status;
  return Selection{c, std::move(v), /*launched_on_args=*/true};
}

}  // namespace

}  // namespace tune::detail

namespace tune {

std::vector<FallbackCandidate> fallback_candidates(TuningStore* store, const StoreKey& key) {
  const auto want = cache::parse_fingerprint(key.device);
  if (store == nullptr || !want) return {};
  CacheFilter filter;
  filter.kernel = key.kernel;
  filter.key = key.key;
  std::vector<FallbackCandidate> picks;
  std::map<std::pair<std::string, std::string>, bool> seen;  // (device, toolchain)
  for (const CacheRow& row : store->find_rows(filter)) {
    const StoreKey& k = row.key;
    if (k.source_hash != key.source_hash || k.key != key.key) continue;
    if (k.device == key.device && k.toolchain == key.toolchain) continue;  // not a fallback
    // find_rows gives each key's rows winner first: the first row of a group decides.
    if (!seen.emplace(std::pair{k.device, k.toolchain}, true).second) continue;
    const auto have = cache::parse_fingerprint(k.device);
    const auto level = have ? detail::level_of(cache::family_level(*want, *have)) : std::nullopt;
    if (!level || row.result.status != StatusCode::ok) continue;
    picks.push_back({row.result.config, *level, k.device, row.result.origin, row.result.unix_time});
  }
  std::stable_sort(picks.begin(), picks.end(),
                   [](const FallbackCandidate& a, const FallbackCandidate& b) {
                     if (a.level != b.level) return a.level < b.level;
                     return a.unix_time > b.unix_time;
                   });
  return picks;
}

}  // namespace tune

namespace tune::detail {

Result<Selection> serve_from_chain(const SessionContext& ctx, const CallKeys& keys, Device& dev,
                                   ArgList args, const KeyForms& forms,
                                   const std::optional<Selection>& nearest, bool isolated,
                                   TuningReport& report) {
  report.kernel = ctx.def.name;
  report.key = forms.text;
  report.device = dev.info().fingerprint();
  report.source = ResultSource::fallback;
  const KernelSource* src = ctx.def.source_for(dev.language());
  std::string why;
  auto served = [&](Result<Selection> s, FallbackLevel level, const std::string& from) {
    if (s.ok()) {
      report.fallback = level;
      report.fallback_device = from;
      report.winner = s->config;
      return true;
    }
    why += "\n  " + std::string(to_string(level)) + (from.empty() ? "" : " (" + from + ")") + ": " +
           s.status().to_string();
    return false;
  };
  if (src != nullptr && !isolated) {
    for (const FallbackCandidate& p : fallback_candidates(ctx.store, forms.store_key)) {
      Result<Config> c = Config::parse(p.config);
      Status point = c.ok() ? keys.check_point_of_key(dev, forms, *c) : c.status();
      Result<Selection> s =
          point.ok() ? try_here(ctx, dev, args, forms, *src, *c, p.level, p.origin, report)
                     : Result<Selection>(point);
      if (served(s, p.level, p.device)) return s;
    }
  }
  if (nearest) {
    ConfigResult r;
    r.config = nearest->config;
    r.fallback = FallbackLevel::nearest_key;
    r.verified = true;  // it won a tuning on this device, its check included
    report.results.push_back(r);
    if (served(*nearest, FallbackLevel::nearest_key, report.device)) return *nearest;
  }
  if (src != nullptr && !isolated) {
    Result<Selection> first = first_candidate(ctx, dev, args, forms);
    Result<Selection> s = first.ok() ? try_here(ctx, dev, args, forms, *src, first->config,
                                                FallbackLevel::default_config, "", report)
                                     : first;
    if (served(s, FallbackLevel::default_config, report.device)) return s;
  }
  if (src == nullptr) why += "\n  no " + std::string(to_string(dev.language())) + " source";
  if (isolated) why += "\n  with isolation on, only a key tuned on this device may stand in";
  report.status = Status(StatusCode::failed_precondition,
                         "kernel " + ctx.def.name + " key {" + forms.text + "} on device " +
                             dev.info().name + " [" + report.device +
                             "] has no decision here and no level of the fallback chain serves "
                             "it (AutotunerOptions::fallback):" +
                             why);
  return report.status;
}

}  // namespace tune::detail
