// The rules every stored or imported row must pass, independent of how it is stored: the
// space-independent plausibility checks (check_stored_row) and the provenance order that
// decides which of two rows for one config is kept (has_better_provenance).
//
// Used by the database (rows read back, rows salvaged), the JSON import and the Autotuner's
// validation (cache_validation.hpp), so that every way in applies the same rules.
// Pure functions: no state, no I/O, safe to call from any thread.
#pragma once

#include <cstdint>
#include <string>

#include <vector>

#include "tune/sqlite_store.hpp"
#include "tune/status.hpp"
#include "tune/store.hpp"

namespace tune {

// Plausibility floor of a stored or imported time: no kernel launch is timed below 1 ns (a
// device's peak is not known when a row is imported, so this is a floor, not a model).
inline constexpr double kMinPlausibleTimeNs = 1.0;
// More samples than this is damage, not a measurement.
inline constexpr std::uint32_t kMaxPlausibleSampleCount = 100'000'000;

// Space-independent checks of one stored or imported row, failed or not: the config text
// parses (and is returned in canonical form through `canonical`); the sample count is at most
// kMaxPlausibleSampleCount; the unix time is not negative nor more than a year ahead; every
// statistic is NaN (not measured: NULL in the database, null in an export), +inf or a finite
// value, never negative nor -inf. An ok row also has count > 0, every statistic finite and at
// least kMinPlausibleTimeNs, quantiles ordered (min <= p20 <= median <= p80 <= max) and the
// mean within [min, max]. A row that fails is refused (import, merge, salvage) or ignored
// with a warning (load), never chosen. The message names the offending field as the export
// format spells it ('config', 'stats.count', 'stats.min', 'unix_time', ...).
Status check_stored_row(const StoredResult& row, std::string* canonical = nullptr);

// The key fields every stored or imported row must have: a kernel name, a device fingerprint
// and a toolchain fingerprint that are not empty (the tuning key text and the source hash may
// be anything). invalid_argument naming the field ('kernel', 'device', 'toolchain').
Status check_stored_key(const StoreKey& key);

// Provenance order used by import: whether `incoming` may replace `existing` (same identity).
// A measured (ok) row is never replaced by a failure, nor a verified ok row by one whose
// output was not checked; between two rows of the same kind the one with more samples wins,
// then the newer one; between two rows of one measurement, the one whose decision record is
// newer (a row without one is older than any); on a full tie the stored row stays. So import,
// push and pull bring a newer record onto a row that is otherwise the same, and never erase one.
bool has_better_provenance(const StoredResult& incoming, const StoredResult& existing) noexcept;

// The unix time of `row`'s decision record, -1 without one: the last tie-break of
// has_better_provenance.
std::int64_t decision_time(const StoredResult& row) noexcept;

namespace cache {

// The current unix time in seconds: what a row saved without a time is stamped with, what
// check_stored_row judges dates against, and the suffix of a file moved aside.
std::int64_t now_unix();

}  // namespace cache
}  // namespace tune
