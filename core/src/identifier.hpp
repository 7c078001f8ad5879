// Whether a name is a C identifier ([A-Za-z_][A-Za-z0-9_]*): what a parameter's name must be to
// reach the kernel as a macro, and what configuration text may name.
#pragma once

#include <string_view>

namespace tune::detail {

inline bool is_identifier(std::string_view s) {
  if (s.empty()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!(alpha || (i > 0 && c >= '0' && c <= '9'))) return false;
  }
  return true;
}

}  // namespace tune::detail
