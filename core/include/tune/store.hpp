// TuningStore: where tuning results persist between processes (the SQLite cache implements
// it). The Autotuner asks it before timing and tells it every configuration's outcome after.
//
// Thread safety: implementations must accept concurrent calls from several threads and
// processes. Neither call throws or fails the tuning: a store that cannot read or write logs a
// warning and behaves as empty.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tune/sample_stats.hpp"
#include "tune/status.hpp"

namespace tune {

// Everything a stored timing is valid for.
struct StoreKey {
  std::string kernel;             // kernel name
  std::uint64_t source_hash = 0;  // hash of the source text compiled on this device
  std::string key;                // KeyBuilder text of the tuning key
  std::string device;             // DeviceInfo::fingerprint()
  std::string toolchain;          // DeviceInfo::toolchain_fingerprint()
};

// What is known of a configuration's output (README, "Verification"):
//   verified      it was checked (KernelDef::verify, KernelDef::reference) and passed;
//   not_checked   nobody compared it: a row timed but never the winner rule's pick (only what
//                 can win is checked, unless AutotunerOptions::verify asks for every
//                 configuration), a failure before any output, a kernel with nothing to check
//                 it against, or a row stored by a libtune that did not record it;
//   wrong_output  it was checked and failed (the row's status is then wrong_output).
enum class Verification : std::uint8_t { not_checked, verified, wrong_output };
std::string_view to_string(Verification v) noexcept;  // "not_checked", "verified", "wrong_output"
// The state of a row of `status` whose output was (`checked`) or was not compared: a
// wrong_output status is wrong_output whatever `checked` says; otherwise verified when checked.
Verification verification_of(StatusCode status, bool checked) noexcept;

// What a tuning knew when it chose a key's winner (docs/caches.md, "Decision records"),
// stored with the winner's row. Provenance beyond these fields is the row's StoreKey (device
// and driver in `device`, compiler and libtune version in `toolchain`).
struct DecisionRecord {
  std::string runner_up;  // the runner-up's configuration text; empty when none timed
  // How much faster the winner was: runner-up median / winner median - 1 (0.12: the runner-up
  // took 12% longer; negative when a near-tie went to the first in canonical order). NaN
  // without a runner-up.
  double margin = std::numeric_limits<double>::quiet_NaN();
  // The probability that the winner's true median is below the runner-up's, from both rows'
  // sample statistics (normal approximation of each median's error from its p20-p80 band and
  // sample count). NaN without a runner-up.
  double confidence = std::numeric_limits<double>::quiet_NaN();
  std::string timing;           // how the cache was kept cold: "flush", "rotate" or "none"
  int sustained_turns = 0;      // turns of the showdown's sustained timing; 0: none held
  std::string library_version;  // the libtune that decided (tune/version.hpp's kVersion)
  std::int64_t unix_time = 0;   // when it was decided
  std::uint32_t tunings = 1;    // tunings of this key that decided, this one included
  std::uint32_t flips = 0;      // of those, the ones that picked another winner than the last
};

// One configuration's outcome for one StoreKey.
struct StoredResult {
  std::string config;  // Config::to_string()
  StatusCode status = StatusCode::ok;
  std::string reason;  // failure reason when status != ok
  SampleStats stats;   // nanoseconds; meaningful when status == ok
  std::int64_t unix_time = 0;
  // Its output was checked (and passed unless status is wrong_output): verification_of(status,
  // verified) is the row's Verification. False in rows of a libtune that did not record it.
  bool verified = false;
  // Set on the row of the key's latest decided winner (a tuning that timed something and chose
  // it); empty on every other row and in rows of a libtune that did not record decisions. The
  // winner itself is always recomputed from the rows (the winner rule), never read from here.
  std::optional<DecisionRecord> decision;
  // Which layer served the row (tune/bundle.hpp): empty for the user's own store, else the
  // path of the bundle it was read from. Not stored: a store's load() sets it.
  std::string origin;
};

// One stored row with the key it belongs to.
struct CacheRow {
  StoreKey key;
  StoredResult result;
};

// Which rows an operation applies to. Empty fields match everything. `kernel` and `key`
// match exactly; `device` matches a device fingerprint that contains it
// ("H200", "cuda|", or a whole fingerprint).
struct CacheFilter {
  std::string kernel;
  std::string key;
  std::string device;
  // Whether `k` is one of the keys this filter selects.
  bool matches(const StoreKey& k) const noexcept;
};

class TuningStore {
 public:
  virtual ~TuningStore() = default;
  // Rows saved earlier for `key`; empty when none or when the store is unusable.
  virtual std::vector<StoredResult> load(const StoreKey& key) = 0;
  // Adds or replaces rows (one per config) for `key`.
  virtual void save(const StoreKey& key, std::span<const StoredResult> rows) = 0;
  // Every row of every key `filter` selects, each key's rows consecutive and in the winner
  // rule's order (the winner first when it is ok), with origin set as load() sets it. What
  // lets a caller look beyond one key (warm start, the device-family fallback). Empty when
  // the store is unusable, and in the default below: a store that cannot list keys.
  virtual std::vector<CacheRow> find_rows(const CacheFilter& filter) {
    (void)filter;
    return {};
  }

  // Cross-process claims, so that processes meeting the same new key at once do not all
  // tune it. Asks to be the one process that tunes `key` now. Returns true when granted:
  // no claim on `key` by another process is live (a claim is live until `ttl` after it was
  // last granted or renewed, and only while its process exists, when that process is on this
  // host). Calling it again for a key this process holds renews the claim (grants, new
  // expiry). Never blocks beyond the store's busy timeout and never throws; a store that
  // cannot record claims grants always (the default below: in-memory and other stores).
  // When refused, the caller should load() the key later (the owner saves its results) or
  // tune it anyway once the claim has expired (try_claim grants then).
  virtual bool try_claim(const StoreKey& key, std::chrono::milliseconds ttl) {
    (void)key;
    (void)ttl;
    return true;
  }
  // Gives up this process's claim on `key` (after save(), or on failure); a no-op when it
  // holds none. A claim never released expires by itself after its ttl.
  virtual void release_claim(const StoreKey& key) { (void)key; }
};

// The process-wide persistent store, as the environment asks: TUNE_CACHE=off|readonly|
// readwrite (default readwrite), in $TUNE_CACHE_DIR/tune.db (default $XDG_CACHE_HOME/libtune,
// else ~/.cache/libtune). Null when off. Opened on first use; never fails (an unusable file is
// moved aside with a warning, its readable rows salvaged; see tune/sqlite_store.hpp for every
// promise about damaged, linked, special, read-only and network files). Implemented in
// core/src/cache/.
std::shared_ptr<TuningStore> default_store();

}  // namespace tune
