#include "user_code.hpp"

#include <stdexcept>

namespace tune::detail {

std::string describe_current_exception() {
  try {
    throw;
  } catch (const std::exception& e) {
    return std::string("threw: ") + e.what();
  } catch (...) {
    return "threw an exception that is not a std::exception";
  }
}

Status current_exception_status(std::string_view what, const Config* config) {
  try {
    throw;
  } catch (const Error& e) {
    if (e.status().code() == StatusCode::callback_failed) return e.status();
    return callback_failure(what, config, "threw: " + e.status().to_string());
  } catch (...) {
    return callback_failure(what, config, describe_current_exception());
  }
}

Status callback_failure(std::string_view what, const Config* config, std::string_view why) {
  std::string msg(what);
  if (config != nullptr) msg += " for config {" + config->to_string() + "}";
  msg += " ";
  msg += why;
  return Status(StatusCode::callback_failed, std::move(msg));
}

}  // namespace tune::detail
