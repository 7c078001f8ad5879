// WinnerStage: what both ways of tuning a key share, and the stage that ends them both.
// KeySession (session.cpp: every candidate, raced) and SearchSession (search_session.cpp: the
// points a SearchStrategy proposes) derive from it. It holds what a session borrows and the
// per-key objects (time ledger, hooks, output checks, stored rows, the rows to store), and
// does, the same way for both:
//   - the output check of one configuration (check_output), marking it verified;
//   - the winner stage (choose_winner): the winner rule's order (winner_rule.hpp), each
//     compiled (a stored one is compiled here) and, unless it was checked during this tuning,
//     verified; the first that compiles and passes wins; one that fails is recorded (and
//     stored) as failed;
//   - the end of a tuning (finish): the hooks put the caller's buffers back, the GPU lock is
//     let go, the rows are saved (after the winner, so that a configuration failing
//     verification is stored as failed), the winner's with its decision record;
//   - strict mode's refusal when no stored row gives a winner;
//   - the common part of a progress event (AutotunerOptions::progress).
// Internal to the core. Not thread-safe: one thread tunes the key.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gpu_lock.hpp"
#include "hook_runner.hpp"
#include "output_check.hpp"
#include "session.hpp"
#include "session_kit.hpp"
#include "stored_results.hpp"

namespace tune::detail {

class WinnerStage {
 public:
  WinnerStage(const WinnerStage&) = delete;
  WinnerStage& operator=(const WinnerStage&) = delete;
  virtual ~WinnerStage() = default;

 protected:
  WinnerStage(const SessionContext& ctx, Device& dev, ArgList args, const KeyForms& forms,
              const KernelSource& src, TuningReport& report);

  // Indexes into report_.results with a finite median, the winner first (winner_rule.hpp:
  // near-ties within tie_tolerance go to the first in canonical order, so every process
  // decides alike).
  std::vector<std::size_t> ranked() const;

  // The winner stage: the results at `order`, in that order; each verified (when `verify` and
  // the output is checked at all) unless this tuning checked it already. Returns the first
  // that compiles and passes, a failure that ends the tuning, or no_winner().
  Result<Selection> choose_winner(const std::vector<std::size_t>& order, bool verify);
  // Why no configuration won: each way of tuning says it its own way.
  virtual Status no_winner() const = 0;

  // One output check of `r`'s configuration with `kernel` (OutputCheck::verify: a launch with
  // the hooks around it, then KernelDef::verify and the reference outputs), timed as
  // verification. Marks `r` verified unless the check could not be made (it ends the
  // tuning); a passed check goes into the rows to store. Returns its outcome.
  Status check_output(ConfigResult& r, const CompiledKernel& kernel);
  // Whether this tuning checked `c`'s output already.
  bool checked_here(const Config& c) const { return checked_here_.count(c.to_string()) != 0; }

  // The variant of report_.results[i]: the one this tuning built, else compiled now (its
  // compile time and resources recorded).
  std::shared_ptr<Variant> variant_of(std::size_t i);

  // The end of a tuning whose outcome is `out`: the hooks' restores, the GPU lock let go, the
  // rows saved. A failing restore is the outcome of a tuning that succeeded.
  Result<Selection> finish(GpuLock& gpu, Result<Selection> out);
  // The rows to store, less those of configurations whose check could not be trusted.
  void save_rows();
  // The decision record of `winner` (decision_record.hpp) onto the rows to store, when this
  // tuning timed something; the key's last record moves off another configuration's row.
  // False when no record was made or attached (the rows keep the records they had).
  bool record_winner(const std::string& winner);

  // Strict mode: the error for a key with no stored winner.
  Status strict_refusal() const;

  // A progress event with what every tuning knows (kernel, key, elapsed time, done); the
  // session fills in its tallies and the best so far.
  TuningProgress progress_event(bool done) const;

  const SessionContext& ctx_;
  const KernelDef& def_;
  Device& dev_;
  ArgList args_;
  const KeyForms& forms_;
  const KernelSource& src_;
  TuningReport& report_;
  TimeLedger clock_;
  HookRunner hooks_;
  OutputCheck checks_;
  StoredResults stored_;
  ProgressNotifier progress_;
  // Every timed configuration is verified before it is timed (VerifyScope::
  // every_configuration, or Autotuner::measure), not only what can win.
  bool verify_all_ = false;
  std::map<std::string, std::shared_ptr<Variant>> built_;  // by configuration text
  std::vector<StoredResult> new_rows_;
  bool launched_ = false;   // the caller's buffers saw launches
  std::size_t failed_ = 0;  // configurations that failed outside a race

 private:
  // A passed check of `r`: its row to store says so, and a stored row that was not checked
  // is stored again as verified, its timing as it was, so no later process takes it for
  // unchecked.
  void store_verified(const ConfigResult& r);

  std::set<std::string> checked_here_;  // configurations whose output this tuning checked
};

}  // namespace tune::detail
