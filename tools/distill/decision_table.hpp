// The decisions stored for many keys of one kernel, as a table `tune distill` fits: one row
// per key (its parsed key values and every stored configuration's slowdown against the key's
// own best median), one column per configuration stored anywhere.
//
// Slowdown of configuration c at a key = c's stored median / the key's best ok median (>= 1).
// A configuration that failed at a key, or has no row there (never timed: pruned, left out
// by the search, or the key tuned with a smaller space), is *unknown* there: its slowdown is
// +infinity and the fit never picks it for that key; a pick that lands on an unknown cell is
// counted apart (Cost::unknown), never folded into a geometric mean.
#pragma once

#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tune/sqlite_store.hpp"
#include "tune/status.hpp"

namespace tune::distill {

inline constexpr double kUnknown = std::numeric_limits<double>::infinity();

// One field of a KeyBuilder key text ("M=4096,N=64;f32,f32,f32"): the named values before
// ';' ("M" = "4096"), and everything after it as one field named "types" (buffer element
// types, then any heuristic values). A field before ';' without '=' is named "field<i>".
struct KeyField {
  std::string name;
  std::string value;
};
std::vector<KeyField> key_fields(std::string_view key);

// A key field that varies across the table's keys: a split feature of the tree. Numeric when
// every key's value is a number (then `integral` when every one is an integer); otherwise
// categorical (split by exact match).
struct Feature {
  std::string name;
  bool numeric = true;
  bool integral = true;
};

struct KeyRow {
  std::string key;                // the key text as stored
  std::vector<std::string> text;  // per feature: the field's text
  std::vector<double> value;      // per numeric feature: its number (0 for categorical)
  std::vector<double> slowdown;   // per configuration: >= 1, or kUnknown
  double best_median_ns = 0;      // the key's own winner's median
};

struct DecisionTable {
  std::string kernel;
  std::string device;
  std::vector<Feature> features;
  std::vector<std::string> constant;  // fields equal at every key, as "name=value"
  std::vector<std::string> configs;   // Config::to_string() texts, sorted
  std::vector<KeyRow> keys;           // sorted by key text
  // Keys stored for more than one (source hash, toolchain): the newest one's rows are used.
  std::size_t superseded = 0;
};

// The table of `kernel`'s rows (SqliteStore::rows, filtered to the kernel). Fails naming the
// culprit: no row of the kernel (not_found), rows of several devices (invalid_argument: the
// caller narrows with a device filter), no key with an ok row (not_found), keys whose fields
// differ (invalid_argument naming both keys).
Result<DecisionTable> decision_table(std::span<const CacheRow> rows, const std::string& kernel);

}  // namespace tune::distill
