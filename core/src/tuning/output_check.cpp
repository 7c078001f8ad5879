#include "output_check.hpp"

#include <algorithm>
#include <cstdio>

#include "session_kit.hpp"
#include "tune/log.hpp"
#include "user_code.hpp"

namespace tune::detail {
namespace {

std::string tolerance_text(const Tolerance& t) {
  char buf[64];
  std::snprintf(buf, sizeof buf, " (tolerance abs %g, rel %g)", t.abs, t.rel);
  return buf;
}

}  // namespace

Status OutputCheck::prepare(HookRunner& hooks) {
  if (prepared_) return *prepared_;
  Status st;
  for (const ReferenceOutput& out : def_.reference.outputs) {
    st = prepare_output(out);
    if (!st.ok()) break;
  }
  if (st.ok()) st = run_reference_config(hooks);
  prepared_ = st;
  return st;
}

Status OutputCheck::prepare_output(const ReferenceOutput& out) {
  const std::string what = "reference output '" + out.arg + "'";
  const int at = def_.signature.index_of(out.arg);
  if (at < 0 || args_[static_cast<std::size_t>(at)].kind != ArgKind::buffer)
    return Status(StatusCode::invalid_argument, what + " is not a buffer argument of the kernel");
  const ArgValue& a = args_[static_cast<std::size_t>(at)];
  Expected e;
  e.arg = static_cast<std::size_t>(at);
  e.spec.type = a.type;
  e.spec.count = a.count;
  e.spec.tolerance = out.tolerance.value_or(default_tolerance(a.type));
  const std::uint64_t bytes = a.count * size_of(a.type);
  if (!out.expected) {
    if (!def_.reference.config)
      return Status(StatusCode::invalid_argument,
                    what + " has no `expected` and the reference has no configuration");
  } else {
    ExpectedOutput given;
    TUNE_RETURN_IF_ERROR(call_user_status("expected() of " + what, nullptr, [&] {
      auto r = out.expected(dev_, args_);
      if (!r.ok()) return Status(r.status()).with_context(what);
      given = std::move(*r);
      return Status();
    }));
    if (!given.host.empty()) {
      if (given.host.size() < bytes)
        return Status(StatusCode::invalid_argument, what + ": expected() gave " +
                                                        std::to_string(given.host.size()) +
                                                        " host bytes for " + std::to_string(bytes));
      auto buf = dev_.alloc(bytes);
      if (!buf.ok()) return buf.status().with_context(what);
      TUNE_RETURN_IF_ERROR(dev_.upload(**buf, given.host.data(), bytes).with_context(what));
      e.owned = std::move(*buf);
      e.buffer = e.owned.get();
    } else if (given.device != nullptr) {
      if (given.device->size_bytes() < bytes)
        return Status(StatusCode::invalid_argument, what + ": expected() gave a device buffer of " +
                                                        std::to_string(given.device->size_bytes()) +
                                                        " bytes for " + std::to_string(bytes));
      e.buffer = given.device;
    } else {
      return Status(StatusCode::invalid_argument, what + ": expected() gave no data");
    }
  }
  expected_.push_back(std::move(e));
  return {};
}

Status OutputCheck::run_reference_config(HookRunner& hooks) {
  const bool needed = std::any_of(expected_.begin(), expected_.end(),
                                  [](const Expected& e) { return e.buffer == nullptr; });
  if (!needed) return {};
  const Config& c = *def_.reference.config;
  const std::string what = "reference configuration {" + c.to_string() + "}";
  auto v = variants_.compile(dev_, src_, {c}).front().get();
  if (!v->status.ok()) return Status(v->status).with_context(what);
  LaunchDims dims;
  TUNE_RETURN_IF_ERROR(launch_dims(def_, c, args_, &dims).with_context(what));
  hooks.set_config(&c);
  TUNE_RETURN_IF_ERROR(hooks.before_launch().with_context(what));
  Status launched = dev_.launch(*v->kernel, dims, args_);
  Status post = hooks.flush_post(launched);
  TUNE_RETURN_IF_ERROR(launched.with_context(what));
  TUNE_RETURN_IF_ERROR(post);
  for (Expected& e : expected_) {
    if (e.buffer != nullptr) continue;
    DeviceBuffer& out = *args_[e.arg].buffer;
    const std::uint64_t bytes = e.spec.count * size_of(e.spec.type);
    auto buf = dev_.alloc(bytes);
    if (!buf.ok()) return buf.status().with_context(what + ": its output copy");
    TUNE_RETURN_IF_ERROR(dev_.copy(**buf, out, bytes).with_context(what));
    e.owned = std::move(*buf);
    e.buffer = e.owned.get();
  }
  return dev_.synchronize().with_context(what);
}

bool OutputCheck::verify_applies() const noexcept {
  if (verify_applies_) return *verify_applies_;
  bool applies = static_cast<bool>(def_.verify);
  if (applies && def_.verify_applies) {
    Status st =
        call_user("verify_applies", nullptr, &applies, [&] { return def_.verify_applies(args_); });
    if (!st.ok()) {
      log_warning("kernel '" + def_.name + "': " + st.to_string() +
                  "; its verify hook runs on every check");
      applies = true;
    }
  }
  verify_applies_ = applies;
  return applies;
}

Status OutputCheck::verify(HookRunner& hooks, const CompiledKernel& kernel, const Config& c) {
  TUNE_RETURN_IF_ERROR(hooks.snapshot());  // later calls find every buffer saved
  if (Status st = prepare(hooks); !st.ok())
    return Status(st).with_context("preparing the reference outputs");
  LaunchDims dims;
  TUNE_RETURN_IF_ERROR(launch_dims(def_, c, args_, &dims));
  hooks.set_config(&c);
  TUNE_RETURN_IF_ERROR(hooks.before_launch());
  Status launched = dev_.launch(kernel, dims, args_);
  Status post = hooks.flush_post(launched);
  TUNE_RETURN_IF_ERROR(launched);
  TUNE_RETURN_IF_ERROR(post);
  TUNE_RETURN_IF_ERROR(dev_.synchronize());
  Status st = check(c);
  if (st.code() == StatusCode::wrong_output && kernel.from_binary_cache())
    return forget_cached_binary(kernel, c, st);
  return st;
}

Status OutputCheck::forget_cached_binary(const CompiledKernel& kernel, const Config& c,
                                         const Status& st) {
  const std::string what = "kernel " + def_.name + " config {" + c.to_string() + "}";
  const bool evicted =
      dev_.evict_binary(kernel, what + ": its cached binary computed a wrong output");
  variants_.forget(dev_, c);  // the next compile of c runs the compiler
  untrusted_.insert(c.to_string());
  log_warning(what + ": the binary read from the binary cache computed a wrong output; " +
              (evicted ? "evicted, " : "") +
              "the next compile runs the compiler and this failure is not stored (" + st.message() +
              ")");
  return Status(StatusCode::wrong_output,
                "the binary from the binary cache computed a wrong output (" +
                    std::string(evicted ? "evicted" : "dropped") + "; " + st.message() + ")");
}

Status OutputCheck::check(const Config& c) {
  if (def_.verify) {
    Status st = call_user_status("verify", &c, [&] { return def_.verify(dev_, args_, c); });
    if (!st.ok() && st.code() != StatusCode::device_lost && st.code() != StatusCode::wrong_output &&
        st.code() != StatusCode::callback_failed)
      st = Status(StatusCode::wrong_output, st.message());
    TUNE_RETURN_IF_ERROR(st);
  }
  for (const Expected& e : expected_) {
    const std::string& name = def_.signature.decls()[e.arg].name;
    auto cmp = dev_.compare(*args_[e.arg].buffer, *e.buffer, e.spec);
    if (!cmp.ok()) {
      if (cmp.status().code() == StatusCode::device_lost) return cmp.status();
      return Status(cmp.status()).with_context("verifying output '" + name + "'");
    }
    if (!cmp->ok()) {
      return Status(StatusCode::wrong_output, "verification of output '" + name + "' (" +
                                                  std::string(to_string(e.spec.type)) +
                                                  "): " + cmp->to_string() +
                                                  tolerance_text(e.spec.tolerance));
    }
  }
  return {};
}

}  // namespace tune::detail
