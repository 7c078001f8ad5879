#include "timing_policy.hpp"

#include <cmath>
#include <utility>

namespace tune {
namespace {

template <class T>
void take(T& field, const std::optional<T>& set) {
  if (set) field = *set;
}

bool finite_at_least(double v, double lo) { return std::isfinite(v) && v >= lo; }

// Where a user sets `field` of the policy: BenchOptions::<field> for the public ones,
// BenchOptions::tolerance for the tolerances it set, else BenchOptions::expert.<field>. Only a
// value a user set can be out of range (the presets are not), so this names the culprit.
std::string field_name(const BenchOptions& o, std::string_view field) {
  constexpr std::string_view kPublic[] = {"warmup_ms", "rep_ms", "warmup_count", "rep_count",
                                          "racing",    "cache",  "timeout_ms"};
  for (std::string_view f : kPublic)
    if (f == field) return "BenchOptions::" + std::string(field);
  if ((field == "race_tolerance" && !o.expert.race_tolerance) ||
      (field == "tie_tolerance" && !o.expert.tie_tolerance))
    return "BenchOptions::tolerance";
  return "BenchOptions::expert." + std::string(field);
}

// Every field of `p` in range; `bad` makes the error for a field and the reason.
template <class Bad>
Status check_policy(const TimingPolicy& p, Bad bad) {
  auto text = [](double v) { return std::to_string(v); };
  const std::pair<const char*, double> non_negative[] = {
      {"warmup_ms", p.warmup_ms},
      {"rep_ms", p.rep_ms},
      {"warmup_next_ms", p.warmup_next_ms},
      {"settle_max_ms", p.settle_max_ms},
      {"settle_tolerance", p.settle_tolerance},
      {"race_tolerance", p.race_tolerance},
      {"tie_tolerance", p.tie_tolerance},
      {"showdown_margin", p.showdown_margin},
      {"showdown_screen_margin", p.showdown_screen_margin},
      {"showdown_sustain_margin", p.showdown_sustain_margin}};
  for (const auto& [field, v] : non_negative)
    if (!finite_at_least(v, 0)) return bad(field, "must be a finite number >= 0, not " + text(v));
  if (!finite_at_least(p.timeout_ms, 0) || p.timeout_ms == 0)
    return bad("timeout_ms", "must be a finite number > 0, not " + text(p.timeout_ms));
  if (!std::isfinite(p.settle_window_ms))
    return bad("settle_window_ms",
               "must be finite (negative: the device's default), not " + text(p.settle_window_ms));
  if (!std::isfinite(p.showdown_sustain_ms))
    return bad("showdown_sustain_ms", "must be finite (negative: the device's default), not " +
                                          text(p.showdown_sustain_ms));
  if (!finite_at_least(p.settle_batch_ms, 0) || p.settle_batch_ms == 0)
    return bad("settle_batch_ms", "must be a finite number > 0, not " + text(p.settle_batch_ms));
  if (!(p.race_confidence > 0 && p.race_confidence < 1))
    return bad("race_confidence", "must be in (0, 1), not " + text(p.race_confidence));
  if (p.race_tolerance >= 1) return bad("race_tolerance", "must be below 1");
  if (p.tie_tolerance >= 1) return bad("tie_tolerance", "must be below 1");
  const std::pair<const char*, int> at_least_one[] = {{"estimate_runs", p.estimate_runs},
                                                      {"min_reps", p.min_reps},
                                                      {"max_reps", p.max_reps},
                                                      {"race_batch", p.race_batch},
                                                      {"race_min_samples", p.race_min_samples}};
  for (const auto& [field, v] : at_least_one)
    if (v < 1) return bad(field, "must be >= 1, not " + std::to_string(v));
  if (p.max_reps < p.min_reps)
    return bad("max_reps", "(" + std::to_string(p.max_reps) + ") is below min_reps (" +
                               std::to_string(p.min_reps) + ")");
  const std::pair<const char*, int> non_negative_counts[] = {
      {"showdown_rounds", p.showdown_rounds},
      {"showdown_retries", p.showdown_retries},
      {"showdown_screen_rounds", p.showdown_screen_rounds}};
  for (const auto& [field, v] : non_negative_counts)
    if (v < 0) return bad(field, "must be >= 0, not " + std::to_string(v));
  if (p.showdown_sustain_pairs < 1)
    return bad("showdown_sustain_pairs",
               "must be >= 1, not " + std::to_string(p.showdown_sustain_pairs));
  if (p.showdown_finalists < 2)
    return bad("showdown_finalists", "must be >= 2, not " + std::to_string(p.showdown_finalists));
  if (p.showdown_sustain_contenders < 2)
    return bad("showdown_sustain_contenders",
               "must be >= 2, not " + std::to_string(p.showdown_sustain_contenders));
  if (p.warmup_count < 0 || p.rep_count < 0)
    return bad(p.rep_count < 0 ? "rep_count" : "warmup_count", "must be >= 0");
  if (p.warmup_count > 0 && p.rep_count == 0)
    return bad("warmup_count", "is set but rep_count is not (fixed counts need both)");
  return {};
}

}  // namespace

TimingPolicy timing_preset(Effort effort) {
  TimingPolicy p;  // standard: the defaults, the figures of bench/RESULTS.md
  switch (effort) {
    case Effort::quick:
      // A fifth of Triton's budgets. Racing gave a 16-configuration fp16 matmul about 13
      // samples each (6 ms of its launches) on the H200 (2026-11-29, 4ff1b17), so a 20 ms cap
      // binds only the near-ties, which the tolerance stops anyway. No showdown (screen and
      // sustained turns included): they are most of a tuning's time on a GPU at its power
      // limit (3.4-3.8 s of 4.1-4.6 s on the H200, 2026-12-03, e80058f), and racing alone
      // picked within 2% of the best in 20 of 20 cases on an H200 at full clock (2026-11-29,
      // 4ff1b17). Clock settling stays: a kernel timed at an idle clock is 3-4x off.
      p.warmup_ms = 5;
      p.rep_ms = 20;
      p.showdown_rounds = 0;
      break;
    case Effort::standard:
      break;
    case Effort::thorough:
      // The first configuration heats the GPU for 1 s: the state in which tunings at the
      // power limit picked 0 of 40 wrong (tune-lab stability --heat-ms 1000, H200,
      // 2026-12-03, e80058f). Four times the repetitions of the configurations racing keeps.
      p.warmup_ms = 1000;
      p.rep_ms = 400;
      p.max_reps = 4000;
      // Sustained turns for every contender short turns could misrank: turns of 1 and 100
      // launches ranked three 8192^3 matmuls up to 5.2% apart (H200, 2026-12-02, cf8c89f), so
      // the margin is twice that, for up to 8 contenders; and up to 5 pairs, since 32 of those
      // 40 tunings ran all 3 of standard's pairs.
      p.showdown_sustain_margin = 0.10;
      p.showdown_sustain_contenders = 8;
      p.showdown_sustain_pairs = 5;
      break;
  }
  return p;
}

TimingPolicy resolve_timing(const BenchOptions& o, Effort effort) {
  TimingPolicy p = timing_preset(effort);
  take(p.warmup_ms, o.warmup_ms);
  take(p.rep_ms, o.rep_ms);
  take(p.warmup_count, o.warmup_count);
  take(p.rep_count, o.rep_count);
  take(p.racing, o.racing);
  take(p.race_tolerance, o.tolerance);
  take(p.tie_tolerance, o.tolerance);
  take(p.cache, o.cache);
  take(p.timeout_ms, o.timeout_ms);
  const TimingExpert& x = o.expert;
  take(p.warmup_next_ms, x.warmup_next_ms);
  take(p.estimate_runs, x.estimate_runs);
  take(p.min_reps, x.min_reps);
  take(p.max_reps, x.max_reps);
  take(p.rotate_max_bytes, x.rotate_max_bytes);
  take(p.settle_window_ms, x.settle_window_ms);
  take(p.settle_max_ms, x.settle_max_ms);
  take(p.settle_batch_ms, x.settle_batch_ms);
  take(p.settle_tolerance, x.settle_tolerance);
  take(p.race_batch, x.race_batch);
  take(p.race_min_samples, x.race_min_samples);
  take(p.race_confidence, x.race_confidence);
  take(p.race_tolerance, x.race_tolerance);
  take(p.tie_tolerance, x.tie_tolerance);
  take(p.showdown_rounds, x.showdown_rounds);
  take(p.showdown_finalists, x.showdown_finalists);
  take(p.showdown_margin, x.showdown_margin);
  take(p.showdown_retries, x.showdown_retries);
  take(p.showdown_screen_rounds, x.showdown_screen_rounds);
  take(p.showdown_screen_margin, x.showdown_screen_margin);
  take(p.showdown_sustain_ms, x.showdown_sustain_ms);
  take(p.showdown_sustain_margin, x.showdown_sustain_margin);
  take(p.showdown_sustain_pairs, x.showdown_sustain_pairs);
  take(p.showdown_sustain_contenders, x.showdown_sustain_contenders);
  take(p.showdown_seed, x.showdown_seed);
  return p;
}

Status validate(const BenchOptions& opts, Effort effort) {
  const TimingPolicy p = resolve_timing(opts, effort);
  // The one check between a field set and one left to the effort: name the one set.
  if (opts.expert.min_reps && !opts.expert.max_reps && p.max_reps < p.min_reps)
    return Status(StatusCode::invalid_argument,
                  "BenchOptions::expert.min_reps (" + std::to_string(p.min_reps) +
                      ") is above the " + std::string(to_string(effort)) + " effort's max_reps (" +
                      std::to_string(p.max_reps) + "): set expert.max_reps too");
  return check_policy(p, [&](const char* field, const std::string& why) {
    return Status(StatusCode::invalid_argument, field_name(opts, field) + " " + why);
  });
}

}  // namespace tune
