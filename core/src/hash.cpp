#include "tune/backend/hash.hpp"

#include <cinttypes>
#include <cstdio>

namespace tune {

std::uint64_t stable_hash(std::string_view bytes, std::uint64_t seed) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ULL ^ seed;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  // Avalanche so that short inputs differing in one byte spread over all 64 bits.
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}

}  // namespace tune
