// One key's tuning: from candidates to the winner, with a full report.
//
// Stages (numbered as in docs/architecture.md), each a function of its own: 1. the key's
// forms (the Autotuner's, call_keys.hpp); 2. candidates (candidates.hpp); 3. stored results
// (the only TuningStore reads and writes), then the plan (nothing to time, all stored, or time
// the rest); 4. timing (compile pool, warm-up, race, under the tuning budget); 5. the winner
// (winner_stage.hpp: a stored winner is compiled here if this call did not build it; the
// winner rule's first is verified before it is chosen, the next when it fails). A search
// strategy replaces stages 2 to 4 (search_session.cpp).
//
// Blocking: runs on the calling thread until the key is decided; compiles run on a pool.
// Never throws: user callbacks that throw become callback_failed (see user_code.hpp).
#pragma once

#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpu_lock.hpp"
#include "key_builder.hpp"
#include "timing_policy.hpp"
#include "tune/autotuner.hpp"
#include "variants.hpp"

namespace tune::detail {

// What a session borrows from the Autotuner that runs it.
struct SessionContext {
  const KernelDef& def;
  const AutotunerOptions& opts;
  const TimingPolicy& timing;  // opts.bench resolved for opts.effort (timing_policy.hpp)
  bool disabled = false;
  bool strict = false;  // AutotunerOptions::strict: a key without stored results is an error
  TuningStore* store = nullptr;  // null: nothing persists
  VariantCache& variants;
  const std::vector<int>& zero_idx;     // reset_to_zero argument positions
  const std::vector<int>& restore_idx;  // restore_value argument positions
  // Where the per-GPU timing locks live (gpu_lock.hpp); empty: AutotunerOptions::gpu_lock off.
  const std::string& gpu_lock_dir;
  // AutotunerOptions::check_bucket_edges resolved (TUNE_BUCKET_EDGES).
  bool check_bucket_edges = false;
};

// A new key in every form the stages need, built once per miss.
struct KeyForms {
  TuningKey key;
  Config heuristics;  // this call's heuristic parameter values
  std::string text;   // KeyBuilder text plus heuristic values (reports, the store)
  StoreKey store_key;
};

struct Selection {
  Config config;
  std::shared_ptr<Variant> variant;
  // Launches were made on the caller's buffers while tuning: run() zeroes the reset_to_zero
  // buffers before its own launch.
  bool launched_on_args = false;
};

// The per-GPU timing lock of `dev` for this key's timing (gpu_lock.hpp), or no lock when
// ctx.gpu_lock_dir is empty. Blocks while another tuning times on the GPU.
// Waiting ends at `deadline` (the tuning budget's), without the lock.
GpuLock lock_gpu_for_timing(const SessionContext& ctx, const Device& dev, const KeyForms& forms,
                            std::chrono::steady_clock::time_point deadline);

// Tunes `forms.key` on `dev` with the call's arguments. Fills `report` (status included) on
// success and on failure.
Result<Selection> tune_one_key(const SessionContext& ctx, Device& dev, ArgList args,
                               const KeyForms& forms, TuningReport& report);

// Compiles, verifies and times exactly `configs` with the tuning's rules (TimingPolicy,
// hooks, restores, resets, the race, the tuning budget) and returns one result each, in
// order. Reads and writes no store and remembers nothing (Autotuner::measure). `report`
// collects the time ledger. Never throws.
Result<std::vector<ConfigResult>> measure_configs(const SessionContext& ctx, Device& dev,
                                                  ArgList args, const KeyForms& forms,
                                                  std::span<const Config> configs,
                                                  TuningReport& report);

// The configuration TUNE_DISABLE would pick for `forms.key`, without timing anything: the
// first candidate left after heuristics and pruning that compiles (through the variant cache).
// Nothing is stored and no report is made: a later call tunes the key. Used while the caller's
// stream captures a graph (CaptureMiss::fallback). Never throws.
Result<Selection> first_candidate(const SessionContext& ctx, Device& dev, ArgList args,
                                  const KeyForms& forms);

// The error of strict mode (AutotunerOptions::strict) for a key with no stored winner:
// failed_precondition naming the kernel, the key, the device and how to tune it.
Status strict_refusal(const KernelDef& def, const DeviceInfo& info, const KeyForms& forms);

// Whether a failed tuning's error belongs to the definition (every caller would get it:
// shared with concurrent waiters, kept for background retries) rather than to the one call
// that met it (a callback that threw, a lost device, out of memory, a budget).
bool is_definition_error(const Status& st) noexcept;

}  // namespace tune::detail
