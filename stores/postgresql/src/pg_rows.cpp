// The server's text format of a row. See pg_rows.hpp.
#include "pg_rows.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>

#include "cache/decision_codec.hpp"
#include "cache/row_codec.hpp"
#include "cache/row_rules.hpp"
#include "cache/sqlite_db.hpp"

namespace tune::pg {
namespace {

Param real_param(double v) {
  if (std::isnan(v)) return std::nullopt;
  if (std::isinf(v)) return std::string(v > 0 ? "Infinity" : "-Infinity");
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, end);
}

bool parse_int(std::string_view t, std::int64_t* out) {
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), *out);
  return ec == std::errc() && end == t.data() + t.size();
}

// libpq's text of a double: digits, "Infinity", "-Infinity" or "NaN"; NULL is NaN.
bool parse_real(const Answer& a, int row, int col, double* out) {
  if (a.null(row, col)) {
    *out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  const std::string_view t = a.text(row, col);
  if (t == "Infinity" || t == "-Infinity") {
    *out = t[0] == '-' ? -std::numeric_limits<double>::infinity()
                       : std::numeric_limits<double>::infinity();
    return true;
  }
  if (t == "NaN") {
    *out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), *out);
  return ec == std::errc() && end == t.data() + t.size();
}

bool read_values(const Answer& a, int row, int first, StoredResult* r, std::string* why) {
  static constexpr const char* kNames[] = {"config", "status", "reason", "count", "min",      "p20",
                                           "median", "p80",    "max",    "mean",  "unix_time"};
  for (int i : {0, 1, 2, 3, 10}) {
    if (a.null(row, first + i)) {
      *why = std::string("column ") + kNames[i] + " holds NULL";
      return false;
    }
  }
  const std::string status(a.text(row, first + 1));
  if (!parse_status_code(status, &r->status)) {
    *why = "unknown status '" + status + "'";
    return false;
  }
  r->reason = std::string(a.text(row, first + 2));
  std::int64_t count = 0;
  if (!parse_int(a.text(row, first + 3), &count) || count < 0 ||
      count > std::numeric_limits<std::uint32_t>::max()) {
    *why = "sample count " + std::string(a.text(row, first + 3)) + " out of range";
    return false;
  }
  r->stats.count = static_cast<std::uint32_t>(count);
  double* fields[] = {&r->stats.min, &r->stats.p20, &r->stats.median,
                      &r->stats.p80, &r->stats.max, &r->stats.mean};
  for (int i = 0; i < 6; ++i) {
    if (!parse_real(a, row, first + 4 + i, fields[i])) {
      *why = std::string("column ") + kNames[4 + i] + " holds '" +
             std::string(a.text(row, first + 4 + i)) + "'";
      return false;
    }
  }
  if (!parse_int(a.text(row, first + 10), &r->unix_time)) {
    *why = "column unix_time holds '" + std::string(a.text(row, first + 10)) + "'";
    return false;
  }
  r->verified = a.text(row, first + 12) == "t";
  return cache::decode_decision(a.text(row, first + 13), &r->decision, why);
}

}  // namespace

void append_key(const StoreKey& key, std::vector<Param>* params) {
  params->emplace_back(key.kernel);
  params->emplace_back(std::to_string(cache::to_db(key.source_hash)));
  params->emplace_back(key.key);
  params->emplace_back(key.device);
  params->emplace_back(key.toolchain);
}

void append_row(const StoreKey& key, const StoredResult& in, std::vector<Param>* params) {
  StoredResult r = in;
  if (r.unix_time == 0) r.unix_time = cache::now_unix();
  params->emplace_back(r.config);
  params->emplace_back(std::string(to_string(r.status)));
  params->emplace_back(r.reason);
  params->emplace_back(std::to_string(r.stats.count));
  for (double v :
       {r.stats.min, r.stats.p20, r.stats.median, r.stats.p80, r.stats.max, r.stats.mean})
    params->push_back(real_param(v));
  params->emplace_back(std::to_string(r.unix_time));
  params->emplace_back(std::to_string(cache::row_checksum(key, r)));
  params->emplace_back(r.verified ? "true" : "false");
  params->emplace_back(cache::encode_decision(r.decision));
}

bool read_key(const Answer& a, int row, int first, StoreKey* key, std::string* why) {
  std::int64_t hash = 0;
  if (!parse_int(a.text(row, first + 1), &hash)) {
    *why = "column source_hash holds '" + std::string(a.text(row, first + 1)) + "'";
    return false;
  }
  key->kernel = std::string(a.text(row, first));
  key->source_hash = cache::from_db(hash);
  key->key = std::string(a.text(row, first + 2));
  key->device = std::string(a.text(row, first + 3));
  key->toolchain = std::string(a.text(row, first + 4));
  return true;
}

bool read_row(const Answer& a, int row, int first, const StoreKey& key, StoredResult* r,
              std::string* why) {
  r->config = std::string(a.text(row, first));
  if (!read_values(a, row, first, r, why)) return false;
  std::int64_t checksum = 0;
  if (!a.null(row, first + 11) && (!parse_int(a.text(row, first + 11), &checksum) ||
                                   checksum != cache::row_checksum(key, *r))) {
    *why = "checksum mismatch (the row was altered)";
    return false;
  }
  // A failed configuration is timed as +inf; NULL is how a non-finite value may come back.
  for (double* f : {&r->stats.min, &r->stats.p20, &r->stats.median, &r->stats.p80, &r->stats.max,
                    &r->stats.mean})
    if (std::isnan(*f) && r->status != StatusCode::ok) *f = std::numeric_limits<double>::infinity();
  const Status st = check_stored_row(*r, &r->config);
  if (!st.ok()) *why = st.message();
  return st.ok();
}

}  // namespace tune::pg
