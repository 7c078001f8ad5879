// Status codes that carry context, and Result<T> (a value or a Status).
//
// Every fallible call in libtune returns one of these; nothing in the library throws except
// Result<T>::value() on an error, which throws tune::Error for callers who prefer exceptions.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace tune {

enum class StatusCode : std::uint8_t {
  ok = 0,
  invalid_argument,     // a user mistake: unknown parameter, missing key argument, bad value
  not_found,            // a named thing (backend, device, kernel, file) does not exist
  unavailable,          // no driver, no device, backend not compiled in
  compile_error,        // the kernel source did not compile for this configuration
  out_of_resources,     // a configuration exceeds a device limit (threads, shared memory, regs)
  launch_failed,        // the launch was rejected by the driver
  timeout,              // a launch or wait did not finish within its limit
  wrong_output,         // a configuration ran but its output failed verification
  device_lost,          // a sticky device error; the device must be reopened
  all_failed,           // every configuration of a tuning failed (message lists each reason)
  data_loss,            // stored data (cache file) is corrupt or unreadable
  io_error,             // a file could not be read or written
  internal,             // a bug in libtune
  callback_failed,      // a user callback (dims, a hook, a heuristic, a listener...) threw or
                        // returned something invalid; the message names it and the config
  failed_precondition,  // the call cannot be done in the state the caller is in (a new key
                        // met while the caller's stream captures a graph); the message says
                        // what to do first
};

// A stable lowercase name for a code ("compile_error"), used in logs and stored results.
std::string_view to_string(StatusCode code) noexcept;
// Parses a name produced by to_string; returns false for an unknown name.
bool parse_status_code(std::string_view name, StatusCode* out) noexcept;

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok_status() { return {}; }
  bool ok() const noexcept { return code_ == StatusCode::ok; }
  StatusCode code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }

  // Prepends context ("compiling matmul{BM=64}: ") so the message reads outermost-first.
  // An ok status stays ok. The const overload returns a changed copy.
  Status& with_context(std::string_view context) &;
  Status&& with_context(std::string_view context) && { return std::move(with_context(context)); }
  Status with_context(std::string_view context) const& {
    Status copy = *this;
    copy.with_context(context);
    return copy;
  }
  // "compile_error: <message>".
  std::string to_string() const;

 private:
  StatusCode code_ = StatusCode::ok;
  std::string message_;
};

inline Status make_status(StatusCode code, std::string message) {
  return Status(code, std::move(message));
}

class Error : public std::runtime_error {
 public:
  explicit Error(Status status)
      : std::runtime_error(status.to_string()), status_(std::move(status)) {}
  const Status& status() const noexcept { return status_; }

 private:
  Status status_;
};

// A value of type T or a non-ok Status. Constructing from an ok Status is a bug (internal).
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    if (std::get<Status>(v_).ok()) v_ = Status(StatusCode::internal, "Result built from ok status");
  }

  bool ok() const noexcept { return std::holds_alternative<T>(v_); }
  explicit operator bool() const noexcept { return ok(); }

  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& operator*() & { return std::get<T>(v_); }
  const T& operator*() const& { return std::get<T>(v_); }
  T* operator->() { return &std::get<T>(v_); }
  const T* operator->() const { return &std::get<T>(v_); }

  // Throws tune::Error when this holds a Status.
  T& value() & {
    if (!ok()) throw Error(std::get<Status>(v_));
    return std::get<T>(v_);
  }
  T&& value() && {
    if (!ok()) throw Error(std::get<Status>(v_));
    return std::move(std::get<T>(v_));
  }

 private:
  std::variant<T, Status> v_;
};

// Throws tune::Error if `status` is not ok; for callers who prefer exceptions.
inline void throw_if_error(const Status& status) {
  if (!status.ok()) throw Error(status);
}

}  // namespace tune

// Returns early from the enclosing function with the status of `expr` when it is not ok.
#define TUNE_RETURN_IF_ERROR(expr)               \
  do {                                           \
    ::tune::Status tune_status_ = (expr);        \
    if (!tune_status_.ok()) return tune_status_; \
  } while (0)

// Evaluates `expr`, a Result<T>: when it holds an error, returns that Status from the enclosing
// function (which returns Status or any Result<U>); otherwise moves the value into `lhs`, which
// may declare a variable:
//   TUNE_ASSIGN_OR_RETURN(auto dev, tune::open_device("vulkan"));
//   TUNE_ASSIGN_OR_RETURN(config, tuner->tune(*dev, args));
// One statement; `expr` may contain commas. Not inside a bare `if` without braces.
#define TUNE_ASSIGN_OR_RETURN(lhs, ...) \
  TUNE_ASSIGN_OR_RETURN_IMPL_(TUNE_STATUS_CONCAT_(tune_result_, __LINE__), lhs, __VA_ARGS__)
#define TUNE_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, ...) \
  auto tmp = (__VA_ARGS__);                        \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(*tmp)
#define TUNE_STATUS_CONCAT_(a, b) TUNE_STATUS_CONCAT_IMPL_(a, b)
#define TUNE_STATUS_CONCAT_IMPL_(a, b) a##b
