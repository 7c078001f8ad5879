#include "session_kit.hpp"

#include <cstdio>
#include <ctime>

#include "tune/log.hpp"
#include "user_code.hpp"

namespace tune::detail {

std::string format_ms(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", ms);
  return buf;
}

Status launch_dims(const KernelDef& def, const Config& c, ArgList args, LaunchDims* out) {
  TUNE_RETURN_IF_ERROR(call_user("dims", &c, out, [&] { return def.dims(c, args); }));
  if (out->grid.product() == 0 || out->block.product() == 0) {
    return Status(StatusCode::invalid_argument, "dims() returned grid " + to_string(out->grid) +
                                                    ", block " + to_string(out->block) +
                                                    ": a zero dimension launches nothing");
  }
  return {};
}

Status verify_once(Device& dev, const KernelDef& def, HookRunner& hooks,
                   const CompiledKernel& kernel, const LaunchDims& dims, ArgList args,
                   const Config& config) {
  hooks.set_config(&config);
  TUNE_RETURN_IF_ERROR(hooks.before_launch());
  Status launched = dev.launch(kernel, dims, args);
  Status post = hooks.flush_post(launched);
  TUNE_RETURN_IF_ERROR(launched);
  TUNE_RETURN_IF_ERROR(post);
  TUNE_RETURN_IF_ERROR(dev.synchronize());
  Status st = call_user_status("verify", &config, [&] { return def.verify(dev, args, config); });
  if (!st.ok() && st.code() != StatusCode::device_lost && st.code() != StatusCode::wrong_output &&
      st.code() != StatusCode::callback_failed)
    st = Status(StatusCode::wrong_output, st.message());
  return st;
}

bool ends_tuning(const Status& st) noexcept {
  return st.code() == StatusCode::callback_failed || st.code() == StatusCode::device_lost;
}

StoredResult row_of(const ConfigResult& r) {
  return {r.config.to_string(), r.status.code(), r.status.message(), r.stats,
          static_cast<std::int64_t>(std::time(nullptr))};
}

bool ProgressNotifier::due(bool done) {
  if (!listener_) return false;
  const auto now = Clock::now();
  if (!done && now - last_ < kInterval) return false;
  last_ = now;
  return true;
}

void ProgressNotifier::send(const TuningProgress& p) {
  Status st = call_user_status("progress", nullptr, [&] {
    listener_(p);
    return Status();
  });
  if (!st.ok() && !warned_) {  // once per tuning, not at every event
    warned_ = true;
    log_warning("kernel " + kernel_ + ": " + st.message() + " (ignored)");
  }
}

}  // namespace tune::detail
