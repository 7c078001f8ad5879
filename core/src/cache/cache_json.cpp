// The JSON interchange format of `tune cache export` / `import`. See cache_json.hpp.
#include "cache/cache_json.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "cache/row_rules.hpp"
#include "tune/backend/hash.hpp"

namespace tune {
namespace {

using nlohmann::json;

constexpr std::string_view kFormat = "libtune-cache";
constexpr std::int64_t kFormatVersion = 1;
// Refuse absurd inputs before parsing them (a cache export is a few MB at most).
constexpr std::size_t kMaxDocumentBytes = std::size_t{256} << 20;

json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

bool parse_hex64(const std::string& s, std::uint64_t* out) {
  if (s.size() < 3 || s.size() > 18 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) return false;
  std::uint64_t v = 0;
  for (std::size_t i = 2; i < s.size(); ++i) {
    char c = s[i];
    unsigned d;
    if (c >= '0' && c <= '9')
      d = static_cast<unsigned>(c - '0');
    else if (c >= 'a' && c <= 'f')
      d = static_cast<unsigned>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      d = static_cast<unsigned>(c - 'A' + 10);
    else
      return false;
    v = (v << 4) | d;
  }
  *out = v;
  return true;
}

// Reads a required string member; false (with `why`) when missing or not a string.
bool get_string(const json& obj, const char* name, std::string* out, std::string* why,
                bool required = true) {
  auto it = obj.find(name);
  if (it == obj.end()) {
    if (!required) return true;
    *why = std::string("missing '") + name + "'";
    return false;
  }
  if (!it->is_string()) {
    *why = std::string("'") + name + "' is not a string";
    return false;
  }
  *out = it->get_ref<const std::string&>();
  return true;
}

// One element of "rows"; false (with `why`) when it is malformed.
bool parse_row(const json& j, CacheRow* row, std::string* why) {
  if (!j.is_object()) {
    *why = "not an object";
    return false;
  }
  StoreKey& k = row->key;
  StoredResult& r = row->result;
  if (!get_string(j, "kernel", &k.kernel, why) || !get_string(j, "key", &k.key, why) ||
      !get_string(j, "device", &k.device, why) || !get_string(j, "toolchain", &k.toolchain, why) ||
      !get_string(j, "config", &r.config, why) ||
      !get_string(j, "reason", &r.reason, why, /*required=*/false)) {
    return false;
  }
  if (k.kernel.empty()) {
    *why = "empty 'kernel'";
    return false;
  }
  auto sh = j.find("source_hash");
  if (sh == j.end()) {
    *why = "missing 'source_hash'";
    return false;
  }
  if (sh->is_number_unsigned()) {
    k.source_hash = sh->get<std::uint64_t>();
  } else if (!sh->is_string() || !parse_hex64(sh->get_ref<const std::string&>(), &k.source_hash)) {
    *why = "'source_hash' is not a 0x-prefixed 64-bit hex string";
    return false;
  }
  std::string status;
  if (!get_string(j, "status", &status, why)) return false;
  if (!parse_status_code(status, &r.status)) {
    *why = "unknown status '" + status + "'";
    return false;
  }
  auto t = j.find("unix_time");
  if (t != j.end()) {
    if (t->is_number_unsigned() &&
        t->get<std::uint64_t>() <= static_cast<std::uint64_t>(INT64_MAX)) {
      r.unix_time = static_cast<std::int64_t>(t->get<std::uint64_t>());
    } else if (t->is_number_integer() && t->get<std::int64_t>() >= 0) {
      r.unix_time = t->get<std::int64_t>();
    } else {
      *why = "'unix_time' is not a non-negative integer";
      return false;
    }
  }
  if (auto v = j.find("verified"); v != j.end()) {  // optional: absent is not checked
    if (!v->is_boolean()) {
      *why = "'verified' is not a boolean";
      return false;
    }
    r.verified = v->get<bool>();
  }
  bool ok_row = r.status == StatusCode::ok;
  const double inf = std::numeric_limits<double>::infinity();
  SampleStats& s = r.stats;
  s = SampleStats{};
  if (!ok_row) s.min = s.p20 = s.median = s.p80 = s.max = s.mean = inf;
  auto st = j.find("stats");
  if (st == j.end()) {
    if (ok_row) {
      *why = "an ok row without 'stats'";
      return false;
    }
  } else {
    if (!st->is_object()) {
      *why = "'stats' is not an object";
      return false;
    }
    auto c = st->find("count");
    if (c != st->end()) {
      if (!c->is_number_unsigned() ||
          c->get<std::uint64_t>() > std::numeric_limits<std::uint32_t>::max()) {
        *why = "'stats.count' is not a 32-bit unsigned integer";
        return false;
      }
      s.count = static_cast<std::uint32_t>(c->get<std::uint64_t>());
    }
    struct Field {
      const char* name;
      double* dst;
    } fields[] = {{"min", &s.min}, {"p20", &s.p20}, {"median", &s.median},
                  {"p80", &s.p80}, {"max", &s.max}, {"mean", &s.mean}};
    for (const Field& f : fields) {
      auto v = st->find(f.name);
      if (v == st->end() || v->is_null()) {
        if (ok_row) {
          *why = std::string("an ok row without 'stats.") + f.name + "'";
          return false;
        }
        continue;
      }
      if (!v->is_number()) {
        *why = std::string("'stats.") + f.name + "' is not a number";
        return false;
      }
      *f.dst = v->get<double>();
    }
  }
  std::string canonical;
  Status check = check_stored_row(r, &canonical);
  if (!check.ok()) {
    *why = check.message();
    return false;
  }
  r.config = std::move(canonical);
  return true;
}

}  // namespace

std::string cache_rows_to_json(std::span<const CacheRow> rows) {
  json list = json::array();
  for (const CacheRow& row : rows) {
    const StoredResult& r = row.result;
    json stats = {{"count", r.stats.count},
                  {"min", number_or_null(r.stats.min)},
                  {"p20", number_or_null(r.stats.p20)},
                  {"median", number_or_null(r.stats.median)},
                  {"p80", number_or_null(r.stats.p80)},
                  {"max", number_or_null(r.stats.max)},
                  {"mean", number_or_null(r.stats.mean)}};
    list.push_back({{"kernel", row.key.kernel},
                    {"source_hash", "0x" + hex64(row.key.source_hash)},
                    {"key", row.key.key},
                    {"device", row.key.device},
                    {"toolchain", row.key.toolchain},
                    {"config", r.config},
                    {"status", std::string(to_string(r.status))},
                    {"reason", r.reason},
                    {"unix_time", r.unix_time},
                    {"verified", r.verified},
                    {"verification", std::string(to_string(verification_of(r.status, r.verified)))},
                    {"stats", std::move(stats)}});
  }
  json doc = {{"format", kFormat}, {"version", kFormatVersion}, {"rows", std::move(list)}};
  // Invalid UTF-8 in a stored string (a compiler log in `reason`) is replaced, not thrown.
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

Result<std::vector<CacheRow>> cache_rows_from_json(std::string_view text,
                                                   std::vector<std::string>* problems) {
  if (text.size() > kMaxDocumentBytes)
    return Status(StatusCode::invalid_argument, "cache document larger than 256 MiB");
  json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded())
    return Status(StatusCode::data_loss, "not a JSON document (or not valid UTF-8 JSON)");
  if (!doc.is_object())
    return Status(StatusCode::invalid_argument, "not a libtune cache export: not an object");
  auto fmt = doc.find("format");
  if (fmt == doc.end() || !fmt->is_string() || fmt->get_ref<const std::string&>() != kFormat)
    return Status(StatusCode::invalid_argument,
                  "not a libtune cache export: 'format' is not \"libtune-cache\"");
  auto ver = doc.find("version");
  if (ver == doc.end() || !ver->is_number_integer())
    return Status(StatusCode::invalid_argument, "missing integer 'version'");
  if (ver->get<std::int64_t>() != kFormatVersion)
    return Status(StatusCode::invalid_argument,
                  "format version " + std::to_string(ver->get<std::int64_t>()) +
                      " (this libtune reads version " + std::to_string(kFormatVersion) + ")");
  auto rows = doc.find("rows");
  if (rows == doc.end() || !rows->is_array())
    return Status(StatusCode::invalid_argument, "missing array 'rows'");
  std::vector<CacheRow> out;
  out.reserve(rows->size());
  std::size_t index = 0;
  for (const json& j : *rows) {
    CacheRow row;
    std::string why;
    if (parse_row(j, &row, &why)) {
      out.push_back(std::move(row));
    } else if (problems != nullptr) {
      problems->push_back("row " + std::to_string(index) + ": " + why);
    }
    ++index;
  }
  return out;
}

}  // namespace tune
