#include "session_kit.hpp"

#include <algorithm>
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
  fill_unset_block(c, out);
  if (out->grid.product() == 0) {
    return Status(StatusCode::invalid_argument, "dims() returned grid " + to_string(out->grid) +
                                                    ": a zero dimension launches nothing");
  }
  return {};
}

void record_failed_check(ConfigResult& r, const Status& st, std::vector<StoredResult>& rows) {
  r.status = st;
  r.stats = SampleStats{};
  r.stats.median = kInf;
  const std::string text = r.config.to_string();
  const auto same = [&](const StoredResult& row) { return row.config == text; };
  rows.erase(std::remove_if(rows.begin(), rows.end(), same), rows.end());
  rows.push_back(row_of(r));
}

bool ends_tuning(const Status& st) noexcept {
  return st.code() == StatusCode::callback_failed || st.code() == StatusCode::device_lost;
}

StoredResult row_of(const ConfigResult& r) {
  StoredResult row;
  row.config = r.config.to_string();
  row.status = r.status.code();
  row.reason = r.status.message();
  row.stats = r.stats;
  row.unix_time = static_cast<std::int64_t>(std::time(nullptr));
  row.verified = r.verified;
  return row;
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
