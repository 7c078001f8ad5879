// The row rules. See row_rules.hpp.
#include "cache/row_rules.hpp"

#include <chrono>
#include <cmath>
#include <utility>

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
  if (incoming.unix_time != existing.unix_time) return incoming.unix_time > existing.unix_time;
  return decision_time(incoming) > decision_time(existing);
}

std::int64_t decision_time(const StoredResult& row) noexcept {
  return row.decision ? row.decision->unix_time : -1;
}

Status check_stored_key(const StoreKey& key) {
  for (const auto& [name, value] :
       {std::pair<const char*, const std::string*>{"kernel", &key.kernel},
        {"device", &key.device},
        {"toolchain", &key.toolchain}}) {
    if (value->empty())
      return Status(StatusCode::invalid_argument, std::string("empty '") + name + "'");
  }
  return {};
}

Status check_stored_row(const StoredResult& row, std::string* canonical) {
  Result<Config> c = Config::parse(row.config);
  if (!c.ok())
    return Status(StatusCode::data_loss, "config does not parse: " + c.status().message());
  if (row.stats.count > kMaxPlausibleSampleCount)
    return Status(StatusCode::data_loss, "'stats.count' " + std::to_string(row.stats.count) +
                                             " is an implausible sample count");
  if (row.unix_time < 0 || row.unix_time > cache::now_unix() + kMaxFutureSeconds)
    return Status(StatusCode::data_loss,
                  "'unix_time' " + std::to_string(row.unix_time) + " is not a plausible date");
  const SampleStats& s = row.stats;
  const std::pair<const char*, double> stats[] = {{"min", s.min},       {"p20", s.p20},
                                                  {"median", s.median}, {"p80", s.p80},
                                                  {"max", s.max},       {"mean", s.mean}};
  const bool ok = row.status == StatusCode::ok;
  for (const auto& [name, v] : stats) {
    // A failed configuration's statistics are not measurements: NaN, +inf (how a failure is
    // timed) or whatever was measured before it failed, but never a negative time.
    if (!ok && (std::isnan(v) || v >= 0)) continue;
    if (ok && std::isfinite(v) && v >= kMinPlausibleTimeNs) continue;
    return Status(StatusCode::data_loss,
                  "'stats." + std::string(name) + "' = " + std::to_string(v) + " ns " +
                      (ok ? "is not a plausible time (finite, at least 1 ns)"
                          : "is negative (in a failed row too, a time is at least 0 or +inf)"));
  }
  if (ok) {
    if (s.count == 0) return Status(StatusCode::data_loss, "an ok row with 'stats.count' 0");
    double tol = 1e-9 * s.max;
    if (s.min > s.p20 + tol || s.p20 > s.median + tol || s.median > s.p80 + tol ||
        s.p80 > s.max + tol || s.mean < s.min - tol || s.mean > s.max + tol)
      return Status(StatusCode::data_loss,
                    "quantiles out of order ('stats.min' <= 'stats.p20' <= 'stats.median' <= "
                    "'stats.p80' <= 'stats.max', 'stats.mean' within: " +
                        s.to_string() + ")");
  }
  if (canonical != nullptr) *canonical = c->to_string();
  return {};
}

}  // namespace tune
