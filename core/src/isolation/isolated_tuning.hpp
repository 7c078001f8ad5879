// Isolated tuning: one key tuned on a worker proxy (worker_pool.hpp) with copies of the call's
// buffers, the winner then compiled on the caller's device. The caller's buffers are never
// launched on, so a candidate that faults or hangs costs only the worker.
//
// Blocking: runs on the calling thread until the key is decided (tune_one_key on the proxy).
// Thread safety: as tune_one_key; the pool and the variant cache are shared safely.
#pragma once

#include <vector>

#include "tune/autotuner.hpp"
#include "tuning/session.hpp"
#include "worker_pool.hpp"

namespace tune::detail {

// A call's arguments with each buffer replaced by a copy on another device.
struct MirroredArgs {
  std::vector<Buffer> buffers;  // the copies, owned: the arguments point into them
  std::vector<ArgValue> args;
};

// The one copy step of the isolation path: each buffer of `args` downloaded from `from` (in
// queue order) into a new buffer of `to` of its size; a buffer passed twice is copied once and
// both arguments alias the copy. The first failed download, alloc or upload is the result.
Result<MirroredArgs> mirror_args(Device& from, Device& to, ArgList args);

// Tunes `forms.key` of ctx.def on `dev`'s worker proxy (made by `workers` from
// ctx.opts.isolation) with mirror_args' copies, then compiles the winner on `dev`. A kernel
// without a source for the device's language tunes in process (tune_one_key), as before.
// Fills `report` on success and on failure (the failure names the kernel and key).
// launched_on_args stays as the session answered, so that run() zeroes reset_to_zero buffers as
// after an in-process tuning.
Result<Selection> tune_isolated(const SessionContext& ctx, WorkerPool& workers, Device& dev,
                                ArgList args, const KeyForms& forms, TuningReport& report);

}  // namespace tune::detail
