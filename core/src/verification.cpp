// The three states of a configuration's output. See tune/store.hpp.
#include "tune/store.hpp"

namespace tune {

std::string_view to_string(Verification v) noexcept {
  switch (v) {
    case Verification::verified:
      return "verified";
    case Verification::wrong_output:
      return "wrong_output";
    case Verification::not_checked:
      break;
  }
  return "not_checked";
}

Verification verification_of(StatusCode status, bool checked) noexcept {
  if (status == StatusCode::wrong_output) return Verification::wrong_output;
  return checked ? Verification::verified : Verification::not_checked;
}

}  // namespace tune
