// tune::mpi: one tuning for a whole MPI job (README, "Tuning in an MPI job").
//
// A Coordinator is made from an MPI communicator. It groups the ranks by device fingerprint
// (DeviceInfo::fingerprint(): same GPU model, driver and toolchain), and its three modes tune
// a list of calls (one key each) so that every rank of a group ends with the same
// configuration per key, remembered in its Autotuner (Autotuner::adopt), so that later
// run() calls are memory hits that launch it:
//   tune_collective (mode 1, one tunes, all use): the group's leader tunes each new key with
//     Autotuner::tune (its store, claims and rules as usual); the others wait and adopt.
//   share_space (mode 2): each key's candidates (Autotuner::candidates) are dealt round-robin
//     over the group's ranks; each times its share (Autotuner::measure); the leader gathers
//     the results, re-times the finalists (CoordinatorOptions::share) on its own device to
//     remove GPU-to-GPU spread, picks the winner with pick_shared_winner (the winner rule:
//     within ShareOptions::tie_tolerance of the fastest, the first Config::to_string text) and
//     broadcasts it. Every key given is
//     measured, even one remembered or stored: use tune_collective for keys that may be known.
//   share_keys (mode 3): the distinct keys are dealt round-robin over the group's ranks (the
//     u-th to group rank u % n); each tunes its own (Autotuner::tune); every winner goes to
//     every rank of the group.
// Calls whose arguments give the same key (one bucket) are decided once; the later ones get
// the first one's outcome.
//
// Collectiveness: make() and each mode are collective over the communicator: every rank
// calls them, in the same order, with the same list of calls (the same keys, in the same
// order). Keys that differ are detected (the ranks exchange their key texts first) and every
// rank of the group returns invalid_argument naming the rank, the position and both keys;
// nothing is tuned then. New keys met by a rank outside these calls are tuned by that rank
// alone, as without MPI: call a mode at a point that every rank reaches (e.g. after setup,
// with the shapes of the run) to tune them together.
//
// Failures: an error on the rank that tunes or measures (a callback that threw, every
// configuration failed, a lost device) is sent to the others, and every rank of the group
// returns that error, its message naming the rank. All waiting is MPI non-blocking calls
// polled against CoordinatorOptions::timeout_ms: a rank that stalls or exits makes the others
// return StatusCode::timeout naming the mode, the key and what was awaited, never hang. The
// timeout bounds each wait, including a wait for another rank's tuning of one key (mode 1) or
// of all its keys (mode 3): set it above the longest tuning. After a timeout the Coordinator
// is broken (an MPI collective cannot be cancelled): every later call returns
// failed_precondition; do not use its communicator again (MPI_Abort is the usual way out).
// Open MPI's mpirun ends the whole job when a rank exits without MPI_Finalize.
//
// Storage: node_store() gives each rank the TuningStore to build its Autotuner with: the
// node's first rank (MPI_Comm_split_type SHARED, rank 0) writes the database; the others open
// it read-only. Results that decided a key are sent with its winner and saved by every rank
// whose store writes, so the node writer saves the rows other ranks measured.
//
// Thread safety: a Coordinator is used by one thread at a time; MPI must be initialised with
// at least MPI_THREAD_FUNNELED from the thread that calls it. The Autotuner may be used by
// other threads meanwhile (as always). Blocking: every call blocks until it is done or times
// out. Uses the MPI C API only; the core library knows nothing of MPI.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tune/across.hpp"
#include "tune/autotuner.hpp"
#include "tune/store.hpp"

namespace tune::mpi {

struct CoordinatorOptions {
  // How long each wait on other ranks may take, in milliseconds (> 0).
  double timeout_ms = 60000;
  // share_space: which configurations the leader times again (tune/across.hpp).
  ShareOptions share;
};

// What one key's collective tuning decided, on this rank.
struct KeyOutcome {
  std::string key;                             // Autotuner::key_text
  Config config;                               // the configuration every rank of the group adopted
  ResultSource source = ResultSource::shared;  // tuned/disk/memory...: on the rank that
                                               // decided it; shared on the others
  int decided_by = 0;                          // group rank that tuned it (share_space: the leader)
  std::vector<Config> measured_here;           // share_space: configurations this rank timed in the
                                               // first round (its round-robin share)
  std::vector<std::string> finalists;          // share_space: those re-timed on the leader
};

class Coordinator {
 public:
  // Collective over `comm` (duplicated: the Coordinator's messages never mix with the
  // caller's). Groups the ranks by `dev`'s fingerprint and checks, with the fingerprints'
  // full texts, that the grouping is exact. Fails with timeout when a rank does not arrive
  // within options.timeout_ms, invalid_argument for bad options.
  static Result<std::unique_ptr<Coordinator>> make(MPI_Comm comm, const Device& dev,
                                                   CoordinatorOptions options = {});
  // Frees its communicators (not after a timeout, and not once MPI_Finalize was called:
  // destroy it before MPI_Finalize).
  ~Coordinator();
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  // Mode 1. `calls`: the arguments of each key to tune (the same keys on every rank).
  // Returns one outcome per call, in order.
  Result<std::vector<KeyOutcome>> tune_collective(Autotuner& tuner, Device& dev,
                                                  std::span<const ArgList> calls);
  // Mode 2.
  Result<std::vector<KeyOutcome>> share_space(Autotuner& tuner, Device& dev,
                                              std::span<const ArgList> calls);
  // Mode 3.
  Result<std::vector<KeyOutcome>> share_keys(Autotuner& tuner, Device& dev,
                                             std::span<const ArgList> calls);

  int group_rank() const noexcept;  // this rank in its fingerprint group (0: the leader)
  int group_size() const noexcept;
  int groups() const noexcept;  // how many fingerprint groups the communicator has
  // Whether an earlier call timed out (every later call fails; see the header comment).
  bool broken() const noexcept;

 private:
  struct Impl;
  explicit Coordinator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The TuningStore for this rank, collective over `comm`: the node-local rank 0 (of
// MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED)) opens the default database
// (default_cache_path(), TUNE_CACHE's mode) and creates it; then the other ranks of the node
// open the same file read-only (SqliteStore, CacheMode::readonly: never written). TUNE_CACHE=off
// gives null everywhere (memory only), TUNE_CACHE=readonly read-only everywhere. Ranks of one
// node must see the same TUNE_CACHE_DIR. Fails with timeout like Coordinator::make.
Result<std::shared_ptr<TuningStore>> node_store(MPI_Comm comm, double timeout_ms = 60000);

}  // namespace tune::mpi
