// The row codec. See row_codec.hpp.
#include "cache/row_codec.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>

#include "cache/decision_codec.hpp"
#include "cache/row_rules.hpp"
#include "tune/backend/hash.hpp"

namespace tune::cache {
namespace {

std::uint64_t double_bits(double v) noexcept {
  std::uint64_t u = 0;
  static_assert(sizeof u == sizeof v);
  std::memcpy(&u, &v, sizeof u);
  return u;
}

const char* type_name(int t) noexcept {
  switch (t) {
    case SQLITE_INTEGER:
      return "an integer";
    case SQLITE_FLOAT:
      return "a real";
    case SQLITE_TEXT:
      return "text";
    case SQLITE_BLOB:
      return "a blob";
    default:
      return "NULL";
  }
}

// The SQLite type each column of kResultColumns must have (damage can leave text in a
// statistics column, which would otherwise read as 0.0).
bool check_column_types(const Stmt& s, int first, std::string* why) {
  static constexpr const char* kNames[] = {"config", "status", "reason", "count", "min",      "p20",
                                           "median", "p80",    "max",    "mean",  "unix_time"};
  for (int i = 0; i < 11; ++i) {
    int t = s.type(first + i);
    bool ok = i < 3               ? t == SQLITE_TEXT
              : i == 3 || i == 10 ? t == SQLITE_INTEGER
                                  : t == SQLITE_FLOAT || t == SQLITE_INTEGER || t == SQLITE_NULL;
    if (!ok) {
      *why = std::string("column ") + kNames[i] + " holds " + type_name(t);
      return false;
    }
  }
  int c = s.type(first + 11);
  if (c != SQLITE_INTEGER && c != SQLITE_NULL) {
    *why = std::string("column checksum holds ") + type_name(c);
    return false;
  }
  int v = s.type(first + 12);
  if (v != SQLITE_INTEGER) {
    *why = std::string("column verified holds ") + type_name(v);
    return false;
  }
  if (std::int64_t flag = s.int64(first + 12); flag != 0 && flag != 1) {
    *why = "column verified holds " + std::to_string(flag) + " (0 or 1)";
    return false;
  }
  // NULL only in a record salvaged from the pages of a file from before the column.
  if (int d = s.type(first + 13); d != SQLITE_TEXT && d != SQLITE_NULL) {
    *why = std::string("column decision holds ") + type_name(d);
    return false;
  }
  return true;
}

}  // namespace

std::int64_t row_checksum(const StoreKey& k, const StoredResult& r) noexcept {
  std::uint64_t h = stable_hash(k.kernel);
  for (std::string_view t :
       {std::string_view(k.key), std::string_view(k.device), std::string_view(k.toolchain),
        std::string_view(r.config), to_string(r.status), std::string_view(r.reason)})
    h = hash_combine(stable_hash(t, h), t.size());
  h = hash_combine(h, k.source_hash);
  h = hash_combine(h, r.stats.count);
  for (double v :
       {r.stats.min, r.stats.p20, r.stats.median, r.stats.p80, r.stats.max, r.stats.mean})
    h = hash_combine(h, std::isnan(v) ? 0x7ff8000000000000ULL : double_bits(v));
  h = hash_combine(h, static_cast<std::uint64_t>(r.unix_time));
  if (r.verified) h = hash_combine(h, 0x76657269666965ULL);  // "verifie"
  if (r.decision) {
    const std::string d = encode_decision(r.decision);
    h = hash_combine(stable_hash(d, h), d.size());
  }
  return to_db(h);
}

void bind_key(Stmt& s, const StoreKey& k) {
  s.bind(1, std::string_view(k.kernel));
  s.bind(2, to_db(k.source_hash));
  s.bind(3, std::string_view(k.key));
  s.bind(4, std::string_view(k.device));
  s.bind(5, std::string_view(k.toolchain));
}

void read_key(const Stmt& s, StoreKey* k) {
  k->kernel = s.text(0);
  k->source_hash = from_db(s.int64(1));
  k->key = s.text(2);
  k->device = s.text(3);
  k->toolchain = s.text(4);
}

bool key_columns_ok(const Stmt& s) {
  return s.type(0) == SQLITE_TEXT && s.type(1) == SQLITE_INTEGER && s.type(2) == SQLITE_TEXT &&
         s.type(3) == SQLITE_TEXT && s.type(4) == SQLITE_TEXT;
}

void bind_result(Stmt& s, int first, const StoreKey& key, const StoredResult& in) {
  StoredResult r = in;
  if (r.unix_time == 0) r.unix_time = now_unix();
  s.bind(first, std::string_view(r.config));
  s.bind(first + 1, to_string(r.status));
  s.bind(first + 2, std::string_view(r.reason));
  s.bind(first + 3, static_cast<std::int64_t>(r.stats.count));
  s.bind(first + 4, r.stats.min);
  s.bind(first + 5, r.stats.p20);
  s.bind(first + 6, r.stats.median);
  s.bind(first + 7, r.stats.p80);
  s.bind(first + 8, r.stats.max);
  s.bind(first + 9, r.stats.mean);
  s.bind(first + 10, r.unix_time);
  s.bind(first + 11, row_checksum(key, r));
  s.bind(first + 12, static_cast<std::int64_t>(r.verified ? 1 : 0));
  s.bind(first + 13, std::string_view(encode_decision(r.decision)));
}

bool read_result(const Stmt& s, int first, const StoreKey& key, StoredResult* r, std::string* why) {
  r->config = s.text(first);
  if (!check_column_types(s, first, why)) return false;
  std::string status = s.text(first + 1);
  if (!parse_status_code(status, &r->status)) {
    *why = "unknown status '" + status + "'";
    return false;
  }
  r->reason = s.text(first + 2);
  std::int64_t count = s.int64(first + 3);
  if (count < 0 || count > std::numeric_limits<std::uint32_t>::max()) {
    *why = "sample count " + std::to_string(count) + " out of range";
    return false;
  }
  r->stats.count = static_cast<std::uint32_t>(count);
  double* fields[] = {&r->stats.min, &r->stats.p20, &r->stats.median,
                      &r->stats.p80, &r->stats.max, &r->stats.mean};
  for (int i = 0; i < 6; ++i) *fields[i] = s.real(first + 4 + i);
  r->unix_time = s.int64(first + 10);
  r->verified = s.int64(first + 12) == 1;
  if (!decode_decision(s.text(first + 13), &r->decision, why)) return false;
  if (s.type(first + 11) == SQLITE_INTEGER && s.int64(first + 11) != row_checksum(key, *r)) {
    *why = "checksum mismatch (the row was altered)";
    return false;
  }
  // A failed configuration is timed as +inf; NULL is how a non-finite value may come back.
  for (double* f : fields)
    if (std::isnan(*f) && r->status != StatusCode::ok) *f = std::numeric_limits<double>::infinity();
  return true;
}

}  // namespace tune::cache
