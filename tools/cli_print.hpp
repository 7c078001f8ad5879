// Output helpers shared by the `tune` commands that print stored rows (`tune cache`,
// `tune bundle`): a plain text table for people and JSON for scripts. Pure formatting to
// stdout; safe from one thread at a time.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tune/sample_stats.hpp"

namespace tune::cli {

// A plain left-aligned text table.
void print_table(const std::vector<std::string>& header,
                 const std::vector<std::vector<std::string>>& rows);
// `j` indented by 2, invalid UTF-8 replaced.
void print_json(const nlohmann::json& j);
// Sample statistics as the export format writes them (a non-finite value as null).
nlohmann::json stats_json(const SampleStats& s);

}  // namespace tune::cli
