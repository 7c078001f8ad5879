// Tuning keys: which arguments decide the best configuration.
//
// A key is the (bucketed) values of the named scalar arguments, the element type of every
// buffer argument, and the device fingerprint. Bucketing maps nearby sizes to one key so a
// stream of new sizes does not retune each one.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace tune {

enum class Bucket : std::uint8_t { exact, next_pow2, custom };

// One key dimension: a scalar argument by name (its value), or a buffer argument by name
// (its element count).
struct KeySpec {
  std::string arg;
  Bucket bucket = Bucket::exact;
  std::function<std::int64_t(std::int64_t)> fn;  // Bucket::custom only

  static KeySpec exact(std::string a) { return {std::move(a), Bucket::exact, {}}; }
  static KeySpec pow2(std::string a) { return {std::move(a), Bucket::next_pow2, {}}; }
  static KeySpec custom(std::string a, std::function<std::int64_t(std::int64_t)> f) {
    return {std::move(a), Bucket::custom, std::move(f)};
  }
};

// Smallest power of two >= v (1 for v <= 1). Inline: it runs on every cache-hit call.
constexpr std::int64_t next_pow2(std::int64_t v) noexcept {
  if (v <= 1) return 1;
  auto x = static_cast<std::uint64_t>(v - 1);
  x |= x >> 1;
  x |= x >> 2;
  x |= x >> 4;
  x |= x >> 8;
  x |= x >> 16;
  x |= x >> 32;
  return static_cast<std::int64_t>(x + 1);
}

}  // namespace tune
