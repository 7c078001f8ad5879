// The last-level cache of a device, for backend authors: what DeviceInfo::llc_bytes holds and
// how large the flush before each timed launch is.
//
// Why a flush of twice the cache: a timed launch must find its inputs in memory, not in a cache
// the previous launch warmed. Writing a scratch buffer evicts what was cached only if the
// sweep displaces every line; caches are set-associative with replacement policies that are
// not strict LRU (and AMD's Infinity Cache is a memory-side cache that may keep some lines), so
// a sweep of exactly the cache's size leaves a fraction warm. Twice the size evicts it on every
// policy libtune has met, and costs one memset of a few hundred MiB at most, outside the timed
// span.
//
// Thread safety: pure functions, except that set_last_level_cache reads the environment.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tune/device_info.hpp"
#include "tune/status.hpp"

namespace tune {

// The size a backend records when the device does not tell and no table knows it.
inline constexpr std::uint64_t kDefaultLlcBytes = 128ull << 20;

// The flush writes this many times the last-level cache (see above).
inline constexpr std::uint64_t kFlushCacheMultiple = 2;

// AMD's Infinity Cache (MALL, the "L3" of AMD's GPU specification table) by gfx target
// ("gfx942", the part of gcnArchName before ':'): its size in bytes, 0 for a target that has
// none (gfx90a, gfx908) or that the table does not list. HIP 5.x/6.x does not report it.
std::uint64_t amd_infinity_cache_bytes(std::string_view gfx_target) noexcept;

// Parses a TUNE_LLC_BYTES value: a positive whole number of bytes with an optional binary
// suffix K, M or G (any case, an optional "iB"/"B": "256M", "256MiB", "268435456").
// invalid_argument naming the text otherwise.
Result<std::uint64_t> parse_byte_size(std::string_view text);

// `bytes` for people: "1.5 MiB", "96.0 MiB", "512.0 KiB", "12 B".
std::string byte_size_text(std::uint64_t bytes);

// Records the last-level cache in `info`: `bytes` with `source` when bytes > 0, else
// `fallback` as CacheSizeSource::default_size. TUNE_LLC_BYTES, when set and valid, wins
// (CacheSizeSource::user); an invalid value is logged once and ignored.
void set_last_level_cache(DeviceInfo& info, std::uint64_t bytes, CacheSizeSource source,
                          std::uint64_t fallback = kDefaultLlcBytes);

// The flush scratch size for `info`: kFlushCacheMultiple times llc_bytes (kDefaultLlcBytes when
// 0), rounded up to a whole MiB.
std::uint64_t flush_bytes_for(const DeviceInfo& info) noexcept;

}  // namespace tune
