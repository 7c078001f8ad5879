#include "tune/effort.hpp"

namespace tune {

std::string_view to_string(Effort e) noexcept {
  switch (e) {
    case Effort::quick:
      return "quick";
    case Effort::standard:
      return "standard";
    case Effort::thorough:
      return "thorough";
  }
  return "standard";
}

std::optional<Effort> parse_effort(std::string_view text) noexcept {
  for (Effort e : {Effort::quick, Effort::standard, Effort::thorough})
    if (to_string(e) == text) return e;
  return std::nullopt;
}

}  // namespace tune
