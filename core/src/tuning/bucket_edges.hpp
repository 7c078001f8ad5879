// Sound buckets (AutotunerOptions::check_bucket_edges): a winner tuned at one member of a
// bucketed key covers the bucket only after it held at the bucket's edges. Three stages, each
// a function: the members to check (edge_members), the call's arguments rebuilt for one member
// (args_at_member), and the check itself (check_bucket_edges: winner against runner-up at each
// edge, through measure_configs, so launches, hooks, verification and timing follow the
// tuning's own rules). What a split does to keys is bucket_splits.hpp. Internal to the core.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "session.hpp"
#include "tune/autotuner.hpp"

namespace tune::detail {

// The members of `spec`'s bucket `bucket` that a winner tuned at `call` must hold at: the
// smallest, the largest and a misaligned tail (the largest minus one), less `call` itself and
// duplicates, ascending. Empty for exact keys (a bucket of one) and for custom buckets (their
// members are not known: the function is opaque).
std::vector<std::int64_t> edge_members(const KeySpec& spec, std::int64_t bucket, std::int64_t call);

// A call's arguments with key argument `arg_index` set to `member` instead of `call`, on new
// buffers of this device (the call's own are never launched on). A buffer whose element count
// is a multiple of `call` holds count / call * member elements (at least its count); any other
// buffer keeps its count, allowed only when member <= call (a larger member's size for it is
// not known). Contents: the call's bytes, zeros past them. failed_precondition naming the
// culprit when the arguments cannot be rebuilt (a float key, an unknown buffer size);
// what Device::alloc, fill or copy return.
struct MemberArgs {
  std::vector<Buffer> buffers;
  std::vector<ArgValue> values;
};
Result<MemberArgs> args_at_member(Device& dev, ArgList args, int arg_index, std::int64_t call,
                                  std::int64_t member);

// The edge checks of a tuning that picked `tuned.winner` among `tuned.results` for
// `forms.key`: for each bucketed key argument, each edge member, the winner and the runner-up
// (the fastest other timed configuration) measured there. The bucket splits when the winner
// fails at an edge, or is slower than the runner-up beyond the race tolerance both in a first
// timing and in a confirmation that times the two in interleaved rounds (a load that changed
// between two batches of the first timing falls on both alike there). An edge whose
// arguments cannot be rebuilt is skipped, the reason recorded. Never throws.
// The edges' compile, verification and timing go into `tuned.times`.
BucketCheck check_bucket_edges(const SessionContext& ctx, Device& dev, ArgList args,
                               const KeyForms& forms, TuningReport& tuned);

}  // namespace tune::detail
