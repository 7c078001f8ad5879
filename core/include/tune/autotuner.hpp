// Autotuner: tunes one kernel per key on first use and launches the winner afterwards.
//
// On a call: compute the key (bucketed key arguments, buffer element types, heuristic values,
// device). A known key launches the remembered variant: no lock, no allocation. A new key
// prunes the space (constraints, early prune, perf model), asks the TuningStore for stored
// timings, compiles and times the rest, picks the lowest median, remembers it and launches it.
// A configuration that fails (compile error, resource limit, launch failure, timeout, wrong
// output) is recorded with its reason and timed as +inf; only when all fail is the call an
// error, and that error lists every configuration's reason.
//
// Thread safety: run() may be called concurrently from any number of threads. Concurrent calls
// with the same new key tune once; the others wait for that result. When that tuning fails
// for a reason of its own caller (a callback that threw, a lost device, out of memory, a
// tuning budget), the waiters tune the key themselves; when the definition itself is at fault
// (every configuration failed to compile, nothing passes the constraints) they share its
// error. A failed key is never remembered: the next call tunes it again.
//
// Lifetime: the Autotuner holds compiled variants for every Device it has seen and may run
// background tunings on it; destroy it (or call release()) before destroying such a Device.
// Its destructor waits for background tunings and for every call that is tuning or waiting
// for a tuning (calls that arrive meanwhile get an error); a call on a key already tuned must
// not race with the destructor (as with any object, that is the caller's to order).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tune/benchmark.hpp"
#include "tune/effort.hpp"
#include "tune/fallback.hpp"
#include "tune/kernel.hpp"
#include "tune/store.hpp"

namespace tune {

// Where a call's configuration came from.
// single: one candidate remained, nothing to time; disabled: tuning is off (TUNE_DISABLE);
// shared: decided elsewhere (another process, rank or device) and given to Autotuner::adopt;
// empty: an empty problem (KernelDef::dims gives a grid with a zero dimension for every
// configuration, as for n = 0): nothing to time, the first candidate stands (kept in memory,
// never stored) and its launches launch nothing, on every backend; fallback: no decision of
// this device and toolchain, served by the device-family fallback chain (tune/fallback.hpp,
// TuningReport::fallback says which level).
enum class ResultSource : std::uint8_t {
  memory,
  disk,
  tuned,
  single,
  disabled,
  shared,
  empty,
  fallback
};
std::string_view to_string(ResultSource s) noexcept;

struct ConfigResult {
  Config config;
  Status status;      // ok, or why this configuration was dropped
  SampleStats stats;  // nanoseconds; median = +inf when status is not ok
  KernelResources resources;
  double compile_ms = 0;
  bool from_store = false;  // timing read back from the TuningStore, not measured now
  // For a from_store row served by a bundle (tune/bundle.hpp), the bundle's path; else empty.
  // For a fallback pick read from a bundle, that bundle's path.
  std::string origin;
  // The level of the fallback chain (tune/fallback.hpp) this configuration was tried at; none
  // outside a ResultSource::fallback report.
  FallbackLevel fallback = FallbackLevel::none;
  bool raced_out = false;  // dropped early: slower than the leader beyond noise
  bool settled = false;    // stopped early: within BenchOptions::tolerance of the leader
  // Its output was checked against the reference or `verify` (passed unless status is
  // wrong_output), in this tuning or, for a row read back from the store (from_store), by the
  // process that stored it. By default only what can win is checked (README, "Only what can
  // win is verified"): a configuration the winner rule never reached stays not checked, its
  // status ok on its timing alone; AutotunerOptions::verify = every_configuration checks all.
  bool verified = false;
  // The three states reports show: verified, not_checked or wrong_output (tune/store.hpp).
  Verification verification() const noexcept { return verification_of(status.code(), verified); }
};

// Where a tuning's wall time went, in milliseconds; the parts sum to wall_ms. Compiles run on
// a pool while configurations are timed, so `compile` counts only the time the tuning thread
// waited for them.
struct TuningTimes {
  double candidates = 0;  // constraints, heuristics, early prune, perf model
  double store = 0;       // reading and writing the TuningStore
  double compile = 0;     // waiting for compiles
  double verify = 0;      // verification launches and KernelDef::verify
  double benchmark = 0;   // warm-up and timed launches, hooks and buffer resets included
  double strategy = 0;    // a SearchStrategy's own work between evaluations
  double overhead = 0;    // everything else: the tuner's own bookkeeping
};

// One edge of a key bucket, checked before the bucket's winner covers it
// (AutotunerOptions::check_bucket_edges): the winner and the runner-up launched (and verified,
// when the kernel checks outputs) with the key argument at that member of the bucket.
struct EdgeCheck {
  std::string arg;         // the key argument
  std::int64_t value = 0;  // the bucket member launched
  Status winner;           // the winner's outcome there: launch, verification, timing
  double winner_ns = 0;    // medians there; 0 when not timed
  double runner_up_ns = 0;
  std::string skipped;  // why the edge was not checked (its arguments cannot be rebuilt)
  bool broke = false;   // the winner failed here or lost beyond the race tolerance
};

// What the edge checks of a tuning found. `split`: the winner failed or lost beyond the race
// tolerance at an edge, so the bucket no longer shares one decision (its members are keyed
// exactly from then on, in this process and every process sharing the store).
struct BucketCheck {
  std::vector<EdgeCheck> edges;
  bool split = false;
  std::string range;  // the members the decision was checked on, "n=4097..8192"
};

struct TuningReport {
  Status status;  // ok, or why this tuning failed (a listener hears failed tunings too)
  std::string kernel;
  std::string key;     // KeyBuilder text plus heuristic values
  std::string device;  // DeviceInfo::fingerprint()
  ResultSource source = ResultSource::tuned;
  // The search strategy that chose the configurations evaluated (SearchStrategy::name(): the
  // one KernelDef::search names, or the one AutotunerOptions::effort chose); `results` are
  // then in the order they were evaluated. Empty when every candidate was timed.
  std::string strategy;
  std::vector<ConfigResult> results;  // every candidate that was considered
  std::size_t pruned = 0;             // candidates removed before timing
  bool partial = false;               // the tuning budget ran out before every candidate was timed
  Config winner;
  // Which level of the fallback chain served the winner (ResultSource::fallback), and the
  // device fingerprint whose decision it was (this device's for nearest_key and
  // default_config); none and empty otherwise.
  FallbackLevel fallback = FallbackLevel::none;
  std::string fallback_device;
  double wall_ms = 0;  // total tuning time of this key, compiling included
  TuningTimes times;
  ShowdownReport showdown;  // the finalists' re-timing (TimingExpert::showdown_rounds)
  // What kept the cache cold while timing: BenchOptions::cache, or flush where rotating input
  // copies fell back to it (over rotate_max_bytes, out of device memory, ...: the warning
  // logged names the reason). For a search strategy's tuning (KernelDef::search),
  // BenchOptions::cache as asked.
  TimingCache timing_cache = TimingCache::flush;
  BucketCheck bucket;  // the edge checks of a bucketed key (empty: none made)
  // Calls whose cached winner failed to launch for a member of the key's bucket and that
  // launched the next stored candidate instead (winner rule's order), one line per distinct
  // event: "{BM=64} failed at n=7000 (launch_failed: ...); {BM=32} launched instead". At most
  // 16 kept.
  std::vector<std::string> launch_fallbacks;
  std::string to_string() const;  // the TUNE_PRINT_AUTOTUNING text
};

using TuningListener = std::function<void(const TuningReport&)>;

// Where a tuning stands while it runs (AutotunerOptions::progress). Counts only grow within
// one tuning; the last event (done) has the report's totals and its winner as `best`. A
// search strategy's tuning (KernelDef::search) counts the points evaluated so far as its
// candidates (it does not know in advance how many it will evaluate) and races none.
struct TuningProgress {
  std::string kernel;
  std::string key;             // TuningReport::key
  std::size_t candidates = 0;  // after pruning, stored ones included (report.results.size())
  std::size_t stored = 0;      // covered by stored rows: not compiled or timed now
  std::size_t compiled = 0;    // compiles finished now, failed ones included
  std::size_t timed = 0;       // measured now: at least one timed sample
  std::size_t raced_out = 0;   // dropped as slower than the leader beyond noise
  std::size_t failed = 0;      // dropped with an error (compile, verify, launch, timing)
  double best_ns = 0;          // median of the fastest so far; +inf when none yet
  Config best;                 // that configuration
  double elapsed_ms = 0;       // since the tuning began
  bool done = false;           // the tuning's last event
};

using ProgressListener = std::function<void(const TuningProgress&)>;

// sync: a call with a new key tunes, then launches (the default).
// background: a call with a new key launches at once with the config of the nearest tuned
// key (same device, buffer types and heuristic values; least distance over the key arguments
// in log2 space) and tunes the new key on a background thread, on copies of the call's
// buffers; later calls switch to the tuned winner. With no tuned key yet, it tunes as sync.
// Background timings share the device's queue with the caller's own work.
enum class TuningMode : std::uint8_t { sync, background };

// What a call does with a new key while its target stream is capturing a graph
// (Device::capturing): tuning there would break the capture (its launches, waits and
// timings are not allowed inside one).
// fallback: launch the configuration of the nearest tuned key (as TuningMode::background
// picks it), else the first candidate left after heuristics and pruning (what TUNE_DISABLE
// picks), compiled (from the variant cache when it was compiled before) but never timed, and
// not remembered: a later call outside the capture tunes the key. The captured graph keeps
// that configuration. With isolation on (IsolationOptions) only the nearest tuned key stands
// in: a candidate never run or verified would run in the application's context, which is what
// isolation is there to prevent; with no tuned key of the device, the call fails as `error`
// does.
// error: the call fails with failed_precondition naming the kernel, the key and the stream.
// Tune first (Autotuner::tune outside the capture) to capture the tuned configuration.
enum class CaptureMiss : std::uint8_t { fallback, error };

// Isolated tuning (README, "Isolated tuning"): candidates are compiled and timed in a worker
// process on the same device, with copies of the call's buffers; only the winner comes back and
// is compiled here. A candidate that faults (illegal address, trap) or hangs poisons only the
// worker's context: the worker is killed and restarted, that candidate is recorded as failed,
// and the tuning picks among the others. Callbacks (dims, hooks, verify, module_globals) still
// run in this process. Costs a worker start on the first tuning (a device open) and a copy of
// the arguments per tuned key. Works in both TuningModes.
struct IsolationOptions {
  bool enabled = false;
  // The worker executable. Empty: TUNE_WORKER, else the tune-worker installed with libtune.
  std::string worker;
  // What the worker passes to tune::open_device. Empty: DeviceInfo::reopen_spec of the device.
  std::string device;
  // A worker that does not answer a call within this long (plus the TimingPlan's timeout_ms
  // for a timing) is taken for hung, killed and restarted.
  double call_timeout_ms = 60000;
  double compile_timeout_ms = 300000;  // the same for one compile
};

// Which configurations have their output checked while tuning a key (KernelDef::verify and
// KernelDef::reference; nothing is checked when the kernel has neither).
// winner_candidates: only what can win (README, "Only what can win is verified"): the winner
// rule's pick, then the next when it fails, until one passes; the others are timed and stored
// as not checked (ConfigResult::verification, the store's rows, `tune cache show`). A stored
// row is checked before it is first used as the winner, in whichever process uses it: one that
// fails is stored as wrong_output and the next takes its place.
// every_configuration: Kernel Tuner's semantics: every configuration timed has its output
// checked first (one more launch each, and a download for a host reference), and one that
// fails is never timed (wrong_output). Stored rows that were not checked are timed and checked
// again. Autotuner::measure always checks every configuration.
enum class VerifyScope : std::uint8_t { winner_candidates, every_configuration };

// Drift re-validation (docs/caches.md, "Drift re-validation"): one hit in `sample_period` of
// a key whose decision has a timed median is launched through Device::time (one repetition,
// no cache flush, no resets: the call's own launch, timed with the device's timestamps) on
// the device's queue; Device::time returns only when that launch has finished, so a sampled
// hit waits for the device (the other hits add a relaxed load and store of a countdown,
// approximate when several threads hit one key). Hits on a stream or command-buffer target are
// never sampled: their launch stays asynchronous on the caller's target. When a sample exceeds
// `threshold` times the decided median, the key is re-validated once, on a background thread on
// copies of the call's buffers: the winner and the runner-up its decision record names are timed
// again with the tuning's rules; when the runner-up is now faster it becomes the key's winner (the
// record's flip counter counts it). Further drifting samples of the key start nothing until a new
// decision is published in this process (a flip, adopt(), a tuning after release()).
struct DriftOptions {
  // One hit in this many is timed (0: none, the default).
  std::uint32_t sample_period = 0;
  // A sample drifts when its time exceeds threshold x the decided median (finite, > 1). The
  // sample runs warm (no flush) while the decision was timed cold, so a sample above it is
  // slower than the decision by at least that much.
  double threshold = 1.5;
};

struct AutotunerOptions {
  // What a tuning may spend (tune/effort.hpp): the timing budgets and a search's evaluations,
  // unless `bench` or KernelDef::search set them.
  Effort effort = Effort::standard;
  BenchOptions bench;
  VerifyScope verify = VerifyScope::winner_candidates;
  // Where results persist. Null: default_store() (TUNE_CACHE decides) when `persistent`,
  // else memory only.
  std::shared_ptr<TuningStore> store;
  bool persistent = true;
  // Read-only bundles of decisions shipped with the application (tune/bundle.hpp), looked up
  // in order after `store` (or default_store()) and before the TUNE_BUNDLES list, for every
  // configuration that store does not hold. Never written. Empty with TUNE_BUNDLES unset:
  // `store` alone, as before.
  std::vector<std::string> bundles;
  // Called after each tuning, successful or not (TuningReport::status), on the tuning thread,
  // after the result is published (so a slow listener holds up no caller but its own). An
  // exception it throws is logged and ignored.
  TuningListener listener;
  // Called while a key is tuned, on the tuning thread (the caller's, or the background
  // tuning thread): after compiles finish and timing rounds, at most every 100 ms, and once
  // more when the winner is decided (TuningProgress::done), before the listener. Not called
  // for keys found in memory, for TUNE_DISABLE or a single candidate. Keep it short: the
  // tuning waits for it. An exception it throws is ignored (logged once per tuning).
  ProgressListener progress;
  // Print each report to stderr. Defaults to TUNE_PRINT_AUTOTUNING=1 in the environment.
  std::optional<bool> print;
  // Bounds a tuning call's wall time, compiles included: at the deadline the call takes the
  // best configuration timed so far (the report says partial) and leaves compiles still
  // running to finish in the background for a later call; candidates never timed are not
  // stored, so a later call or process times them. The call may overrun by one timing batch
  // or warm-up of one configuration and the winner's own launch (a few ms with the default
  // budgets). When nothing was timed by the deadline the call fails (timeout) naming the
  // budget, and a later call goes on from what compiled meanwhile. Candidates are taken in
  // the order their compiles finish, so under a tight budget which ones get timed depends on
  // compile times. 0: no limit.
  double tuning_budget_ms = 0;
  // Never time: use the first candidate that remains after heuristics and pruning. Defaults
  // to TUNE_DISABLE=1 in the environment.
  std::optional<bool> disable;
  // Strict mode, for production runs that must not tune: a key with no stored winner (in
  // memory or in the store) fails with failed_precondition naming the kernel, the key and the
  // device, instead of tuning (with `fallback` keep or background, the fallback chain serves
  // it instead, never tuning); stored keys work as usual (stored rows that cover only part of
  // the candidates decide among themselves). `disable` wins (nothing is timed either way);
  // a single-candidate space needs no winner; background mode acts as sync (a stored key is
  // read on the calling thread, a missing one is an error, never the nearest key's config);
  // warmup() (compiles only) is unaffected. Defaults to TUNE_STRICT=1 in the environment.
  std::optional<bool> strict;
  // The per-GPU timing lock (README, "One GPU, one timing at a time"): while a tuning times
  // candidates it holds an exclusive flock on <locks>/gpu-<DeviceInfo::uuid>.lock, <locks>
  // being $XDG_RUNTIME_DIR/libtune/locks, else /tmp/libtune-<uid>/locks (a private directory of
  // this user; never the cache directory, so TUNE_CACHE=off writes nothing there and processes
  // with different caches still take turns), so two processes of this user never time on one
  // GPU at once. Waiting logs every 10 s and
  // gives up after 10 minutes (then times unlocked, with a warning). Never taken on a cache
  // hit, for stored keys, TUNE_DISABLE, strict mode or a single candidate. Defaults to
  // TUNE_GPU_LOCK in the environment, on when unset.
  std::optional<bool> gpu_lock;
  TuningMode mode = TuningMode::sync;
  // A key with no decision for this device and toolchain (tune/fallback.hpp): tune it now
  // (tune, the default), or serve the device-family fallback chain and never tune (keep) or
  // tune in the background and switch (background). With keep or background, TuningMode::
  // background's nearest-key stand-in is the chain's nearest_key level. Defaults to
  // TUNE_FALLBACK in the environment.
  std::optional<FallbackPolicy> fallback;
  // Record mode (tune/record.hpp): the file that gets one JSON line per key served by the
  // fallback chain or not served at all, to be tuned offline (tune_recorded). Empty: the
  // TUNE_RECORD file, else no recording.
  std::string record;
  CaptureMiss capture_miss = CaptureMiss::fallback;
  IsolationOptions isolation;
  // Sound buckets: before a winner tuned at one member of a bucketed key (KeySpec::pow2)
  // covers the bucket, it and the runner-up are launched, verified and timed at the bucket's
  // smallest and largest members and a misaligned tail (the largest minus one), on buffers
  // sized for that member. A winner that fails there, or is slower than the runner-up beyond
  // the race tolerance both in a first timing and in a confirmation timing the two in
  // interleaved rounds, splits the bucket: its members are keyed exactly from then on (stored,
  // so other processes sharing the store see it), each a hit once tuned. TuningReport::bucket
  // says what was checked. Not made for tunings in an isolated worker (`isolation`). Defaults
  // to TUNE_BUCKET_EDGES in the environment, on when unset.
  std::optional<bool> check_bucket_edges;
  DriftOptions drift;  // sampled timing of hits and re-validation on drift (off by default)
};

class Autotuner {
 public:
  // Validates the definition and the options: non-empty space, key and hook arguments that
  // exist in the signature, a source for at least one language, dims set, parameter names
  // free of collisions, budgets and timing options finite and in range, perf-model and search
  // limits that make sense. Messages name the culprit.
  static Result<std::unique_ptr<Autotuner>> make(KernelDef def, AutotunerOptions opts = {});
  ~Autotuner();
  Autotuner(const Autotuner&) = delete;
  Autotuner& operator=(const Autotuner&) = delete;

  // Launches the best configuration for these arguments, tuning first on a new key. Blocks
  // while tuning; on a known key returns once the launch is enqueued (a hit sampled for drift,
  // AutotunerOptions::drift, once it has finished).
  Status run(Device& dev, ArgList args);
  Status run(Device& dev, std::initializer_list<ArgValue> args) {
    return run(dev, ArgList(args.begin(), args.size()));
  }

  // run() with the launch on `target` (device.hpp's LaunchTarget: an application's stream or
  // command buffer; LaunchTarget::queue() is run(dev, args)).
  // A known key: one Device::launch_on(target), asynchronous, no lock, no allocation, no
  // synchronisation (a capturing stream captures it like any launch).
  // A new key: when `target` is capturing a graph, AutotunerOptions::capture_miss decides.
  // Otherwise the device's queue waits for the work already queued on `target`
  // (queue_waits_for: tuning sees the caller's data), the key is tuned on the device's own
  // queue exactly as run(dev, args) tunes (restores, resets, L2 flush, libtune's own scratch
  // buffers), `target` then waits for the device's queue (target_waits_for_queue: work the
  // caller queues later sees the tuning's effects undone), and the winner launches on
  // `target`. TuningMode::background copies the caller's buffers after the same wait.
  Status run(Device& dev, ArgList args, const LaunchTarget& target);

  // Tunes (when the key is new) without launching; returns the chosen configuration.
  Result<Config> tune(Device& dev, ArgList args);
  // tune() on data produced by work queued on `target`, ordered as run(dev, args, target)
  // orders a new key. Does not look at capture: call it outside a capture.
  Result<Config> tune(Device& dev, ArgList args, const LaunchTarget& target);
  // Compiles every configuration the space accepts on `dev` (Triton's warmup), so later
  // tuning times only. Failures are recorded, not returned, unless every one fails.
  Status warmup(Device& dev);

  // Pieces of a tuning for tuning spread over processes or devices (tune::mpi, tune_across).
  // Each is safe to call concurrently with run() on other keys; none launches the winner.

  // The key text of these arguments (KeyBuilder text plus heuristic values; TuningReport::key
  // and the store's key): equal texts on two processes with the same definition and device
  // fingerprint mean the same key. Runs the heuristics; builds nothing.
  Result<std::string> key_text(const Device& dev, ArgList args) const;

  // The configurations a tuning of this key would consider: the space's points that pass the
  // constraints, with heuristic values set, after early_prune and the perf model, in that
  // order: the space's enumeration order (ConfigSpace::at), or the perf model's (best estimate
  // first, ties in space order) when one is set. Stored rows do not shorten it. The list and
  // its order depend only on the definition, the arguments' key and DeviceInfo, so processes
  // with the same definition and device fingerprint get the same list. Errors as a tuning's:
  // invalid_argument (nothing passes the constraints), callback_failed (a callback threw).
  Result<std::vector<Config>> candidates(const Device& dev, ArgList args) const;

  // Compiles, verifies and times exactly `configs` (each a point of the space that the
  // constraints accept, with this key's heuristic values, else invalid_argument naming it) with the
  // tuning's own rules: the same BenchOptions, hooks, restore_value restores, reset_to_zero resets,
  // race and tuning budget. Returns one result per configuration, in order; a configuration that
  // fails has its reason and median +inf, and one that the race dropped early is marked raced_out
  // (its median is from fewer samples). Remembers nothing and stores nothing: no entry, no row, no
  // report, no listener. Fails only for what would end a tuning (a callback that threw:
  // callback_failed; a lost device). Blocks while it times; launches on the caller's buffers as a
  // tuning does.
  Result<std::vector<ConfigResult>> measure(Device& dev, ArgList args,
                                            std::span<const Config> configs);

  // Remembers `config` for this key on `dev`, as decided elsewhere (another rank's or
  // device's tuning): it is checked as measure() checks its configurations (else
  // invalid_argument naming it), compiled (a compile failure is returned), and published, so that
  // later run() and tune() calls are memory hits. A configuration remembered before for the key is
  // replaced. `results` (e.g. the measurements that decided it) are saved to the Autotuner's store
  // when given and the store writes (a read-only store keeps nothing; see tune/mpi.hpp's node
  // writer); results of configurations the space does not accept are refused as a whole. The
  // key's last_report() then says ResultSource::shared with these results and the listener
  // hears it. Blocks while compiling.
  Status adopt(Device& dev, ArgList args, const Config& config,
               std::span<const ConfigResult> results = {});

  // The configuration remembered in memory for these arguments, if any.
  std::optional<Config> best(const Device& dev, ArgList args) const;
  // The report of the last tuning for these arguments' key, if it was tuned in this process.
  std::optional<TuningReport> last_report(const Device& dev, ArgList args) const;

  // Waits for background tunings on `dev`, then drops every compiled variant and remembered
  // result for it. Not to be called concurrently with run() on the same device.
  void release(const Device& dev);
  const KernelDef& kernel() const noexcept;

 private:
  struct Impl;
  explicit Autotuner(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tune
