// Tuning keys: which arguments decide the best configuration.
//
// A key is the (bucketed) values of the named scalar arguments, the element type of every
// buffer argument, and the device fingerprint. Bucketing maps nearby sizes to one key so a
// stream of new sizes does not retune each one.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tune/args.hpp"

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

// The most values a key may hold: key arguments, one slot of packed buffer element types,
// and heuristic parameter values (keys are built without allocation).
inline constexpr int kMaxKeyValues = 16;

// A computed key: values in KeySpec order, then the buffer element types packed in one slot,
// then any values appended by the caller (heuristics); `hash` also covers the device.
struct TuningKey {
  // Only values[0, size) are meaningful: equality and the hash read no further. The default
  // constructor zeroes the rest; KeyBuilder::build does not (zeroing 128 bytes on every call
  // was a third of the cache-hit key's cost).
  std::int64_t values[kMaxKeyValues];
  int size = 0;
  std::uint64_t device_hash = 0;
  std::uint64_t hash = 0;

  TuningKey() noexcept : values{} {}
  struct Unfilled {};
  explicit TuningKey(Unfilled) noexcept {}  // NOLINT(cppcoreguidelines-pro-type-member-init)

  // Appends a value; call rehash() after the last push. Returns false when full.
  bool push(std::int64_t v) noexcept;
  void rehash() noexcept;
  friend bool operator==(const TuningKey& a, const TuningKey& b) noexcept;
};

// Resolves KeySpecs against a signature once; then builds keys per call without allocating.
class KeyBuilder {
 public:
  // Fails (invalid_argument) naming an unknown key argument, a custom bucket without a
  // function, or more than kMaxKeyValues - 1 key arguments.
  static Result<KeyBuilder> make(const KernelSignature& sig, std::vector<KeySpec> specs);
  KeyBuilder() = default;

  // A custom bucket function that throws: tune::Error with a callback_failed Status naming it.
  TuningKey build(ArgList args, std::uint64_t device_hash) const;
  // Readable text of a key for logs and the cache: "M=4096,N=4096;f16,f16,f32".
  std::string to_string(const TuningKey& key) const;
  // The key's numeric values by name, for nearest-key search and cache rows.
  const std::vector<KeySpec>& specs() const noexcept { return specs_; }

 private:
  std::vector<KeySpec> specs_;
  std::vector<int> arg_index_;     // per spec: position in the signature
  std::vector<int> buffer_index_;  // positions of buffer arguments (their types enter the key)
};

}  // namespace tune
