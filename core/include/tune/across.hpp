// Tuning one key over several devices: its candidates are dealt out, each device times its
// share, the finalists are timed again on one device and the winner is adopted everywhere.
// tune_across does it for the devices of one process (threads); tune::mpi's share_space does
// it for the ranks of an MPI job with pick_shared_winner, the one rule both use.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "tune/autotuner.hpp"

namespace tune {

struct ShareOptions {
  // Finalists: the configurations whose first-round median is within this fraction of the
  // best one's (0.03: 3%), at most max_finalists (>= 1) of them, fastest first. They are
  // timed again on one device, so that the winner is not decided by the spread between two
  // GPUs of the same model. One finalist is the winner without timing again.
  double finalist_margin = 0.03;
  int max_finalists = 4;
  // The finalists' second timings decide by the Autotuner's one winner rule (README, "The same
  // decision everywhere"): within this fraction of the fastest counts as a tie, broken by
  // configuration text. Set it to the tuner's BenchOptions::tolerance (0.01 by default).
  double tie_tolerance = 0.01;
};
// invalid_argument naming the field when the options make no sense.
Status validate(const ShareOptions& opts);

struct SharedWinner {
  Config config;
  // Every configuration's result: the finalists' from their second timing, the others' from
  // the device that timed them.
  std::vector<ConfigResult> results;
  std::vector<Config> finalists;  // timed again, fastest first
};

// Times `configs` again on the deciding device (Autotuner::measure there).
using Retime = std::function<Result<std::vector<ConfigResult>>(std::span<const Config>)>;

// The winner among `results` (one per configuration, measured anywhere): the finalists as
// ShareOptions says, timed again by `retime` when there are two or more, and the lowest
// median among them; a tie goes to the lower Config::to_string() text, so every process
// decides it the same way. all_failed listing each configuration's reason when none has a
// finite median; retime's error as it is.
Result<SharedWinner> pick_shared_winner(std::vector<ConfigResult> results, const ShareOptions& opts,
                                        const Retime& retime);

// One device's call of the kernel: the device and the arguments on it (buffers of that
// device). Every call must have the same key.
struct DeviceCall {
  Device* device = nullptr;
  ArgList args;
};

// Tunes one key over several devices of this process (no MPI): the candidates
// (Autotuner::candidates on the first device) are dealt round-robin over the devices, each
// device times its share on a thread of its own (Autotuner::measure: candidate j on device
// j % n), the finalists are timed again on the first device (pick_shared_winner) and the
// winner is adopted on every device (Autotuner::adopt, with the results: a writing store
// saves them), so later run() calls on any of them launch it. Devices must have the same
// DeviceInfo::fingerprint() and the calls the same key text (else invalid_argument naming
// the call). A device whose measuring fails (a callback threw, a lost device) fails the
// whole call with its error, naming the device; nothing is adopted then. Blocks until done;
// the Autotuner must not be destroyed meanwhile (as for any call).
Result<SharedWinner> tune_across(Autotuner& tuner, std::span<const DeviceCall> calls,
                                 const ShareOptions& opts = {});

}  // namespace tune
