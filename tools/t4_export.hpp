// `tune cache export --format t4`: stored results as the auto-tuning community's T4 files
// (Kernel Tuner's output format; schemas vendored in tools/schema/T4/1.0.0, see the README
// there): a results document and a metadata document.
//
// One T4 file describes one tuning problem, so the rows must be those of one StoreKey (one
// kernel, key, device, toolchain and source). Mapping, per stored row:
//   configuration  the Config's parameters and set launch options ("block.x", "num_warps", ...)
//   timestamp      when the row was measured (ISO 8601, UTC)
//   objectives     ["time"]
//   times          {} : libtune keeps no per-run samples, compile or framework times per row
//   measurements   "time" = the median in ms (libtune's objective), "time_mean", "time_min",
//                  "time_p20", "time_p80", "time_max" in ms and "samples"; a failed row has
//                  "time" = Kernel Tuner's error name (CompilationFailedConfig,
//                  RuntimeFailedConfig, InvalidConfig), "error" (the StatusCode name) and
//                  "reason" (the message); every row has "verification" (T4 has no field for
//                  it): "verified" (its output was checked and passed), "not_checked" (only
//                  what can win is checked unless the tuning asked for every configuration:
//                  AutotunerOptions::verify) or "wrong_output"
//   invalidity     correct | compile | runtime | timeout | correctness | constraints (a
//                  configuration over a device limit)
//   correctness    1, or 0 for a configuration whose output failed verification (as Kernel
//                  Tuner writes it: 1 does not say the output was checked; "verification" does)
// The metadata document names the device and toolchain fingerprints, the kernel, key and
// source hash (environment.device_query.libtune), the device fingerprint again as the
// hardware description, the operating system (uname) and libtune's version (requirements).
//
// Pure functions; safe from any thread.
#pragma once

#include <span>
#include <string>

#include "tune/sqlite_store.hpp"
#include "tune/status.hpp"

namespace tune::cli {

// The T4 schema version these documents follow.
inline constexpr const char* kT4SchemaVersion = "1.0.0";

// The results document of `rows`. Fails (invalid_argument) when `rows` is empty or spans
// more than one StoreKey; the message lists the keys so that the user can pick one.
Result<std::string> t4_results_json(std::span<const CacheRow> rows);

// The metadata document for the rows of `key`.
std::string t4_metadata_json(const StoreKey& key);

}  // namespace tune::cli
