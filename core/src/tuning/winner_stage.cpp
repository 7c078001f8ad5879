#include "winner_stage.hpp"

#include "decision_record.hpp"
#include "winner_rule.hpp"

namespace tune::detail {

WinnerStage::WinnerStage(const SessionContext& ctx, Device& dev, ArgList args,
                         const KeyForms& forms, const KernelSource& src, TuningReport& report)
    : ctx_(ctx),
      def_(ctx.def),
      dev_(dev),
      args_(args),
      forms_(forms),
      src_(src),
      report_(report),
      clock_(report.times),
      hooks_(dev, ctx.def, args, ctx.zero_idx, ctx.restore_idx),
      checks_(dev, ctx.def, args, ctx.variants, src),
      stored_(ctx.store, forms.store_key, ctx.def, forms.heuristics),
      progress_(ctx.opts.progress, ctx.def.name),
      verify_all_(ctx.opts.verify == VerifyScope::every_configuration) {}

std::vector<std::size_t> WinnerStage::ranked() const {
  return rank_by_winner_rule(report_.results, ctx_.timing.tie_tolerance);
}

// A stored winner is checked here whatever its row says (the binary launched here is this
// process's): one stored as not checked is stored again as verified, or as wrong_output.
Result<Selection> WinnerStage::choose_winner(const std::vector<std::size_t>& order, bool verify) {
  for (std::size_t i : order) {
    ConfigResult& r = report_.results[i];
    std::shared_ptr<Variant> v = variant_of(i);
    if (v->status.ok() && verify && checks_.active() && !checked_here(r.config)) {
      const Status st = check_output(r, *v->kernel);
      if (ends_tuning(st) || checks_.reference_failed()) return st;
      if (!st.ok()) {
        record_failed_check(r, st, new_rows_);
        ++failed_;
        continue;
      }
    }
    if (v->status.ok()) {
      Selection s;
      s.config = r.config;
      s.variant = std::move(v);
      s.launched_on_args = launched_;
      return s;
    }
    // A stored winner that no longer compiles: recorded (and stored) as failed.
    r.status = v->status;
    r.stats = SampleStats{};
    r.stats.median = kInf;
    ++failed_;
    if (r.from_store) new_rows_.push_back(row_of(r));
  }
  return no_winner();
}

std::shared_ptr<Variant> WinnerStage::variant_of(std::size_t i) {
  ConfigResult& r = report_.results[i];
  if (auto it = built_.find(r.config.to_string()); it != built_.end()) return it->second;
  auto timer = clock_.measure(&TuningTimes::compile);
  auto v = ctx_.variants.compile(dev_, src_, {r.config}).front().get();
  r.compile_ms = v->compile_ms;
  if (v->status.ok()) r.resources = v->kernel->resources();
  return v;
}

Status WinnerStage::check_output(ConfigResult& r, const CompiledKernel& kernel) {
  Status st;
  {
    auto timer = clock_.measure(&TuningTimes::verify);
    launched_ = true;  // the check launches on the caller's buffers
    st = checks_.verify(hooks_, kernel, r.config);
  }
  if (ends_tuning(st) || checks_.reference_failed()) return st;
  r.verified = true;
  checked_here_.insert(r.config.to_string());
  if (st.ok()) store_verified(r);
  return st;
}

void WinnerStage::store_verified(const ConfigResult& r) {
  const std::string text = r.config.to_string();
  for (StoredResult& row : new_rows_) {
    if (row.config != text) continue;
    row.verified = true;
    return;
  }
  if (!r.from_store) return;
  const auto& stored = stored_.rows();
  auto it = stored.find(text);
  if (it == stored.end() || it->second.verified) return;
  StoredResult row = it->second;
  row.verified = true;
  new_rows_.push_back(std::move(row));
}

Result<Selection> WinnerStage::finish(GpuLock& gpu, Result<Selection> out) {
  Status finished = hooks_.finish(out.status());
  gpu.release();
  const bool decided = out.ok() && record_winner(out->config.to_string());
  // Rows rewritten without a new decision (a failed check, a compile error, a re-timing of a
  // tuning that failed) keep the record their stored row carries.
  if (!decided) keep_decisions(stored_.rows(), new_rows_);
  save_rows();
  if (out.ok() && !finished.ok()) return finished;
  return out;
}

bool WinnerStage::record_winner(const std::string& winner) {
  const auto last = last_decision(stored_.rows());
  const auto record =
      record_decision(report_, winner, ranked(), last ? std::optional(last->second) : std::nullopt,
                      last ? last->first : std::string());
  return record && attach_decision(*record, winner, stored_.rows(), new_rows_);
}

void WinnerStage::save_rows() {
  std::erase_if(new_rows_,
                [&](const StoredResult& r) { return checks_.untrusted().count(r.config); });
  if (new_rows_.empty()) return;
  auto timer = clock_.measure(&TuningTimes::store);
  stored_.save(new_rows_);
  new_rows_.clear();
}

Status WinnerStage::strict_refusal() const {
  return detail::strict_refusal(def_, dev_.info(), forms_);
}

TuningProgress WinnerStage::progress_event(bool done) const {
  TuningProgress p;
  p.kernel = def_.name;
  p.key = forms_.text;
  p.best_ns = kInf;
  p.elapsed_ms = ms_since(clock_.start());
  p.done = done;
  return p;
}

}  // namespace tune::detail
