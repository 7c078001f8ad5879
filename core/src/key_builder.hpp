// Computed tuning keys (internal: not installed): TuningKey and KeyBuilder, which turn a call's
// arguments and the KeySpecs of tune/key.hpp into a hashable key without allocating.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tune/args.hpp"
#include "tune/key.hpp"
#include "tune/status.hpp"

namespace tune {

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
  // The call's own value of key argument `spec` (a buffer's count or a scalar), before its
  // bucket. Allocates nothing.
  std::int64_t raw_value(ArgList args, std::size_t spec) const noexcept {
    const ArgValue& a = args[static_cast<std::size_t>(arg_index_[spec])];
    return a.kind == ArgKind::buffer ? static_cast<std::int64_t>(a.count) : a.as_int();
  }
  // The key's numeric values by name, for nearest-key search and cache rows.
  const std::vector<KeySpec>& specs() const noexcept { return specs_; }

 private:
  std::vector<KeySpec> specs_;
  std::vector<int> arg_index_;     // per spec: position in the signature
  std::vector<int> buffer_index_;  // positions of buffer arguments (their types enter the key)
};

}  // namespace tune
