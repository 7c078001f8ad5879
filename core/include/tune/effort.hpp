// How much a tuning may spend: one knob for both the timing of each configuration and the
// number of configurations a search evaluates.
//
//   quick      short timing budgets (5 ms warm-up, 20 ms of repetitions, no showdown) and
//              about 30 evaluated configurations (a model-guided search where the space is
//              larger);
//   standard   the default: today's timing (25 ms warm-up, 100 ms of repetitions, showdown),
//              every configuration timed up to 250 of them, a model-guided search of 250
//              evaluations otherwise;
//   thorough   longer timing (1 s warm-up, 400 ms of repetitions, longer sustained turns),
//              every configuration up to 4096, else a search of 1000.
//
// The guide's timing page and C++ guide give each preset's figures and reasons; fields a user
// sets in BenchOptions (or its expert part) or KernelDef::search override the preset's.
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
