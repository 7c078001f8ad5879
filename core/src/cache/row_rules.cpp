// The row rules. See row_rules.hpp.
#include "cache/row_rules.hpp"

#include <chrono>
#include <cmath>

#include "tune/config.hpp"

namespace tune {
namespace {

// How far ahead of now a row's unix time may be (clocks differ between machines).
constexpr std::int64_t kMaxFutureSeconds = 366 * 24 * 3600;

}  // namespace

namespace cache {

std::int64_t now_unix() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace cache

bool has_better_provenance(const StoredResult& incoming, const StoredResult& existing) noexcept {
  bool in_ok = incoming.status == StatusCode::ok;
  bool ex_ok = existing.status == StatusCode::ok;
  if (in_ok != ex_ok) return in_ok;
  if (in_ok && incoming.verified != existing.verified) return incoming.verified;
  if (incoming.stats.count != existing.stats.count)
    return incoming.stats.count > existing.stats.count;
  return incoming.unix_time > existing.unix_time;
}

Status check_stored_row(const StoredResult& row, std::string* canonical) {
  Result<Config> c = Config::parse(row.config);
  if (!c.ok())
    return Status(StatusCode::data_loss, "config does not parse: " + c.status().message());
  if (row.stats.count > kMaxPlausibleSampleCount)
    return Status(StatusCode::data_loss,
                  "sample count " + std::to_string(row.stats.count) + " is implausible");
  if (row.unix_time < 0 || row.unix_time > cache::now_unix() + kMaxFutureSeconds)
    return Status(StatusCode::data_loss,
                  "unix time " + std::to_string(row.unix_time) + " is not a plausible date");
  if (row.status == StatusCode::ok) {
    const SampleStats& s = row.stats;
    if (s.count == 0) return Status(StatusCode::data_loss, "an ok row with no samples");
    for (double v : {s.min, s.p20, s.median, s.p80, s.max, s.mean}) {
      if (!std::isfinite(v) || v < kMinPlausibleTimeNs)
        return Status(StatusCode::data_loss, "statistic " + std::to_string(v) +
                                                 " ns is not a plausible time (finite, at "
                                                 "least 1 ns)");
    }
    double tol = 1e-9 * s.max;
    if (s.min > s.p20 + tol || s.p20 > s.median + tol || s.median > s.p80 + tol ||
        s.p80 > s.max + tol || s.mean < s.min - tol || s.mean > s.max + tol)
      return Status(StatusCode::data_loss,
                    "quantiles out of order (min <= p20 <= median <= p80 <= max, mean within: " +
                        s.to_string() + ")");
  }
  if (canonical != nullptr) *canonical = c->to_string();
  return {};
}

}  // namespace tune
