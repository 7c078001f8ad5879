#include "showdown.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "stats.hpp"
#include "sustained_turn.hpp"
#include "tuning/winner_rule.hpp"

namespace tune {
namespace {

bool timed_ok(const RaceEntry& e) { return e.status.ok() && !e.samples.empty(); }

double median_of(const RaceEntry& e) { return quantile(e.samples, 0.5); }

// A contestant's name in the report: its configuration's text, or "#<index>" without one.
std::string name_of(const RaceEntry& e, std::size_t index) {
  return e.config_text.empty() ? "#" + std::to_string(index) : e.config_text;
}

// The contestants that can still win: timed without error, raced out or not (racing compares
// samples that may come from different clock states), whose median is within `margin` of the
// fastest; fastest first, at most `limit` of them.
std::vector<std::size_t> pick_finalists(const std::vector<RaceEntry>& entries, double margin,
                                        std::size_t limit) {
  double best = INFINITY;
  for (const auto& e : entries)
    if (timed_ok(e)) best = std::min(best, median_of(e));
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < entries.size(); ++i)
    if (timed_ok(entries[i]) && median_of(entries[i]) <= best * (1.0 + margin)) out.push_back(i);
  std::stable_sort(out.begin(), out.end(), [&](std::size_t a, std::size_t b) {
    return median_of(entries[a]) < median_of(entries[b]);
  });
  if (out.size() > limit) out.resize(limit);
  return out;
}

// How many finalists a showdown holds at first (at least two: a showdown of one decides nothing).
std::size_t finalist_limit(const TimingPolicy& opts) {
  return static_cast<std::size_t>(std::max(2, opts.showdown_finalists));
}

// One batch of `reps` launches of `e`. Returns non-ok only for device_lost; any other failure
// drops the contestant with its reason.
Status time_batch(Device& dev, ArgList args, const TimingPolicy& opts, int reps, RaceEntry& e,
                  std::vector<double>& into, InputRotation* rotation) {
  auto s = time_reps(dev, *e.kernel, e.dims, args, opts, reps, e.before, rotation);
  Status after = e.after_batch ? e.after_batch(s.status()) : Status();
  if (!s.ok() && s.status().code() == StatusCode::device_lost) return s.status();
  if (after.code() == StatusCode::device_lost) return after;
  if (!s.ok())
    e.status = s.status();
  else if (!after.ok())
    e.status = after;
  else if (s->empty())
    e.status = Status(StatusCode::internal, "device returned no timing samples");
  else
    into.insert(into.end(), s->begin(), s->end());
  return {};
}

// One attempt: `rounds` rounds over the finalists, forward then backward. samples[k] is
// finalist k's; round_start[k][r] where its round-r samples begin.
struct Attempt {
  std::vector<std::vector<double>> samples;
  std::vector<std::vector<std::size_t>> round_start;
};

Result<Attempt> time_attempt(Device& dev, ArgList args, const TimingPolicy& opts,
                             std::vector<RaceEntry>& entries,
                             const std::vector<std::size_t>& finalists, int rounds,
                             InputRotation* rotation) {
  Attempt a;
  a.samples.resize(finalists.size());
  a.round_start.resize(finalists.size());
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t n = 0; n < finalists.size(); ++n) {
      const std::size_t k = (r % 2 == 0) ? n : finalists.size() - 1 - n;
      RaceEntry& e = entries[finalists[k]];
      if (!e.status.ok()) continue;
      a.round_start[k].push_back(a.samples[k].size());
      TUNE_RETURN_IF_ERROR(
          time_batch(dev, args, opts, std::max(1, opts.race_batch), e, a.samples[k], rotation));
    }
  }
  return a;
}

// Whether any finalist's first-half rounds differ from its second-half rounds.
bool attempt_shifted(const Attempt& a, const std::vector<RaceEntry>& entries,
                     const std::vector<std::size_t>& finalists, const TimingPolicy& opts) {
  for (std::size_t k = 0; k < finalists.size(); ++k) {
    if (!entries[finalists[k]].status.ok()) continue;
    const auto& starts = a.round_start[k];
    if (starts.size() < 2) continue;
    const auto mid = static_cast<std::ptrdiff_t>(starts[starts.size() / 2]);
    const auto& s = a.samples[k];
    std::vector<double> first(s.begin(), s.begin() + mid), second(s.begin() + mid, s.end());
    if (first.empty() || second.empty()) continue;
    if (shifted(first, second, opts.race_confidence, opts.race_tolerance)) return true;
  }
  return false;
}

// Standing contestants outside `finalists` whose median is within race_tolerance of the
// fastest finalist's (or below it).
std::vector<std::size_t> undercutters(const std::vector<RaceEntry>& entries,
                                      const std::vector<std::size_t>& finalists, double tolerance) {
  double best = INFINITY;
  for (std::size_t i : finalists)
    if (timed_ok(entries[i])) best = std::min(best, median_of(entries[i]));
  std::vector<std::size_t> out;
  if (!std::isfinite(best)) return out;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& e = entries[i];
    if (!e.status.ok() || e.samples.empty()) continue;
    if (std::find(finalists.begin(), finalists.end(), i) != finalists.end()) continue;
    if (median_of(e) <= best * (1.0 + std::max(0.0, tolerance))) out.push_back(i);
  }
  return out;
}

// The screen (TimingPolicy::showdown_screen_rounds): every contestant within
// showdown_screen_margin of the fastest is timed again, interleaved, and those samples replace
// its race samples, so that the finalists are picked from medians taken under the same
// conditions. Held only when it could change the finalists: some contestant within the screen
// margin is not among them. Returns non-ok only for device_lost.
Status screen(Device& dev, ArgList args, const TimingPolicy& opts, std::vector<RaceEntry>& entries,
              InputRotation* rotation, ShowdownReport& out) {
  if (opts.showdown_screen_rounds <= 0) return {};
  const std::vector<std::size_t> entrants =
      pick_finalists(entries, std::max(0.0, opts.showdown_screen_margin), entries.size());
  const std::vector<std::size_t> finalists =
      pick_finalists(entries, std::max(0.0, opts.showdown_margin), finalist_limit(opts));
  if (entrants.size() <= finalists.size()) return {};  // every entrant is a finalist already
  TUNE_ASSIGN_OR_RETURN(Attempt a, time_attempt(dev, args, opts, entries, entrants,
                                                opts.showdown_screen_rounds, rotation));
  for (std::size_t k = 0; k < entrants.size(); ++k) {
    RaceEntry& e = entries[entrants[k]];
    if (e.status.ok() && !a.samples[k].empty()) e.samples = std::move(a.samples[k]);
  }
  out.screened = static_cast<int>(entrants.size());
  return {};
}

// The length of a sustained turn in ms (TimingPolicy::showdown_sustain_ms); 0: none.
double sustain_ms(const Device& dev, const TimingPolicy& opts) {
  return opts.showdown_sustain_ms < 0 ? 2.0 * dev.info().power_settle_ms : opts.showdown_sustain_ms;
}

// One round of sustained turns, in `order` (indices into `contenders`: those still running,
// forward_order or its reverse): each one's turn's second half is appended to turns[k]; a
// contender that fails is dropped with its reason (and skipped if it comes again). The
// round's order, by name, goes into the report. Returns non-ok only for device_lost.
Status sustain_round(Device& dev, ArgList args, const TimingPolicy& opts,
                     std::vector<RaceEntry>& entries, const std::vector<std::size_t>& contenders,
                     const std::vector<std::size_t>& order, double turn_ms, InputRotation* rotation,
                     std::vector<std::vector<std::vector<double>>>& turns, ShowdownReport& out) {
  std::vector<std::string>& names = out.sustained_order.emplace_back();
  for (std::size_t k : order) {
    RaceEntry& e = entries[contenders[k]];
    if (!e.status.ok()) continue;
    names.push_back(name_of(e, contenders[k]));
    const int reps = sustained_turn_reps(turn_ms, median_of(e), opts.max_reps);
    std::vector<double> turn;
    TUNE_RETURN_IF_ERROR(time_batch(dev, args, opts, reps, e, turn, rotation));
    ++out.sustained_turns;
    if (e.status.ok()) turns[k].push_back(second_half(turn));
  }
  return {};
}

// Each contender's turn medians, round by round: {NaN} for a dropped one, and when `only` is
// given, for one no longer running.
std::vector<std::vector<double>> turn_medians(
    const std::vector<RaceEntry>& entries, const std::vector<std::size_t>& contenders,
    const std::vector<std::vector<std::vector<double>>>& turns,
    const std::vector<bool>* only = nullptr) {
  std::vector<std::vector<double>> out(contenders.size());
  for (std::size_t k = 0; k < contenders.size(); ++k) {
    if (!entries[contenders[k]].status.ok() || (only && !(*only)[k])) {
      out[k] = {NAN};
      continue;
    }
    for (const auto& t : turns[k]) out[k].push_back(quantile(t, 0.5));
  }
  return out;
}

// The one-sided confidence at which a contender's mean gap must stay above -race_tolerance
// against the pick for the sustained turns to stop (pick_decided), or above 0 against the
// leader for its own turns to stop (ruled_out); Student's t at the pooled degrees of freedom.
constexpr double kSustainConfidence = 0.95;

// The contender (an index into `contenders`) the winner rule would pick on these levels:
// within tie_tolerance of the fastest, the first in canonical order (winner_rule.hpp);
// contenders.size() when no level is finite.
std::size_t rule_pick(const std::vector<RaceEntry>& entries,
                      const std::vector<std::size_t>& contenders, const std::vector<double>& levels,
                      double tie_tolerance) {
  std::vector<detail::RuledResult> ruled;
  for (std::size_t k = 0; k < contenders.size(); ++k) {
    const RaceEntry& e = entries[contenders[k]];
    ruled.push_back({e.config_text, levels[k], e.status.ok() && std::isfinite(levels[k])});
  }
  const auto order = detail::rank_by_winner_rule(ruled, tie_tolerance);
  return order.empty() ? contenders.size() : order.front();
}

// Each contender's turn medians into the report, by configuration text.
void report_turns(const std::vector<RaceEntry>& entries, const std::vector<std::size_t>& contenders,
                  const std::vector<std::vector<double>>& medians, ShowdownReport& out) {
  for (std::size_t k = 0; k < contenders.size(); ++k)
    out.sustained_medians[name_of(entries[contenders[k]], contenders[k])] = medians[k];
}

// The seed of the turns' orders: TimingPolicy::showdown_seed, or a fresh one when that is 0.
std::uint64_t turn_seed(const TimingPolicy& opts) {
  return opts.showdown_seed != 0 ? opts.showdown_seed : fresh_seed();
}

// Sustained turns (TimingPolicy::showdown_sustain_ms): the contestants still within
// showdown_sustain_margin of the fastest (up to showdown_sustain_contenders) each run alone for
// a whole turn, in pairs of rounds (an order drawn from TimingPolicy::showdown_seed and turned
// each pair forward, the same reversed backward: turn_order), pairs until the pick is
// decided, at most showdown_sustain_pairs (pick_decided on the pairs' means, pair_medians: no
// contender likely more than race_tolerance faster than the one the winner rule would pick on
// the levels so far, which within tie_tolerance of the leader is the first in canonical order;
// on the H200 a 100 ms turn's clock moves by 3-5% between rounds by itself, more than
// near-ties differ, and one pair shows no spread, so it takes two pairs to decide anything
// (with showdown_sustain_pairs = 1, one pair runs and the levels pick, undecided);
// each pair halves the variance of the means). After each undecided pair, a contender clearly
// behind the leader (ruled_out), unless it is the
// pick, runs no more turns: later pairs time only the near-ties. (One clearly behind but within
// tie_tolerance of the leader can still become the pick later, when one earlier in canonical
// order leaves the band; it is then judged on the rounds it ran, and the pairs may go on to the
// limit: a cost, not a wrong pick, since it is within the band.) Each contender's turns,
// levelled to its level against the leader (level_turns, turn_levels), replace its samples
// and are reported (ShowdownReport::sustained_medians). Those samples are scaled so that the
// fastest of them keeps the fastest contender's median from before: sustained turns decide the
// order among the contenders, and everyone else's samples (more than the margin slower at the
// showdown's clock) stay comparable with theirs, whatever the clock the sustained load settled at.
// Returns non-ok only for device_lost.
Status sustain(Device& dev, ArgList args, const TimingPolicy& opts, std::vector<RaceEntry>& entries,
               InputRotation* rotation, ShowdownReport& out) {
  const double turn_ms = sustain_ms(dev, opts);
  if (!(turn_ms > 0)) return {};
  const std::vector<std::size_t> contenders =
      pick_finalists(entries, std::max(0.0, opts.showdown_sustain_margin),
                     static_cast<std::size_t>(std::max(2, opts.showdown_sustain_contenders)));
  if (contenders.size() < 2) return {};
  std::vector<std::vector<std::vector<double>>> turns(contenders.size());
  std::vector<bool> running(contenders.size(), true);
  const int pairs = std::max(1, opts.showdown_sustain_pairs);
  const std::uint64_t seed = turn_seed(opts);
  out.sustained_seed = seed;
  std::vector<std::vector<double>> all;      // every contender's turn medians, after the last pair
  std::vector<std::vector<double>> by_pair;  // their means per pair (pair_medians), likewise
  std::size_t previous = contenders.size();  // the last pair's turning point; none yet
  for (int pair = 0; pair < pairs; ++pair) {
    std::vector<std::size_t> still;  // those the pair's rounds will time
    for (std::size_t k = 0; k < contenders.size(); ++k)
      if (running[k] && entries[contenders[k]].status.ok()) still.push_back(k);
    std::vector<std::size_t> order = forward_order(still, pair, seed, previous);
    if (!order.empty()) previous = order.back();
    TUNE_RETURN_IF_ERROR(
        sustain_round(dev, args, opts, entries, contenders, order, turn_ms, rotation, turns, out));
    std::reverse(order.begin(), order.end());
    TUNE_RETURN_IF_ERROR(
        sustain_round(dev, args, opts, entries, contenders, order, turn_ms, rotation, turns, out));
    out.sustained_pairs = pair + 1;
    all = turn_medians(entries, contenders, turns);
    // Decided on pairs, not rounds (pair_medians): one pair shows no spread, so it decides
    // nothing alone and rules nobody out.
    by_pair = pair_medians(all);
    const std::size_t pick =
        rule_pick(entries, contenders, turn_levels(by_pair), opts.tie_tolerance);
    if (pair + 1 == pairs || pick_decided(by_pair, pick, opts.race_tolerance, kSustainConfidence))
      break;
    const std::vector<bool> behind = ruled_out(
        pair_medians(turn_medians(entries, contenders, turns, &running)), kSustainConfidence);
    for (std::size_t k = 0; k < contenders.size(); ++k)
      if (behind[k] && k != pick) {  // never one already out: it has no pair means above
        running[k] = false;
        ++out.sustained_ruled_out;
      }
  }
  report_turns(entries, contenders, all, out);
  const std::vector<double> levels = turn_levels(by_pair);
  std::vector<std::vector<double>> kept(contenders.size());
  double before = INFINITY, after = INFINITY;
  for (std::size_t k = 0; k < contenders.size(); ++k) {
    const RaceEntry& e = entries[contenders[k]];
    if (!e.status.ok() || !std::isfinite(levels[k])) continue;
    kept[k] = level_turns(turns[k]);
    if (kept[k].empty()) continue;
    // level_turns puts the median at the mean of the turns' medians; move it to the level.
    const double own = quantile(kept[k], 0.5);
    if (own > 0)
      for (double& ns : kept[k]) ns *= levels[k] / own;
    before = std::min(before, median_of(e));
    after = std::min(after, quantile(kept[k], 0.5));
  }
  if (!(after > 0) || !std::isfinite(before)) return {};  // every contender failed
  for (std::size_t k = 0; k < contenders.size(); ++k) {
    RaceEntry& e = entries[contenders[k]];
    if (!e.status.ok() || kept[k].empty()) continue;
    for (double& ns : kept[k]) ns *= before / after;
    e.samples = std::move(kept[k]);
  }
  out.sustained = static_cast<int>(contenders.size());
  return {};
}

}  // namespace

bool shifted(const std::vector<double>& first, const std::vector<double>& second, double confidence,
             double tolerance) {
  const Interval a = median_interval(first, confidence);
  const Interval b = median_interval(second, confidence);
  const bool disjoint = a.hi < b.lo || b.hi < a.lo;
  if (!disjoint) return false;
  const double ma = quantile(first, 0.5), mb = quantile(second, 0.5);
  const double lo = std::min(ma, mb), hi = std::max(ma, mb);
  return lo > 0 && hi / lo - 1.0 > std::max(0.0, tolerance);
}

Result<ShowdownReport> run_showdown(Device& dev, ArgList args, const TimingPolicy& opts,
                                    std::vector<RaceEntry>& entries, InputRotation* rotation) {
  ShowdownReport out;
  if (opts.showdown_rounds <= 0) return out;
  TUNE_RETURN_IF_ERROR(screen(dev, args, opts, entries, rotation, out));
  std::vector<std::size_t> finalists =
      pick_finalists(entries, std::max(0.0, opts.showdown_margin), finalist_limit(opts));
  // Each pass either ends or adds at least one contestant, so there are at most
  // entries.size() passes.
  for (std::size_t pass = 0; finalists.size() >= 2 && pass <= entries.size(); ++pass) {
    Attempt kept;
    for (int attempt = 0;; ++attempt) {
      TUNE_ASSIGN_OR_RETURN(
          kept, time_attempt(dev, args, opts, entries, finalists, opts.showdown_rounds, rotation));
      out.rounds += opts.showdown_rounds;
      out.stationary = !attempt_shifted(kept, entries, finalists, opts);
      if (out.stationary || attempt >= opts.showdown_retries) break;
      ++out.retimed;
    }
    for (std::size_t k = 0; k < finalists.size(); ++k) {
      RaceEntry& e = entries[finalists[k]];
      if (!e.status.ok() || kept.samples[k].empty()) continue;
      e.samples = std::move(kept.samples[k]);
      e.raced_out = false;
    }
    out.finalists = static_cast<int>(finalists.size());
    const auto join = undercutters(entries, finalists, opts.race_tolerance);
    if (join.empty()) break;
    finalists.insert(finalists.end(), join.begin(), join.end());
  }
  if (out.finalists > 0) TUNE_RETURN_IF_ERROR(sustain(dev, args, opts, entries, rotation, out));
  return out;
}

}  // namespace tune
