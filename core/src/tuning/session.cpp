#include "session.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <limits>
#include <map>
#include <new>
#include <optional>
#include <set>
#include <thread>

#include "bucket_edges.hpp"
#include "candidates.hpp"
#include "effort_plan.hpp"
#include "hook_runner.hpp"
#include "output_check.hpp"
#include "race.hpp"
#include "search_session.hpp"
#include "session_kit.hpp"
#include "stats.hpp"
#include "stored_results.hpp"
#include "tune/benchmark.hpp"
#include "tune/log.hpp"
#include "user_code.hpp"
#include "warm_start.hpp"
#include "winner_rule.hpp"
#include "winner_stage.hpp"

namespace tune::detail {
namespace {

// How long the timing loop waits for the next compile before it gives the configurations
// already compiled another round of timing.
constexpr auto kRaceWhileCompiling = std::chrono::milliseconds(10);
// Cross-process claims: a claim lapses this long after its last renewal (sooner when its
// process is gone from this host); the owner renews it while tuning; waiters look again at
// this interval.
constexpr auto kClaimTtl = std::chrono::milliseconds(60000);
constexpr auto kClaimRenew = std::chrono::milliseconds(10000);
constexpr auto kClaimPoll = std::chrono::milliseconds(50);

// How the candidates of one key are decided.
// refused: strict mode, and no stored row gives a winner.
enum class Plan : std::uint8_t { disabled, single, all_stored, time_the_rest, refused };

class KeySession final : public WinnerStage {
 public:
  // `made`: the call's candidates when the caller already made them (plan_search), so that
  // early_prune and the perf model run once per tuning.
  KeySession(const SessionContext& ctx, Device& dev, ArgList args, const KeyForms& forms,
             const KernelSource& src, TuningReport& report,
             std::optional<Candidates> made = std::nullopt)
      : WinnerStage(ctx, dev, args, forms, src, report), made_(std::move(made)) {}

  ~KeySession() { stored_.release_claim(); }

  // Times exactly `configs` (Autotuner::measure): stage 4 alone, with no stored rows and no
  // store (the context given has none), then the hooks' restores. A failure that ends a
  // tuning (a callback that threw, a lost device) is returned; one configuration's failure
  // is in its result.
  Result<std::vector<ConfigResult>> measure(std::span<const Config> configs) {
    cands_.assign(configs.begin(), configs.end());
    report_.results.resize(cands_.size());
    for (std::size_t i = 0; i < cands_.size(); ++i) {
      report_.results[i].config = cands_[i];
      report_.results[i].stats.median = kInf;
    }
    need_.assign(cands_.size(), true);
    report_.source = ResultSource::tuned;
    verify_all_ = true;  // no winner is decided here: whoever picks one needs them all checked
    Status timed = cands_.empty() ? Status() : time_candidates();
    Status finished = hooks_.finish(timed);
    new_rows_.clear();  // nothing persists
    TUNE_RETURN_IF_ERROR(timed);
    TUNE_RETURN_IF_ERROR(finished);
    return report_.results;
  }

  Result<Selection> run() {
    TUNE_RETURN_IF_ERROR(find_candidates());
    load_stored();
    Plan plan = choose_plan();
    if (plan == Plan::refused) return strict_refusal();
    Result<Selection> out = run_plan(plan);
    if (plan != Plan::disabled && plan != Plan::single) report_progress(/*done=*/true);
    return out;
  }

 private:
  // The winner is chosen (and verified) before the hooks put the buffers back and the rows
  // are saved, so that a configuration failing verification is stored as failed.
  Result<Selection> run_plan(Plan& plan) {
    if (plan == Plan::time_the_rest && stored_.has_store()) {
      claim_or_wait();
      plan = choose_plan();
    }
    GpuLock gpu;
    if (plan == Plan::time_the_rest) {
      gpu = lock_gpu_for_timing(ctx_, dev_, forms_, deadline());
      Status timed = time_candidates();
      if (!timed.ok()) return finish(gpu, timed);
    }
    // Stage 5: the winner (WinnerStage::choose_winner). Disabled and single time nothing and
    // verify nothing: the first candidate, compiled.
    const bool ranking = plan != Plan::disabled && plan != Plan::single;
    return finish(gpu, choose_winner(ranking ? ranked() : std::vector<std::size_t>{0}, ranking));
  }

  // Stage 2: the candidates, with a result slot each.
  Status find_candidates() {
    auto timer = clock_.measure(&TuningTimes::candidates);
    Result<Candidates> cands = made_ ? Result<Candidates>(std::move(*made_))
                                     : make_candidates(def_, dev_.info(), args_, forms_.heuristics);
    made_.reset();
    if (!cands.ok()) return cands.status();
    cands_ = std::move(cands->configs);
    report_.pruned = cands->pruned;
    report_.results.resize(cands_.size());
    for (std::size_t i = 0; i < cands_.size(); ++i) {
      report_.results[i].config = cands_[i];
      report_.results[i].stats.median = kInf;
    }
    return {};
  }

  // Stage 3: stored timings cover what they can; only the rest is timed.
  void load_stored() {
    need_.assign(cands_.size(), true);
    if (ctx_.disabled || cands_.size() <= 1) return;
    auto timer = clock_.measure(&TuningTimes::store);
    apply_stored();
  }

  // The stored rows into the results. With every configuration checked (verify_all_), a stored
  // ok row whose output was not checked covers nothing: it is timed and checked again.
  void apply_stored() {
    stored_.apply(cands_, report_.results, need_);
    if (!verify_all_ || !checks_.active()) return;
    for (std::size_t i = 0; i < cands_.size(); ++i) {
      ConfigResult& r = report_.results[i];
      if (!r.from_store || !r.status.ok() || r.verified) continue;
      r = ConfigResult{};
      r.config = cands_[i];
      r.stats.median = kInf;
      need_[i] = true;
    }
  }

  // Processes that meet the same new key at once tune it once: the one holding the store's
  // claim tunes; the others wait for its rows (re-reading the store) until they cover every
  // candidate, or until the claim is theirs (the owner finished with some candidates left,
  // failed, died or let the claim expire). The rows are read again once the claim is granted
  // too: an owner may have saved them and let go between load_stored() and this claim, and
  // then nothing is left to time. The plan is chosen again afterwards. Waiting ends at the
  // tuning budget's deadline too.
  void claim_or_wait() {
    for (;;) {
      const bool mine = stored_.claim(kClaimTtl);
      {
        auto timer = clock_.measure(&TuningTimes::store);
        if (!mine) std::this_thread::sleep_for(kClaimPoll);
        reload_stored();
      }
      const bool covered = std::none_of(need_.begin(), need_.end(), [](bool b) { return b; });
      if (mine || covered || deadline_passed()) break;
    }
    last_claim_ = Clock::now();
  }
  // Forgets what load_stored() applied and applies the store's rows as they are now.
  void reload_stored() {
    stored_.reload();
    need_.assign(cands_.size(), true);
    for (std::size_t i = 0; i < cands_.size(); ++i) {
      report_.results[i] = ConfigResult{};
      report_.results[i].config = cands_[i];
      report_.results[i].stats.median = kInf;
    }
    apply_stored();
  }
  // Keeps the claim alive through a long tuning.
  void renew_claim() {
    if (Clock::now() - last_claim_ < kClaimRenew) return;
    stored_.claim(kClaimTtl);
    last_claim_ = Clock::now();
  }

  Plan choose_plan() {
    if (ctx_.disabled) {
      report_.source = ResultSource::disabled;
      return Plan::disabled;
    }
    if (cands_.size() == 1) {
      report_.source = ResultSource::single;
      return Plan::single;
    }
    const bool all_stored = std::none_of(need_.begin(), need_.end(), [](bool b) { return b; });
    if (all_stored && ranked().size() > 0) {
      report_.source = ResultSource::disk;
      return Plan::all_stored;
    }
    if (ctx_.strict) {
      // Never time: stored rows that cover only part of the candidates (a tuning cut short
      // by its budget) still decide, among themselves; no stored winner is an error.
      if (ranked().empty()) return Plan::refused;
      report_.source = ResultSource::disk;
      return Plan::all_stored;
    }
    report_.source = ResultSource::tuned;
    return Plan::time_the_rest;
  }

  // Stage 4: compile, verify, warm up and race the candidates not stored, under the budget.
  Status time_candidates() {
    std::vector<std::size_t> to_time;
    std::vector<Config> configs;
    for (std::size_t i = 0; i < cands_.size(); ++i) {
      if (!need_[i]) continue;
      to_time.push_back(i);
      configs.push_back(cands_[i]);
    }
    CompileWaiter waiter(ctx_.variants.compile(dev_, src_, configs));
    if (hooks_.active() || checks_.active()) TUNE_RETURN_IF_ERROR(hooks_.snapshot());
    Race& race = race_.emplace(dev_, args_, ctx_.timing);
    bool racing_now = false;  // the last round timed something: keep the GPU busy
    while (!waiter.empty()) {
      if (deadline_passed()) break;
      renew_claim();
      // Nothing to time (decided, too few contestants, or the last round timed nothing):
      // the GPU would idle until the next compile.
      if (race.entries().size() < 2 || race.decided() || !racing_now)
        TUNE_RETURN_IF_ERROR(verify_leader_while_idle(race));
      const bool can_race = race.entries().size() >= 2 && !race.decided();
      auto give_up = !can_race    ? deadline()
                     : racing_now ? Clock::now()
                                  : std::min(deadline(), Clock::now() + kRaceWhileCompiling);
      std::optional<std::size_t> j;
      {
        auto timer = clock_.measure(&TuningTimes::compile);
        j = waiter.next(give_up);
      }
      if (!j) {
        if (!can_race) continue;  // the deadline passed: the loop ends above
        auto timed = timed_round(race);
        if (!timed.ok()) return timed.status();
        racing_now = *timed;
        report_progress(/*done=*/false);
        continue;
      }
      TUNE_RETURN_IF_ERROR(prepare(to_time[*j], waiter.get(*j), race));
      report_progress(/*done=*/false);
    }
    // Rounds until decided, or the deadline; past it, one round still times what is warmed
    // up but has no sample yet, so the best so far is a measured one.
    while (!race.decided() && (!deadline_passed() || !any_sampled(race))) {
      auto timed = timed_round(race);
      if (!timed.ok()) return timed.status();
      if (!*timed) break;
      report_progress(/*done=*/false);
    }
    if (!deadline_passed()) TUNE_RETURN_IF_ERROR(hold_showdown(race));
    return collect(race);
  }

  // One compiled candidate: record the compile, verify, warm up, and enter it in the race.
  // Returns non-ok only for what ends the whole tuning (a callback that threw, a lost device).
  Status prepare(std::size_t i, std::shared_ptr<Variant> v, Race& race) {
    ConfigResult& r = report_.results[i];
    r.compile_ms = v->compile_ms;
    ++compiled_;
    // A lost device (or an isolated worker that cannot restart) is no failure of this config:
    // it ends the tuning unstored, as when a launch meets it.
    if (v->status.code() == StatusCode::device_lost)
      return Status(v->status).with_context("compiling config {" + cands_[i].to_string() + "}");
    if (!v->status.ok()) {
      r.status = v->status;
      ++failed_;
      return {};
    }
    r.resources = v->kernel->resources();
    built_[cands_[i].to_string()] = v;
    if (deadline_passed() && !race.entries().empty()) return {};  // not timed: partial
    LaunchDims dims;
    Status st = launch_dims(def_, cands_[i], args_, &dims);
    if (st.ok()) launched_ = true;  // the caller's buffers see launches from here on
    if (st.ok() && verify_all_ && checks_.active()) {
      st = check_output(r, *v->kernel);
      if (checks_.reference_failed()) return st;
    }
    double estimate = 0;
    if (st.ok()) {
      auto timer = clock_.measure(&TuningTimes::benchmark);
      TimingPolicy warm = ctx_.timing;
      if (!race.entries().empty()) warm.warmup_ms = std::min(warm.warmup_ms, warm.warmup_next_ms);
      auto w = warm_up(dev_, *v->kernel, dims, args_, warm, hooks_.before(&cands_[i]));
      Status post = hooks_.flush_post(w.status());
      st = !w.ok() ? w.status() : post;
      if (st.ok()) estimate = *w;
    }
    if (ends_tuning(st)) return st.with_context("config {" + cands_[i].to_string() + "}");
    if (!st.ok()) {
      r.status = st;
      ++failed_;
      return {};
    }
    RaceEntry e;
    e.kernel = v->kernel.get();
    e.dims = dims;
    e.before = hooks_.before(&cands_[i]);
    if (hooks_.active()) e.after_batch = [this](const Status& s) { return hooks_.flush_post(s); };
    e.estimate_ns = estimate;
    e.config_text = cands_[i].to_string();
    race.add(std::move(e));
    racers_.push_back(i);
    return {};
  }

  // Verification overlapped with compiling: while the race waits for compiles with nothing
  // to time, the GPU would idle, so the winner rule's current pick has its output checked now (it
  // is what can win). choose_winner then finds the likely winner verified; only a leader that takes
  // over later costs a check after the race. A leader whose output is wrong leaves the race with
  // that reason (stored as failed). Each configuration is checked at most once. Returns non-ok only
  // for what ends the tuning.
  Status verify_leader_while_idle(Race& race) {
    if (verify_all_ || !checks_.active()) return {};
    const std::optional<std::size_t> k = race_pick(race);
    if (!k) return {};
    const std::size_t i = racers_[*k];
    if (checked_here(cands_[i])) return {};
    const Status st = check_output(report_.results[i], *built_.at(cands_[i].to_string())->kernel);
    if (ends_tuning(st) || checks_.reference_failed()) return st;
    if (!st.ok()) race.drop(*k, st);
    return {};
  }

  // The entry the winner rule would pick from the race's samples so far (raced-out entries
  // included: one raced out by a leader that later failed its check can win); none before any
  // is timed.
  std::optional<std::size_t> race_pick(const Race& race) const {
    std::vector<std::string> texts;
    std::vector<RuledResult> ruled;
    texts.reserve(race.entries().size());
    for (std::size_t k = 0; k < race.entries().size(); ++k) {
      const RaceEntry& e = race.entries()[k];
      texts.push_back(cands_[racers_[k]].to_string());
      ruled.push_back({texts.back(), e.samples.empty() ? kInf : quantile(e.samples, 0.5),
                       e.status.ok() && !e.samples.empty()});
    }
    const auto order = rank_by_winner_rule(ruled, ctx_.timing.tie_tolerance);
    if (order.empty()) return std::nullopt;
    return order.front();
  }

  static bool any_sampled(Race& race) {
    return std::any_of(race.entries().begin(), race.entries().end(),
                       [](const RaceEntry& e) { return !e.samples.empty(); });
  }

  Result<bool> timed_round(Race& race) {
    auto timer = clock_.measure(&TuningTimes::benchmark);
    return race.round();
  }

  // The finalists re-timed together (Race::finish): the race's last stage, counted as timing.
  Status hold_showdown(Race& race) {
    auto timer = clock_.measure(&TuningTimes::benchmark);
    TUNE_ASSIGN_OR_RETURN(report_.showdown, race.finish());
    return {};
  }

  // The race's samples and outcomes into the report, and the rows to store.
  Status collect(Race& race) {
    report_.timing_cache = race.timing_cache();
    for (std::size_t k = 0; k < race.entries().size(); ++k) {
      const RaceEntry& e = race.entries()[k];
      const std::size_t i = racers_[k];
      if (ends_tuning(e.status))
        return Status(e.status).with_context("config {" + cands_[i].to_string() + "}");
      auto& r = report_.results[i];
      r.status = e.status;
      r.raced_out = e.raced_out;
      r.settled = e.within_tolerance;
      if (r.status.ok() && !e.samples.empty()) r.stats = summarize(e.samples);
    }
    for (std::size_t i = 0; i < cands_.size(); ++i) {
      auto& r = report_.results[i];
      if (!need_[i]) continue;
      if (r.status.ok() && r.stats.count == 0) {  // not reached within the budget
        report_.partial = true;
        continue;
      }
      if (!r.status.ok()) {
        r.stats = SampleStats{};
        r.stats.median = kInf;
      }
      new_rows_.push_back(row_of(r));
    }
    return {};
  }

  Status no_winner() const override {
    const bool budget_hit =
        report_.partial || (ctx_.opts.tuning_budget_ms > 0 && deadline_passed());
    if (budget_hit) {
      return Status(StatusCode::timeout,
                    "tuning_budget_ms (" + format_ms(ctx_.opts.tuning_budget_ms) +
                        " ms) exhausted before any configuration was timed; compiles go on in "
                        "the background and a later call continues from them");
    }
    std::string msg = "every configuration failed on " + dev_.info().name + ":";
    for (const auto& r : report_.results) {
      msg += "\n  {" + r.config.to_string() +
             "}: " + (r.status.ok() ? std::string("no timing") : r.status.to_string());
    }
    return Status(StatusCode::all_failed, msg);
  }

  // Tells AutotunerOptions::progress where the tuning stands: at most every
  // ProgressNotifier::kInterval, and always when `done`. Counts come from this session's own
  // tallies and the race, so they only grow; the best so far is the fastest median among the stored
  // rows and the race (when done: the report's fastest, which the winner is unless it no longer
  // compiled).
  void report_progress(bool done) {
    if (!progress_.due(done)) return;
    TuningProgress p = progress_event(done);
    p.candidates = cands_.size();
    p.stored = static_cast<std::size_t>(std::count(need_.begin(), need_.end(), false));
    p.compiled = compiled_;
    p.failed = failed_;
    constexpr std::size_t kNone = static_cast<std::size_t>(-1);
    std::size_t best = kNone;
    const auto consider = [&](std::size_t i, double median) {
      if (median < p.best_ns) p.best_ns = median, best = i;
    };
    for (std::size_t i = 0; i < cands_.size(); ++i) {
      const ConfigResult& r = report_.results[i];
      if (r.from_store && r.status.ok()) consider(i, r.stats.median);
    }
    if (race_) {
      for (std::size_t k = 0; k < race_->entries().size(); ++k) {
        const RaceEntry& e = race_->entries()[k];
        if (!e.samples.empty()) ++p.timed;
        if (e.raced_out) ++p.raced_out;
        if (!e.status.ok()) ++p.failed;
        if (!done && e.status.ok() && !e.samples.empty())
          consider(racers_[k], quantile(e.samples, 0.5));
      }
    }
    if (done) {
      p.best_ns = kInf;
      best = kNone;
      if (auto order = ranked(); !order.empty())
        consider(order.front(), report_.results[order.front()].stats.median);
    }
    if (best != kNone) p.best = cands_[best];
    progress_.send(p);
  }

  Clock::time_point deadline() const {
    if (ctx_.opts.tuning_budget_ms <= 0) return Clock::time_point::max();
    return clock_.start() +
           std::chrono::duration_cast<Clock::duration>(
               std::chrono::duration<double, std::milli>(ctx_.opts.tuning_budget_ms));
  }
  bool deadline_passed() const { return Clock::now() >= deadline(); }

  std::optional<Candidates> made_;  // the caller's candidates, taken by find_candidates
  std::vector<Config> cands_;
  std::vector<bool> need_;           // per candidate: not covered by a stored row
  std::vector<std::size_t> racers_;  // candidate of each race entry
  Clock::time_point last_claim_;
  std::optional<Race> race_;  // made when candidates are timed
  std::size_t compiled_ = 0;  // progress tally: compiles finished now
};

}  // namespace

GpuLock lock_gpu_for_timing(const SessionContext& ctx, const Device& dev, const KeyForms& forms,
                            std::chrono::steady_clock::time_point deadline) {
  return GpuLock::acquire(dev.info(), ctx.gpu_lock_dir,
                          "tuning " + ctx.def.name + " key {" + forms.text + "}", deadline);
}

Status strict_refusal(const KernelDef& def, const DeviceInfo& info, const KeyForms& forms) {
  return Status(StatusCode::failed_precondition,
                "strict mode (TUNE_STRICT=1 or AutotunerOptions::strict): kernel " + def.name +
                    " key {" + forms.text + "} on device " + info.name + " [" + info.fingerprint() +
                    "] has no stored winner and strict mode never tunes; tune it first without "
                    "strict mode (run the program once, or Autotuner::tune with these "
                    "arguments) on a machine with this device and ship its database (`tune "
                    "cache merge`), or leave TUNE_STRICT unset");
}

bool is_definition_error(const Status& st) noexcept {
  switch (st.code()) {
    case StatusCode::invalid_argument:
    case StatusCode::not_found:
    case StatusCode::unavailable:
    case StatusCode::all_failed:
      return true;
    default:
      return false;
  }
}

Result<Selection> first_candidate(const SessionContext& ctx, Device& dev, ArgList args,
                                  const KeyForms& forms) {
  try {
    const KernelSource* src = ctx.def.source_for(dev.language());
    if (src == nullptr) {
      return Status(StatusCode::unavailable, "kernel " + ctx.def.name + " has no " +
                                                 std::string(to_string(dev.language())) +
                                                 " source for device " + dev.info().name);
    }
    auto cands = make_candidates(ctx.def, dev.info(), args, forms.heuristics);
    if (!cands.ok()) return cands.status();
    std::string why;
    for (const Config& c : cands->configs) {
      auto v = ctx.variants.compile(dev, *src, {c}).front().get();
      if (v->status.ok()) return Selection{c, std::move(v), false};
      why += "\n  {" + c.to_string() + "}: " + v->status.to_string();
    }
    return Status(StatusCode::all_failed,
                  "no candidate compiled on " + dev.info().name + ":" + why);
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::out_of_resources, "out of host memory");
  } catch (...) {
    return current_exception_status("libtune", nullptr);
  }
}

Result<std::vector<ConfigResult>> measure_configs(const SessionContext& ctx, Device& dev,
                                                  ArgList args, const KeyForms& forms,
                                                  std::span<const Config> configs,
                                                  TuningReport& report) {
  report.kernel = ctx.def.name;
  report.key = forms.text;
  report.device = dev.info().fingerprint();
  Result<std::vector<ConfigResult>> out = Status(StatusCode::internal, "not measured");
  try {
    const KernelSource* src = ctx.def.source_for(dev.language());
    if (src == nullptr) {
      out = Status(StatusCode::unavailable, "kernel " + ctx.def.name + " has no " +
                                                std::string(to_string(dev.language())) +
                                                " source for device " + dev.info().name);
    } else {
      // No store: measuring remembers and persists nothing. Never disabled or strict: the
      // caller asked for timings. The GPU lock still applies: these are timings like any.
      const SessionContext bare{ctx.def,         ctx.opts,        ctx.timing,   false,
                                false,           nullptr,         ctx.variants, ctx.zero_idx,
                                ctx.restore_idx, ctx.gpu_lock_dir};
      out = KeySession(bare, dev, args, forms, *src, report).measure(configs);
    }
  } catch (const std::bad_alloc&) {
    out = Status(StatusCode::out_of_resources, "out of host memory");
  } catch (...) {
    out = current_exception_status("libtune", nullptr);
  }
  if (!out.ok()) {
    out = Status(out.status()).with_context("measuring " + ctx.def.name + " for " + forms.text);
  }
  return out;
}

Result<Selection> tune_one_key(const SessionContext& ctx, Device& dev, ArgList args,
                               const KeyForms& forms, TuningReport& report) {
  const auto t0 = Clock::now();
  const DeviceInfo& info = dev.info();
  report.kernel = ctx.def.name;
  report.key = forms.text;
  report.device = info.fingerprint();
  Result<Selection> out = Status(StatusCode::internal, "not tuned");
  try {
    const KernelSource* src = ctx.def.source_for(dev.language());
    if (src == nullptr) {
      out = Status(StatusCode::unavailable, "kernel " + ctx.def.name + " has no " +
                                                std::string(to_string(dev.language())) +
                                                " source for device " + info.name);
    } else if (auto empty = empty_problem(ctx.def, info, args, forms.heuristics); !empty.ok()) {
      out = empty.status();
    } else if (*empty) {
      out = first_candidate(ctx, dev, args, forms);
      report.source = ResultSource::empty;
    } else if (ctx.disabled) {
      out = KeySession(ctx, dev, args, forms, *src, report).run();
    } else {
      std::optional<Candidates> made;
      auto plan = plan_search(
          ctx.def, ctx.opts.effort, info, args, forms.heuristics,
          [&] { return warm_start_points(ctx.store, forms.store_key); }, &made);
      if (!plan.ok())
        out = plan.status();
      else if (*plan)
        out = search_with_plan(ctx, dev, args, forms, *src, std::move(**plan), report);
      else
        out = KeySession(ctx, dev, args, forms, *src, report, std::move(made)).run();
    }
  } catch (const std::bad_alloc&) {
    out = Status(StatusCode::out_of_resources, "out of host memory");
  } catch (...) {
    out = current_exception_status("libtune", nullptr);
    if (out.status().code() != StatusCode::callback_failed)
      out = Status(StatusCode::internal, "unexpected exception: " + out.status().message());
  }
  if (!out.ok()) {
    out = Status(out.status()).with_context("tuning " + ctx.def.name + " for " + forms.text);
    report.status = out.status();
  } else if (ctx.check_bucket_edges && report.source == ResultSource::tuned && !ctx.disabled) {
    report.winner = out->config;
    report.bucket = check_bucket_edges(ctx, dev, args, forms, report);
  }
  report.wall_ms = ms_since(t0);
  report.times.overhead = 0;
  const TuningTimes& t = report.times;
  const double parts = t.candidates + t.store + t.compile + t.verify + t.benchmark + t.strategy;
  report.times.overhead = std::max(0.0, report.wall_ms - parts);
  if (out.ok()) report.winner = out->config;
  return out;
}

}  // namespace tune::detail
