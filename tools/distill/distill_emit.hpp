// A distilled table written out (`tune distill --emit`): as a C++ header a reviewer can read,
// as JSON for scripts, and as the summary `tune distill` prints.
//
// Rows usable as a bundle (issue 37) are not written yet: when bundles land, the table's
// configurations at each training key (DistillOutput::training.picks) are the rows to emit.
#pragma once

#include <string>

#include "decision_table.hpp"
#include "distill_fit.hpp"

namespace tune::distill {

struct DistillOutput {
  const DecisionTable* table = nullptr;
  const Distilled* fit = nullptr;
  FitOptions options;
  std::string command;     // the command line that made it, quoted in the outputs
  Evaluation training;     // over every key of the table
  double best_of_set = 1;  // best_of_set_geomean over every key
  bool has_held_out = false;
  HeldOut held_out;
};

// A header with no dependency: namespace `ns` holds kConfigs (the configurations' texts),
// kConfigCount and `constexpr int pick(<one parameter per feature>)` returning an index into
// kConfigs; the parameters are the key's values as its text shows them (after bucketing; a
// next_pow2 bucket's raw value picks the same, since splits test `value <= a key's value`).
// invalid_argument when a feature is not numeric (naming it), or `ns` is not an identifier.
Result<std::string> header_text(const DistillOutput& out, const std::string& ns);
// {"format": "libtune-distill", "version": 1, "kernel", "device", "command", "features",
//  "constant", "configs", "tree", "training", "held_out", "keys": [{"key", "pick",
//  "slowdown"}]}; a node is {"pick": i} or {"feature", "le" | "eq", "left", "right"}.
std::string json_text(const DistillOutput& out);
// The summary table and the tree, for people.
std::string summary_text(const DistillOutput& out);

}  // namespace tune::distill
