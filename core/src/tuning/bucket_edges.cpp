#include "bucket_edges.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>

#include "../timing_policy.hpp"
#include "bucket_splits.hpp"
#include "tune/log.hpp"

namespace tune::detail {

namespace {

// The smallest member of a next_pow2 bucket (the bucket value is its largest).
std::int64_t pow2_floor_member(std::int64_t bucket) {
  return bucket <= 2 ? bucket : bucket / 2 + 1;
}

// A scalar of `like`'s type holding `v`, or std::nullopt for a float type.
std::optional<ArgValue> integer_scalar(const ArgValue& like, std::int64_t v) {
  ArgValue a = like;
  switch (like.type) {
    case ElemType::i8:
    case ElemType::u8:
    case ElemType::i16:
    case ElemType::u16:
    case ElemType::i32:
    case ElemType::u32:
      a.bits = static_cast<std::uint32_t>(v) & ((std::uint64_t{1} << (8 * size_of(like.type))) - 1);
      return a;
    case ElemType::i64:
    case ElemType::u64:
      a.bits = static_cast<std::uint64_t>(v);
      return a;
    default:
      return std::nullopt;
  }
}

// The element count of one buffer at `member` (see args_at_member), or a reason it is unknown.
Result<std::uint64_t> count_at_member(const ArgValue& a, std::size_t index, std::int64_t call,
                                      std::int64_t member) {
  const auto c = static_cast<std::uint64_t>(call);
  const auto m = static_cast<std::uint64_t>(member);
  if (call > 0 && a.count % c == 0) return std::max(a.count, a.count / c * m);
  if (member <= call) return a.count;
  return Status(StatusCode::failed_precondition,
                "buffer argument " + std::to_string(index) + " holds " + std::to_string(a.count) +
                    " elements, not a multiple of the key's " + std::to_string(call) +
                    ": its size at " + std::to_string(member) + " is not known");
}

// The fastest timed configuration other than `winner`, or nullptr.
const ConfigResult* runner_up(const TuningReport& tuned) {
  const ConfigResult* best = nullptr;
  for (const auto& r : tuned.results) {
    if (!r.status.ok() || !std::isfinite(r.stats.median) || r.config == tuned.winner) continue;
    if (best == nullptr || r.stats.median < best->stats.median) best = &r;
  }
  return best;
}

// The timing that confirms a loss (see check_edge): `quick` with its showdown on, both
// contestants its finalists whatever the race found, in the standard effort's number of
// interleaved rounds (winner, runner-up, then runner-up, winner, ...), with no screen (two
// contestants) and no sustained turns (a loss beyond the tolerance is no near-tie).
TimingPolicy confirming_policy(const TimingPolicy& quick) {
  TimingPolicy p = quick;
  p.racing = true;
  p.showdown_rounds =
      std::max(quick.showdown_rounds, timing_preset(Effort::standard).showdown_rounds);
  p.showdown_finalists = std::max(p.showdown_finalists, 2);
  p.showdown_margin = 1e9;
  p.showdown_screen_rounds = 0;
  p.showdown_sustain_ms = 0;
  return p;
}

// Whether the winner `w` lost to the runner-up `r` beyond `tolerance`: slower even at the low
// end of its samples (p20) than the high end of the runner-up's (p80).
bool lost(const ConfigResult& w, const ConfigResult& r, double tolerance) {
  return w.status.ok() && r.status.ok() && w.stats.p20 > r.stats.p80 * (1.0 + tolerance);
}

// The winner and the runner-up measured at one member: the winner first. Non-ok when the
// measuring failed as a whole.
using Pair = Result<std::vector<ConfigResult>>;

// The edge's outcome from one measurement of the pair: the winner's status and the medians.
void read_pair(const std::vector<ConfigResult>& measured, EdgeCheck& e) {
  const ConfigResult& w = measured[0];
  e.winner = w.status;
  e.winner_ns = w.status.ok() ? w.stats.median : 0;
  e.runner_up_ns = measured.size() > 1 && measured[1].status.ok() ? measured[1].stats.median : 0;
}

// Whether a measurement of the pair says nothing of the winner, so the edge is skipped (with
// the reason) rather than judged: the measuring failed as a whole (a user callback threw, the
// device was lost, host memory ran out: the winner's own status is what breaks a bucket, not
// the harness's), or both contestants failed verification at once (the expectations, a
// verify hook or `expected` callback holding the call's own outputs, do not follow the
// arguments).
bool skipped_measurement(const Pair& measured, EdgeCheck& e) {
  if (!measured.ok()) {
    e.skipped = "measuring the edge failed: " + measured.status().to_string();
    return true;
  }
  if (measured->size() > 1 && (*measured)[0].status.code() == StatusCode::wrong_output &&
      (*measured)[1].status.code() == StatusCode::wrong_output) {
    e.skipped = "the winner and the runner-up both fail verification here (" +
                (*measured)[0].status.message() +
                "): the kernel's expected outputs do not follow its arguments";
    return true;
  }
  return false;
}

// One edge: the winner (and the runner-up, when there is one) measured at `member`; it breaks
// the bucket when the winner fails there, at once, or loses beyond `tolerance` in two
// measurements: the first (`ctx`'s timing: a race, in which a change of the machine's load
// between two batches may decide) and a confirmation in interleaved rounds (`confirming`'s
// timing), so that a load that came and went falls on both alike. A loss the confirmation
// does not hold is logged and breaks nothing; the medians reported are the confirmation's.
EdgeCheck check_edge(const SessionContext& ctx, const SessionContext& confirming, Device& dev,
                     ArgList args, const KeyForms& forms, int arg_index, std::int64_t call,
                     std::int64_t member, const TuningReport& tuned, double tolerance,
                     TuningReport& ledger) {
  EdgeCheck e;
  e.arg = ctx.def.signature.decls()[static_cast<std::size_t>(arg_index)].name;
  e.value = member;
  auto rebuilt = args_at_member(dev, args, arg_index, call, member);
  if (!rebuilt.ok()) {
    e.skipped = rebuilt.status().message();
    return e;
  }
  std::vector<Config> configs{tuned.winner};
  const ConfigResult* second = runner_up(tuned);
  if (second != nullptr) configs.push_back(second->config);
  KeyForms at = forms;
  at.text = forms.text + " at " + e.arg + "=" + std::to_string(member);
  Pair measured = measure_configs(ctx, dev, rebuilt->values, at, configs, ledger);
  if (skipped_measurement(measured, e)) return e;
  read_pair(*measured, e);
  if (measured->size() > 1 && lost((*measured)[0], (*measured)[1], tolerance)) {
    const double first_ns = e.winner_ns, first_runner_up_ns = e.runner_up_ns;
    Pair again = measure_configs(confirming, dev, rebuilt->values, at, configs, ledger);
    if (skipped_measurement(again, e)) return e;
    read_pair(*again, e);
    e.broke = lost((*again)[0], (*again)[1], tolerance);
    if (e.winner.ok() && !e.broke)
      log(LogLevel::info, "kernel " + ctx.def.name + ": {" + tuned.winner.to_string() +
                              "} lost at " + e.arg + "=" + std::to_string(member) + " (" +
                              std::to_string(first_ns) + " ns against " +
                              std::to_string(first_runner_up_ns) +
                              " ns), not confirmed in interleaved rounds: the bucket holds");
  }
  e.broke = e.broke || !e.winner.ok();
  return e;
}

}  // namespace

std::vector<std::int64_t> edge_members(const KeySpec& spec, std::int64_t bucket,
                                       std::int64_t call) {
  if (spec.bucket != Bucket::next_pow2 || bucket <= 1) return {};
  std::vector<std::int64_t> m{pow2_floor_member(bucket), bucket, bucket - 1};
  std::sort(m.begin(), m.end());
  m.erase(std::unique(m.begin(), m.end()), m.end());
  std::erase_if(m, [&](std::int64_t v) { return v == call || v < pow2_floor_member(bucket); });
  return m;
}

Result<MemberArgs> args_at_member(Device& dev, ArgList args, int arg_index, std::int64_t call,
                                  std::int64_t member) {
  MemberArgs out;
  out.values.assign(args.begin(), args.end());
  ArgValue& key_arg = out.values[static_cast<std::size_t>(arg_index)];
  if (key_arg.kind == ArgKind::scalar) {
    auto v = integer_scalar(key_arg, member);
    if (!v)
      return Status(StatusCode::failed_precondition,
                    "key argument " + std::to_string(arg_index) + " is a " +
                        std::string(to_string(key_arg.type)) + " scalar: no bucket member of it");
    key_arg = *v;
  }
  for (std::size_t i = 0; i < out.values.size(); ++i) {
    ArgValue& a = out.values[i];
    if (a.kind != ArgKind::buffer) continue;
    std::uint64_t count = 0;
    if (static_cast<int>(i) == arg_index) {
      count = static_cast<std::uint64_t>(member);
    } else {
      TUNE_ASSIGN_OR_RETURN(count, count_at_member(a, i, call, member));
    }
    const std::uint64_t bytes = std::max<std::uint64_t>(4, (count * size_of(a.type) + 3) / 4 * 4);
    TUNE_ASSIGN_OR_RETURN(Buffer b, dev.alloc(bytes));
    TUNE_RETURN_IF_ERROR(dev.fill(*b, 0, bytes));
    const std::uint64_t keep = std::min(bytes, a.buffer->size_bytes());
    TUNE_RETURN_IF_ERROR(dev.copy(*b, *a.buffer, keep));
    a.buffer = b.get();
    a.count = count;
    out.buffers.push_back(std::move(b));
  }
  TUNE_RETURN_IF_ERROR(dev.synchronize());
  return out;
}

BucketCheck check_bucket_edges(const SessionContext& ctx, Device& dev, ArgList args,
                               const KeyForms& forms, TuningReport& tuned) {
  BucketCheck check;
  if (is_exact_member(forms.key)) return check;  // a split bucket's member: no bucket left
  TuningReport ledger;
  // The edges are a check, not a tuning: quick's budgets (unless the options set them), which
  // still tell a failure or a clear loss from the winner's p20 and the runner-up's p80.
  const TimingPolicy quick = resolve_timing(ctx.opts.bench, Effort::quick);
  // Nor part of the tuning's progress: AutotunerOptions::progress hears the tuning (its best so
  // far ends at the winner's median), never the edges' timings at other sizes.
  AutotunerOptions quiet = ctx.opts;
  quiet.progress = nullptr;
  const SessionContext at_edges{
      ctx.def,      quiet,        quick,           ctx.disabled,     ctx.strict, ctx.store,
      ctx.variants, ctx.zero_idx, ctx.restore_idx, ctx.gpu_lock_dir, false};
  const TimingPolicy interleaved = confirming_policy(quick);
  const SessionContext confirming{
      ctx.def,      quiet,        interleaved,     ctx.disabled,     ctx.strict, ctx.store,
      ctx.variants, ctx.zero_idx, ctx.restore_idx, ctx.gpu_lock_dir, false};
  for (std::size_t i = 0; i < ctx.def.key.size(); ++i) {
    const KeySpec& spec = ctx.def.key[i];
    const std::int64_t bucket = forms.key.values[i];
    const int arg_index = ctx.def.signature.index_of(spec.arg);
    const ArgValue& a = args[static_cast<std::size_t>(arg_index)];
    const std::int64_t call =
        a.kind == ArgKind::buffer ? static_cast<std::int64_t>(a.count) : a.as_int();
    const auto members = edge_members(spec, bucket, call);
    if (members.empty()) continue;
    if (!check.range.empty()) check.range += ',';
    check.range += spec.arg + "=" + std::to_string(std::min(pow2_floor_member(bucket), call)) +
                   ".." + std::to_string(bucket);
    for (std::int64_t m : members) {
      try {
        check.edges.push_back(check_edge(at_edges, confirming, dev, args, forms, arg_index, call, m,
                                         tuned, ctx.timing.race_tolerance, ledger));
      } catch (const std::exception& ex) {
        EdgeCheck e;
        e.arg = spec.arg;
        e.value = m;
        e.skipped = std::string("edge check failed: ") + ex.what();
        check.edges.push_back(std::move(e));
      }
      EdgeCheck& e = check.edges.back();
      check.split = check.split || e.broke;
    }
  }
  tuned.times.compile += ledger.times.compile;
  tuned.times.verify += ledger.times.verify;
  tuned.times.benchmark += ledger.times.benchmark;
  return check;
}

}  // namespace tune::detail
