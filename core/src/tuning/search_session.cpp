#include "search_session.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "hook_runner.hpp"
#include "output_check.hpp"
#include "race.hpp"
#include "session_kit.hpp"
#include "stored_results.hpp"
#include "tune/benchmark.hpp"
#include "user_code.hpp"
#include "winner_rule.hpp"

namespace tune::detail {
namespace {

// Thrown through the strategy by the objective once a budget is spent, so that a strategy
// that ignores its budget still stops. Never escapes this file.
struct BudgetSpent {};

class SearchSession {
 public:
  SearchSession(const SessionContext& ctx, Device& dev, ArgList args, const KeyForms& forms,
                const KernelSource& src, TuningReport& report)
      : ctx_(ctx),
        def_(ctx.def),
        dev_(dev),
        args_(args),
        src_(src),
        report_(report),
        clock_(report.times),
        hooks_(dev, ctx.def, args, ctx.zero_idx, ctx.restore_idx),
        checks_(dev, ctx.def, args, ctx.variants, src),
        stored_(ctx.store, forms.store_key, ctx.def, forms.heuristics),
        heuristics_(forms.heuristics),
        forms_(forms),
        key_text_(forms.text) {
    const SearchBudget& b = def_.search.budget;
    double ms = b.max_ms > 0 ? b.max_ms : 0;
    if (ctx.opts.tuning_budget_ms > 0)
      ms = ms > 0 ? std::min(ms, ctx.opts.tuning_budget_ms) : ctx.opts.tuning_budget_ms;
    if (ms > 0)
      deadline_ = clock_.start() + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double, std::milli>(ms));
  }

  Result<Selection> run() {
    report_.source = ResultSource::tuned;
    report_.timing_cache = ctx_.timing.cache;
    {
      auto timer = clock_.measure(&TuningTimes::store);
      stored_.rows();
    }
    // The winner is chosen (and verified) before the hooks put the buffers back and the rows
    // are saved, so that a configuration failing verification is stored as failed.
    GpuLock gpu;
    Result<Selection> chosen = Status(StatusCode::internal, "not chosen");
    if (ctx_.strict) {
      chosen = stored_winner();
    } else {
      if (hooks_.active() || checks_.active()) TUNE_RETURN_IF_ERROR(hooks_.snapshot());
      gpu = lock_gpu_for_timing(ctx_, dev_, forms_, deadline_);
      Status searched = search();
      chosen = searched.ok() ? choose_winner() : Result<Selection>(searched);
    }
    Status finished = hooks_.finish(chosen.status());
    gpu.release();
    std::erase_if(new_rows_,
                  [&](const StoredResult& r) { return checks_.untrusted().count(r.config); });
    if (!new_rows_.empty()) {
      auto timer = clock_.measure(&TuningTimes::store);
      stored_.save(new_rows_);
    }
    if (chosen.ok() && !finished.ok()) chosen = finished;
    if (progress_.due(/*done=*/true))
      report_progress(/*done=*/true, chosen.ok() ? &chosen->config : nullptr);
    return chosen;
  }

 private:
  Status search() {
    const SearchStrategy& strategy = *def_.search.strategy;
    Objective objective = [this](const Config& point) { return evaluate(point); };
    const auto t0 = Clock::now();
    Result<SearchResult> found = Status(StatusCode::internal, "search did not run");
    try {
      found =
          strategy.search(def_.space, dev_.info(), objective, def_.search.budget, def_.search.seed);
    } catch (const BudgetSpent&) {
      found = SearchResult{};
    } catch (...) {
      found = current_exception_status("search strategy '" + std::string(strategy.name()) + "'",
                                       nullptr);
    }
    report_.times.strategy += std::max(0.0, ms_since(t0) - objective_ms_);
    if (!stop_.ok()) return stop_;  // a callback threw, or the device was lost
    if (!found.ok()) return found.status();
    const std::uint64_t accepted = found->accepted_points;
    report_.partial = accepted == 0 || evaluations_ < accepted;
    return {};
  }

  // One point: +inf when it failed. Throws BudgetSpent once a budget is spent.
  double evaluate(const Config& point) {
    if (!stop_.ok() || spent_) throw BudgetSpent{};
    const std::uint64_t cap = def_.search.budget.max_evaluations;
    if ((cap != 0 && evaluations_ >= cap) || Clock::now() >= deadline_) {
      spent_ = true;
      throw BudgetSpent{};
    }
    ++evaluations_;
    const auto t0 = Clock::now();
    Config c = point;
    for (const auto& [name, value] : heuristics_.params()) c.set(name, value);
    ConfigResult r = measure(c);
    report_.results.push_back(r);
    if (progress_.due(/*done=*/false)) report_progress(/*done=*/false, nullptr);
    objective_ms_ += ms_since(t0);
    if (ends_tuning(r.status) && stop_.ok())
      stop_ = Status(r.status).with_context("config {" + c.to_string() + "}");
    if (!stop_.ok()) throw BudgetSpent{};
    return r.stats.median;
  }

  // Tells AutotunerOptions::progress where the search stands, from the points evaluated so
  // far: a search does not know in advance how many it will evaluate, so `candidates` grows
  // with them, and nothing races. The last event (done) has the chosen configuration as the
  // best (`winner`; null when the search chose none).
  void report_progress(bool done, const Config* winner) {
    TuningProgress p;
    p.kernel = def_.name;
    p.key = key_text_;
    p.candidates = report_.results.size();
    p.best_ns = kInf;
    for (const ConfigResult& r : report_.results) {
      if (r.from_store) ++p.stored;
      if (!r.from_store) ++p.compiled;
      if (!r.from_store && r.status.ok()) ++p.timed;
      if (!r.status.ok()) ++p.failed;
      if (!done && r.status.ok() && r.stats.median < p.best_ns) {
        p.best_ns = r.stats.median;
        p.best = r.config;
      }
    }
    for (const ConfigResult& r : report_.results) {
      if (winner != nullptr && r.status.ok() && r.config == *winner) {
        p.best_ns = r.stats.median;
        p.best = r.config;
      }
    }
    p.elapsed_ms = ms_since(clock_.start());
    p.done = done;
    progress_.send(p);
  }

  ConfigResult measure(const Config& c) {
    ConfigResult r;
    r.config = c;
    r.stats.median = kInf;
    const auto& stored = stored_.rows();
    // With every configuration checked, a stored ok row that was not is evaluated again.
    if (auto it = stored.find(c.to_string());
        it != stored.end() && !(verify_all_ && checks_.active() &&
                                it->second.status == StatusCode::ok && !it->second.verified)) {
      r.from_store = true;
      r.verified = it->second.verified;
      if (it->second.status == StatusCode::ok)
        r.stats = it->second.stats;
      else
        r.status = Status(it->second.status, it->second.reason);
      return r;
    }
    std::shared_ptr<Variant> v;
    {
      auto timer = clock_.measure(&TuningTimes::compile);
      v = ctx_.variants.compile(dev_, src_, {c}).front().get();
    }
    r.compile_ms = v->compile_ms;
    Status st = v->status;
    if (st.ok()) {
      r.resources = v->kernel->resources();
      built_[c.to_string()] = v;
      if (verify_all_ && checks_.active()) st = check(c, *v->kernel, &r);
      if (st.ok()) st = time_one(c, *v->kernel, &r.stats);
    }
    r.status = st;
    if (!st.ok()) {
      r.stats = SampleStats{};
      r.stats.median = kInf;
    }
    if (stop_.ok()) new_rows_.push_back(row_of(r));  // else no fault of this point's
    return r;
  }

  Status time_one(const Config& c, const CompiledKernel& kernel, SampleStats* out) {
    LaunchDims dims;
    TUNE_RETURN_IF_ERROR(launch_dims(def_, c, args_, &dims));
    launched_ = true;  // the caller's buffers see launches from here on
    auto timer = clock_.measure(&TuningTimes::benchmark);
    // Settle the clock for the first evaluation, and again only after a pause (as a race
    // does), not for every point.
    TimingPolicy bench = ctx_.timing;
    if (!clock_watch_.needs_settling()) bench.settle_max_ms = 0;
    auto stats = time_kernel(dev_, kernel, dims, args_, bench, hooks_.before(&c));
    clock_watch_.busy();
    Status post = hooks_.flush_post(stats.status());
    TUNE_RETURN_IF_ERROR(stats.status());
    TUNE_RETURN_IF_ERROR(post);
    *out = *stats;
    return {};
  }

  // One output check of `c` into `r` (checked, unless the check could not be made: it ends the
  // tuning, through stop_ while searching). A passed check goes into the rows to store: the
  // point's new row, or its stored row when that said not checked.
  Status check(const Config& c, const CompiledKernel& kernel, ConfigResult* r) {
    Status st;
    {
      auto timer = clock_.measure(&TuningTimes::verify);
      launched_ = true;
      st = checks_.verify(hooks_, kernel, c);
    }
    if (ends_tuning(st) || checks_.reference_failed()) {
      if (stop_.ok()) stop_ = Status(st).with_context("config {" + c.to_string() + "}");
      return st;
    }
    r->verified = true;
    const std::string text = c.to_string();
    checked_here_.insert(text);
    if (!st.ok()) return st;
    for (StoredResult& row : new_rows_) {
      if (row.config != text) continue;
      row.verified = true;
      return st;
    }
    const auto& stored = stored_.rows();
    if (auto it = stored.find(text); r->from_store && it != stored.end() && !it->second.verified) {
      StoredResult row = it->second;
      row.verified = true;
      new_rows_.push_back(std::move(row));
    }
    return st;
  }

  // Strict mode: the winner among the stored rows (every one the store holds for the key, as
  // the search would have read them), never a search; none is an error.
  Result<Selection> stored_winner() {
    report_.source = ResultSource::disk;
    for (const auto& [text, row] : stored_.rows()) {
      ConfigResult r;
      r.from_store = true;
      auto parsed = Config::parse(text);
      if (!parsed.ok()) continue;
      r.config = std::move(*parsed);
      r.verified = row.verified;
      r.stats.median = kInf;
      if (row.status == StatusCode::ok)
        r.stats = row.stats;
      else
        r.status = Status(row.status, row.reason);
      report_.results.push_back(std::move(r));
    }
    if (rank_by_winner_rule(report_.results, ctx_.timing.tie_tolerance).empty())
      return strict_refusal(def_, dev_.info(), forms_);
    return choose_winner();
  }

  Result<Selection> choose_winner() {
    // The winner rule (winner_rule.hpp), as for an exhaustive tuning.
    const std::vector<std::size_t> order =
        rank_by_winner_rule(report_.results, ctx_.timing.tie_tolerance);
    for (std::size_t i : order) {
      const Config& c = report_.results[i].config;
      std::shared_ptr<Variant> v;
      if (auto it = built_.find(c.to_string()); it != built_.end()) {
        v = it->second;
      } else {
        auto timer = clock_.measure(&TuningTimes::compile);
        v = ctx_.variants.compile(dev_, src_, {c}).front().get();
      }
      // A point checked when it was evaluated (verify_all_) is not checked twice; a stored
      // one is, whatever its row says (the binary launched here is this process's).
      if (v->status.ok() && checks_.active() && checked_here_.count(c.to_string()) == 0) {
        const Status st = check(c, *v->kernel, &report_.results[i]);
        if (ends_tuning(st) || checks_.reference_failed()) return st;
        if (!st.ok()) {
          record_failed_check(report_.results[i], st, new_rows_);
          continue;
        }
      }
      if (v->status.ok()) {
        Selection s;
        s.config = c;
        s.variant = std::move(v);
        s.launched_on_args = launched_;
        return s;
      }
      report_.results[i].status = v->status;
    }
    if (report_.results.empty() && spent_) {
      return Status(StatusCode::timeout,
                    "the search budget was spent before any configuration was evaluated");
    }
    std::string msg =
        "every configuration the search evaluated failed on " + dev_.info().name + ":";
    for (const auto& r : report_.results)
      msg += "\n  {" + r.config.to_string() + "}: " + r.status.to_string();
    return Status(StatusCode::all_failed, msg);
  }

  const SessionContext& ctx_;
  const KernelDef& def_;
  Device& dev_;
  ArgList args_;
  const KernelSource& src_;
  TuningReport& report_;
  TimeLedger clock_;
  HookRunner hooks_;
  OutputCheck checks_;
  StoredResults stored_;
  const Config& heuristics_;
  const KeyForms& forms_;
  std::string key_text_;  // TuningReport::key
  ProgressNotifier progress_{ctx_.opts.progress, def_.name};
  Clock::time_point deadline_ = Clock::time_point::max();
  ClockWatch clock_watch_;
  std::uint64_t evaluations_ = 0;
  bool spent_ = false;
  bool launched_ = false;
  double objective_ms_ = 0;
  Status stop_;
  std::map<std::string, std::shared_ptr<Variant>> built_;
  std::vector<StoredResult> new_rows_;
  // AutotunerOptions::verify asks for every configuration: each point is checked before timing.
  const bool verify_all_ = ctx_.opts.verify == VerifyScope::every_configuration;
  std::set<std::string> checked_here_;  // points whose output this tuning checked
};

}  // namespace

Result<Selection> search_one_key(const SessionContext& ctx, Device& dev, ArgList args,
                                 const KeyForms& forms, const KernelSource& src,
                                 TuningReport& report) {
  return SearchSession(ctx, dev, args, forms, src, report).run();
}

}  // namespace tune::detail
