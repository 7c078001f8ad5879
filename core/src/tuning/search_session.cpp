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
#include "winner_stage.hpp"

namespace tune::detail {
namespace {

// Thrown through the strategy by the objective once a budget is spent, so that a strategy
// that ignores its budget still stops. Never escapes this file.
struct BudgetSpent {};

class SearchSession final : public WinnerStage {
 public:
  SearchSession(const SessionContext& ctx, Device& dev, ArgList args, const KeyForms& forms,
                const KernelSource& src, TuningReport& report)
      : WinnerStage(ctx, dev, args, forms, src, report) {
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
      // The winner rule (winner_rule.hpp), as for an exhaustive tuning.
      chosen =
          searched.ok() ? choose_winner(ranked(), /*verify=*/true) : Result<Selection>(searched);
    }
    chosen = finish(gpu, std::move(chosen));
    if (progress_.due(/*done=*/true))
      report_progress(/*done=*/true, chosen.ok() ? &chosen->config : nullptr);
    return chosen;
  }

 private:
  Status search() {
    const SearchStrategy& strategy = *def_.search.strategy;
    BatchObjective objective = [this](const std::vector<Config>& points) {
      return evaluate(points);
    };
    const auto t0 = Clock::now();
    Result<SearchResult> found = Status(StatusCode::internal, "search did not run");
    try {
      found = strategy.search_batches(def_.space, dev_.info(), objective, def_.search.budget,
                                      def_.search.seed);
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

  // A batch of points, one value each (+inf: failed), timed in order while the compiles of
  // those after it run on the variant cache's threads, so a batch's compiles overlap its timing
  // (strategies that propose one point at a time give batches of one). Throws BudgetSpent once
  // a budget is spent, the points measured before it kept in the report.
  std::vector<double> evaluate(const std::vector<Config>& points) {
    // Compiles only for the points the evaluation budget still allows (a seeded strategy may
    // propose more): the next point past it ends the search below.
    const std::uint64_t cap = def_.search.budget.max_evaluations;
    std::size_t allowed = points.size();
    if (cap != 0)
      allowed = std::min<std::uint64_t>(allowed, cap > evaluations_ ? cap - evaluations_ : 0);
    std::vector<Config> batch;
    for (const Config& point : points) {
      if (batch.size() == allowed) break;
      Config c = point;
      for (const auto& [name, value] : forms_.heuristics.params()) c.set(name, value);
      batch.push_back(std::move(c));
    }
    std::vector<VariantFuture> compiles = start_compiles(batch);
    std::vector<double> values;
    for (std::size_t k = 0; k < points.size(); ++k) {
      if (!stop_.ok() || spent_) throw BudgetSpent{};
      if (k == batch.size() || Clock::now() >= deadline_) {
        spent_ = true;
        throw BudgetSpent{};
      }
      ++evaluations_;
      const auto t0 = Clock::now();
      ConfigResult r = measure(batch[k], compiles[k]);
      report_.results.push_back(r);
      if (progress_.due(/*done=*/false)) report_progress(/*done=*/false, nullptr);
      objective_ms_ += ms_since(t0);
      if (ends_tuning(r.status) && stop_.ok())
        stop_ = Status(r.status).with_context("config {" + batch[k].to_string() + "}");
      if (!stop_.ok()) throw BudgetSpent{};
      values.push_back(r.stats.median);
    }
    return values;
  }

  // The compiles of the points of `batch` that no stored row answers (an empty future for
  // those), started together on the variant cache's threads.
  std::vector<VariantFuture> start_compiles(const std::vector<Config>& batch) {
    std::vector<std::size_t> at;
    std::vector<Config> todo;
    for (std::size_t k = 0; k < batch.size(); ++k)
      if (!stored_row(batch[k])) {
        at.push_back(k);
        todo.push_back(batch[k]);
      }
    std::vector<VariantFuture> out(batch.size());
    if (todo.empty()) return out;
    std::vector<VariantFuture> started = ctx_.variants.compile(dev_, src_, todo);
    for (std::size_t j = 0; j < at.size(); ++j) out[at[j]] = std::move(started[j]);
    return out;
  }

  // The stored row that answers `c` without a compile: none when there is none, or when every
  // configuration is checked and an ok row was not.
  const StoredResult* stored_row(const Config& c) {
    const auto& stored = stored_.rows();
    auto it = stored.find(c.to_string());
    if (it == stored.end()) return nullptr;
    if (verify_all_ && checks_.active() && it->second.status == StatusCode::ok &&
        !it->second.verified)
      return nullptr;
    return &it->second;
  }

  // Tells AutotunerOptions::progress where the search stands, from the points evaluated so
  // far: a search does not know in advance how many it will evaluate, so `candidates` grows
  // with them, and nothing races. The last event (done) has the chosen configuration as the
  // best (`winner`; null when the search chose none).
  void report_progress(bool done, const Config* winner) {
    TuningProgress p = progress_event(done);
    p.candidates = report_.results.size();
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
    progress_.send(p);
  }

  // One point: its stored row, or its compile (`compile`, started by start_compiles) timed.
  ConfigResult measure(const Config& c, const VariantFuture& compile) {
    ConfigResult r;
    r.config = c;
    r.stats.median = kInf;
    if (const StoredResult* row = stored_row(c)) {
      take_stored_row(*row, r);
      return r;
    }
    std::shared_ptr<Variant> v;
    {
      auto timer = clock_.measure(&TuningTimes::compile);  // the wait for it, not its length
      v = compile.valid() ? compile.get() : ctx_.variants.compile(dev_, src_, {c}).front().get();
    }
    r.compile_ms = v->compile_ms;
    Status st = v->status;
    if (st.ok()) {
      r.resources = v->kernel->resources();
      built_[c.to_string()] = v;
      if (verify_all_ && checks_.active()) st = check(*v->kernel, r);
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

  // One output check of `r` (WinnerStage::check_output); one that could not be made ends the
  // search (stop_).
  Status check(const CompiledKernel& kernel, ConfigResult& r) {
    const Status st = check_output(r, kernel);
    if ((ends_tuning(st) || checks_.reference_failed()) && stop_.ok())
      stop_ = Status(st).with_context("config {" + r.config.to_string() + "}");
    return st;
  }

  // Strict mode: the winner among the stored rows (every one the store holds for the key, as
  // the search would have read them), never a search; none is an error.
  Result<Selection> stored_winner() {
    report_.source = ResultSource::disk;
    for (const auto& [text, row] : stored_.rows()) {
      ConfigResult r;
      auto parsed = Config::parse(text);
      if (!parsed.ok()) continue;
      r.config = std::move(*parsed);
      r.stats.median = kInf;
      take_stored_row(row, r);
      report_.results.push_back(std::move(r));
    }
    const std::vector<std::size_t> order = ranked();
    if (order.empty()) return strict_refusal();
    return choose_winner(order, /*verify=*/true);
  }

  Status no_winner() const override {
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

  Clock::time_point deadline_ = Clock::time_point::max();
  ClockWatch clock_watch_;
  std::uint64_t evaluations_ = 0;
  bool spent_ = false;
  double objective_ms_ = 0;
  Status stop_;
};

}  // namespace

Result<Selection> search_one_key(const SessionContext& ctx, Device& dev, ArgList args,
                                 const KeyForms& forms, const KernelSource& src,
                                 TuningReport& report) {
  return SearchSession(ctx, dev, args, forms, src, report).run();
}

}  // namespace tune::detail
