// The device-family fallback chain (tune/fallback.hpp): the decisions of other devices read
// from the store's layers, graded by device family (cache/device_family.hpp), and the serving
// of a key from the first level that works here. Internal to the core.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "call_keys.hpp"
#include "session.hpp"
#include "tune/fallback.hpp"

namespace tune::detail {

// One decision another device (or this device with another toolchain) made for a key.
struct FallbackPick {
  std::string config;  // its winner, Config::to_string()
  FallbackLevel level = FallbackLevel::none;
  std::string device;  // the fingerprint it was made on
  std::string origin;  // the bundle it was read from; empty for the user's store
  std::int64_t unix_time = 0;
};

// The decisions of `key` (same kernel, source hash and key text) in `store`'s rows of other
// devices and toolchains (TuningStore::find_rows, every layer): one per (device, toolchain),
// its winner by the winner rule (none when its winner failed), graded against key.device,
// closest level first, newest first within a level. Devices of another vendor or backend, and
// fingerprints that do not read back, give none. Empty without a store.
std::vector<FallbackPick> family_picks(TuningStore* store, const StoreKey& key);

// Serves `forms.key` from the chain: each family pick in order, then `nearest` (the nearest
// key's decision published on this device, if any), then the first candidate. A pick serves
// when it is a point of this key's space (`keys`), compiles here and passes the output check
// here (Autotuner::measure's rules: launched on the call's arguments, verified when the kernel
// checks outputs); a pick that fails is recorded in `report` and the next is tried. With
// `isolated` (IsolationOptions::enabled) only `nearest` may serve: nothing untried runs in the
// application's context. Fills `report` (ResultSource::fallback, TuningReport::fallback, the
// picks tried in `results`). failed_precondition naming every level's failure when none
// serves.
Result<Selection> serve_from_chain(const SessionContext& ctx, const CallKeys& keys, Device& dev,
                                   ArgList args, const KeyForms& forms,
                                   const std::optional<Selection>& nearest, bool isolated,
                                   TuningReport& report);

}  // namespace tune::detail
