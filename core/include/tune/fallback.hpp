// The device-family fallback chain (docs/deploy.md, "Shipping tuned kernels with your
// application"): what a call serves when no decision exists for this exact device and
// toolchain, and what follows it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tune/store.hpp"

namespace tune {

// Which level of the chain served a key, closest first:
//   none               not served by the chain: a decision of this device and toolchain, or
//                      a tuning;
//   same_device        this device's decision made with another toolchain (compiler, driver);
//   same_architecture  another device of this architecture (CUDA sm_XY, HIP gfx target,
//                      Vulkan vendor and device ID): another board or driver;
//   same_vendor        another architecture of this vendor (same backend);
//   nearest_key        this kernel's nearest key tuned on this device in this process (as
//                      TuningMode::background picks it);
//   default_config     the first candidate left after heuristics and pruning (what
//                      TUNE_DISABLE picks).
// Decisions of the first three levels are read from every store layer (the user's database,
// bundles, the shared tier's local file), for the same kernel, source hash and key text.
enum class FallbackLevel : std::uint8_t {
  none,
  same_device,
  same_architecture,
  same_vendor,
  nearest_key,
  default_config
};
// "none", "same device", "same architecture", "same vendor", "nearest key", "default config".
std::string_view to_string(FallbackLevel level) noexcept;

// One decision another device (or this device with another toolchain) made for a key.
struct FallbackCandidate {
  std::string config;  // its winner, Config::to_string()
  FallbackLevel level = FallbackLevel::none;
  std::string device;  // the fingerprint it was made on
  std::string origin;  // the bundle it was read from; empty for the user's store
  std::int64_t unix_time = 0;
};

// The chain's first three levels for `key` on the device key.device with toolchain
// key.toolchain: the decisions of the same kernel, source hash and key text in `store`'s rows
// of other devices and toolchains (TuningStore::find_rows: every layer), one per (device,
// toolchain), its winner by the winner rule (none when its winner failed), closest level
// first, newest first within a level. Devices of another vendor or backend, and fingerprints
// that do not read back, give none. What the Autotuner tries, in this order, and what `tune
// bundle explain --for-device` shows. Empty without a store.
std::vector<FallbackCandidate> fallback_candidates(TuningStore* store, const StoreKey& key);

// What a call does with a key that has no decision for this device and toolchain
// (AutotunerOptions::fallback, TUNE_FALLBACK):
//   tune        tune it now (the default, and the only behaviour before the chain): the chain
//               is not consulted;
//   keep        serve the chain's first level whose configuration is a point of this key's
//               space, compiles here and passes the output check here (KernelDef::verify or
//               reference, when the kernel has one; one launch on the call's arguments): a
//               level that fails here is passed over for the next. Never tunes (production,
//               and what strict mode does with the chain). No level serves: the call fails
//               with every level's reason.
//   background  serve as keep does, and tune the key on a background thread on copies of
//               the call's buffers (TuningMode::background's machinery); later calls switch
//               to the tuned winner. Strict mode makes it keep.
// The served configuration is remembered for the key in this process (later calls are
// hits); its report (TuningReport::fallback, ResultSource::fallback) says which level served.
enum class FallbackPolicy : std::uint8_t { tune, keep, background };
std::string_view to_string(FallbackPolicy policy) noexcept;  // "tune", "keep", "background"
// TUNE_FALLBACK: tune, keep or background; unset or empty is tune. Another value logs one
// warning naming the variable, its value and the accepted words, and gives tune.
FallbackPolicy fallback_policy_from_env();

}  // namespace tune
