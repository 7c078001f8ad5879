// How much a tuning may spend: one knob for both the timing of each configuration and the
// number of configurations a search evaluates.
//
//   quick      a small fixed budget: short timing budgets and about 30 evaluated
//              configurations (a model-guided search where the space is larger);
//   standard   the default: the timing budgets of BenchOptions' defaults, every configuration
//              timed where the space is small enough, a model-guided search otherwise;
//   thorough   exhaustive when the space allows, and longer timing.
//
// The guide's timing and search pages give each preset's figures; fields a user sets in
// BenchOptions or KernelDef::search override the preset's.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tune {

enum class Effort : std::uint8_t { quick, standard, thorough };

std::string_view to_string(Effort e) noexcept;  // "quick", "standard", "thorough"
// The effort named `text` (as to_string prints it); nullopt for any other text.
std::optional<Effort> parse_effort(std::string_view text) noexcept;

}  // namespace tune
