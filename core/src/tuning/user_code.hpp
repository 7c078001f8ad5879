// Calling user code (KernelDef callbacks, the listener, a SearchStrategy) from the tuner.
//
// Every callback may throw. An exception never escapes into libtune's threads or through a
// noexcept frame: it becomes a callback_failed Status that names the callback and, where there
// is one, the configuration, so the call that ran it returns an error instead of terminating
// the process or leaving a key in flight. Internal to the core.
#pragma once

#include <exception>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "tune/config.hpp"
#include "tune/status.hpp"

namespace tune::detail {

// "threw: boom" for the exception in flight; call inside a catch.
std::string describe_current_exception();

// The Status for the exception in flight, thrown by the callback `what`; call inside a catch.
// A tune::Error that already carries a callback_failed Status (a constraint or derive step
// deeper down, see ConfigSpace) passes through unchanged.
Status current_exception_status(std::string_view what, const Config* config);

// The callback_failed Status for `what` (e.g. "pre_hook", "heuristic 'BK'") on `config`
// (null: none) with `why`.
Status callback_failure(std::string_view what, const Config* config, std::string_view why);

// Runs `fn()`; an exception becomes callback_failure(what, config, ...). For callbacks that
// return Status, the returned Status passes through unchanged.
template <class F>
Status call_user_status(std::string_view what, const Config* config, F&& fn) noexcept {
  try {
    return std::forward<F>(fn)();
  } catch (...) {
    return current_exception_status(what, config);
  }
}

// Runs `fn()` returning a value into `*out`; an exception becomes a callback_failure.
template <class T, class F>
Status call_user(std::string_view what, const Config* config, T* out, F&& fn) noexcept {
  try {
    *out = std::forward<F>(fn)();
    return {};
  } catch (...) {
    return current_exception_status(what, config);
  }
}

}  // namespace tune::detail
