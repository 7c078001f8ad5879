// Config: one point of a kernel's tuning space.
//
// A Config is a set of named compile-time constants (integers, booleans, strings) plus launch
// options. Its canonical text and hash do not depend on the order in which values were set:
// parameters are kept sorted by name. Configs are plain values: copyable, comparable, and safe
// to share between threads once built.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "tune/status.hpp"

namespace tune {

// A compile-time constant's value. Integers are 64-bit; strings are emitted verbatim as macro
// bodies, so a string value must be a declared parameter's value (see ConfigSpace::contains).
using Value = std::variant<std::int64_t, bool, std::string>;

enum class ValueType : std::uint8_t { integer, boolean, string };
ValueType type_of(const Value& v) noexcept;
std::string_view to_string(ValueType t) noexcept;
// "128", "true", "\"tn\"" (strings quoted in canonical text).
std::string value_to_text(const Value& v);

struct Dim3 {
  std::uint32_t x = 1, y = 1, z = 1;
  std::uint64_t product() const noexcept { return std::uint64_t{x} * y * z; }
  // False for {0, 0, 0}: a launch option's "not set" (see LaunchOptions::block).
  bool any_set() const noexcept { return x != 0 || y != 0 || z != 0; }
  friend bool operator==(const Dim3&, const Dim3&) = default;
};
// "256x1x1": the one text of a Dim3, in Config text, logs and error messages.
std::string to_string(const Dim3& d);

// The block a Dim3 stands for: dimensions left at 0 beside a set one are 1 ({256, 0, 0} is
// 256x1x1); {0, 0, 0} stays unset. The one rule for a partly set block, followed by Config,
// definitions() and every backend.
constexpr Dim3 normalized_block(Dim3 b) noexcept {  // inline: every launch normalises its block
  if (b.x == 0 && b.y == 0 && b.z == 0) return b;
  if (b.x == 0) b.x = 1;
  if (b.y == 0) b.y = 1;
  if (b.z == 0) b.z = 1;
  return b;
}

// Launch options. Zero means "not set: the backend or kernel decides".
struct LaunchOptions {
  Dim3 block{0, 0, 0};             // threads per block / workgroup size; {0,0,0} = unset
  std::int32_t num_warps = 0;      // Triton-style hint; a kernel may derive block.x from it
  std::int32_t num_stages = 0;     // software-pipeline depth hint, visible to the kernel
  std::int32_t max_registers = 0;  // per-thread register cap passed to the compiler
  std::uint32_t shared_bytes = 0;  // dynamic shared memory per block
  // The subgroup (warp, wavefront) size the kernel must run with; 0 = the device's choice.
  // A power of two in [DeviceInfo::min_subgroup_size, max_subgroup_size]; any other value is
  // refused (unavailable) before compiling, with the device's range in the reason.
  std::uint32_t subgroup_size = 0;
  friend bool operator==(const LaunchOptions&, const LaunchOptions&) = default;
};

// The reserved dimension names that set launch options inside a ConfigSpace product.
inline constexpr std::string_view kBlockX = "block.x";
inline constexpr std::string_view kBlockY = "block.y";
inline constexpr std::string_view kBlockZ = "block.z";
inline constexpr std::string_view kNumWarps = "num_warps";
inline constexpr std::string_view kNumStages = "num_stages";
inline constexpr std::string_view kMaxRegisters = "max_registers";
inline constexpr std::string_view kSharedBytes = "shared_bytes";
inline constexpr std::string_view kSubgroupSize = "subgroup_size";
bool is_launch_option_name(std::string_view name) noexcept;

class Config {
 public:
  Config() = default;
  // Convenience: Config{{"BM", 64}, {"SPLIT", true}}.
  Config(std::initializer_list<std::pair<std::string, Value>> params);

  // Sets a parameter, or a launch option when `name` is a reserved launch name (it must then
  // be an integer). Keeps parameters sorted; replaces an existing value.
  Config& set(std::string_view name, Value value);
  Config& set(std::string_view name, int v) { return set(name, Value{std::int64_t{v}}); }
  Config& set(std::string_view name, const char* v) { return set(name, Value{std::string(v)}); }

  bool has(std::string_view name) const noexcept { return find(name) != nullptr; }
  const Value* find(std::string_view name) const noexcept;
  // The integer value of `name`; `fallback` when absent or not an integer.
  std::int64_t get_int(std::string_view name, std::int64_t fallback = 0) const noexcept;
  bool get_bool(std::string_view name, bool fallback = false) const noexcept;

  const std::vector<std::pair<std::string, Value>>& params() const noexcept { return params_; }
  LaunchOptions& launch() noexcept { return launch_; }
  const LaunchOptions& launch() const noexcept { return launch_; }

  // Canonical text: "BM=64,BN=128,SPLIT=true" then, if any launch option is set,
  // ";block=256x1x1,num_stages=3" (only set options, fixed order). Parsable by parse().
  std::string to_string() const;
  static Result<Config> parse(std::string_view text);
  // stable_hash of to_string(): equal configs hash equal in every process.
  std::uint64_t hash() const;

  friend bool operator==(const Config& a, const Config& b) {
    return a.params_ == b.params_ && a.launch_ == b.launch_;
  }

 private:
  std::vector<std::pair<std::string, Value>> params_;  // sorted by name, unique
  LaunchOptions launch_;
};

}  // namespace tune
