// Stable 64-bit hashing: the same bytes give the same value in every process, on every
// machine and in every libtune version (hashes are stored in tuning caches). Not for security.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tune {

// FNV-1a over the bytes, finished with a 64-bit avalanche mix.
std::uint64_t stable_hash(std::string_view bytes, std::uint64_t seed = 0) noexcept;

// A hash as 16 zero-padded lower-case hex digits ("00000000deadbeef"): file names, cache keys.
std::string hex64(std::uint64_t v);

// Combines a running hash with one 64-bit value (order-dependent).
constexpr std::uint64_t hash_combine(std::uint64_t h, std::uint64_t v) noexcept {
  // splitmix64 finaliser over the pair: cheap, and good enough to spread small integers.
  std::uint64_t x = h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

}  // namespace tune
