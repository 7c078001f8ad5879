#include "tune/status.hpp"

#include <array>

namespace tune {
namespace {
constexpr std::array<std::string_view, 16> kNames = {"ok",
                                                     "invalid_argument",
                                                     "not_found",
                                                     "unavailable",
                                                     "compile_error",
                                                     "out_of_resources",
                                                     "launch_failed",
                                                     "timeout",
                                                     "wrong_output",
                                                     "device_lost",
                                                     "all_failed",
                                                     "data_loss",
                                                     "io_error",
                                                     "internal",
                                                     "callback_failed",
                                                     "failed_precondition"};
}  // namespace

std::string_view to_string(StatusCode code) noexcept {
  auto i = static_cast<std::size_t>(code);
  return i < kNames.size() ? kNames[i] : std::string_view("unknown");
}

bool parse_status_code(std::string_view name, StatusCode* out) noexcept {
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) {
      *out = static_cast<StatusCode>(i);
      return true;
    }
  }
  return false;
}

Status& Status::with_context(std::string_view context) & {
  if (!ok()) message_ = std::string(context) + ": " + message_;
  return *this;
}

std::string Status::to_string() const {
  if (ok()) return "ok";
  return std::string(tune::to_string(code_)) + ": " + message_;
}

}  // namespace tune
