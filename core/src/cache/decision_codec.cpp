// The decision codec. See decision_codec.hpp.
#include "cache/decision_codec.hpp"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

namespace tune::cache {
namespace {

using json = nlohmann::json;

// NaN (no runner-up) as null: JSON has no NaN.
json real_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

bool read_real(const json& j, const char* name, double* out, std::string* why) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) {
    *out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (!it->is_number()) {
    *why = std::string("decision '") + name + "' is not a number";
    return false;
  }
  *out = it->get<double>();
  return true;
}

bool read_text(const json& j, const char* name, std::string* out, std::string* why) {
  auto it = j.find(name);
  if (it == j.end()) return true;
  if (!it->is_string()) {
    *why = std::string("decision '") + name + "' is not a string";
    return false;
  }
  *out = it->get<std::string>();
  return true;
}

template <typename Int>
bool read_count(const json& j, const char* name, Int* out, std::string* why) {
  auto it = j.find(name);
  if (it == j.end()) return true;
  if (!it->is_number_integer() || it->get<std::int64_t>() < 0 ||
      it->get<std::int64_t>() > static_cast<std::int64_t>(std::numeric_limits<Int>::max())) {
    *why = std::string("decision '") + name + "' is not a count";
    return false;
  }
  *out = static_cast<Int>(it->get<std::int64_t>());
  return true;
}

}  // namespace

std::string encode_decision(const std::optional<DecisionRecord>& d) {
  if (!d) return {};
  json j = {{"runner_up", d->runner_up},
            {"margin", real_or_null(d->margin)},
            {"confidence", real_or_null(d->confidence)},
            {"timing", d->timing},
            {"sustained_turns", d->sustained_turns},
            {"library_version", d->library_version},
            {"unix_time", d->unix_time},
            {"tunings", d->tunings},
            {"flips", d->flips}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

bool decode_decision(std::string_view text, std::optional<DecisionRecord>* d, std::string* why) {
  d->reset();
  if (text.empty()) return true;
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    *why = "decision is not a JSON object";
    return false;
  }
  DecisionRecord r;
  if (!read_text(j, "runner_up", &r.runner_up, why) || !read_real(j, "margin", &r.margin, why) ||
      !read_real(j, "confidence", &r.confidence, why) || !read_text(j, "timing", &r.timing, why) ||
      !read_count(j, "sustained_turns", &r.sustained_turns, why) ||
      !read_text(j, "library_version", &r.library_version, why) ||
      !read_count(j, "unix_time", &r.unix_time, why) ||
      !read_count(j, "tunings", &r.tunings, why) || !read_count(j, "flips", &r.flips, why))
    return false;
  if (r.tunings < 1) {
    *why = "decision 'tunings' is " + std::to_string(r.tunings) +
           " (the record's own tuning counts: at least 1)";
    return false;
  }
  if (r.flips >= r.tunings) {
    *why = "decision counts " + std::to_string(r.flips) + " flips in " + std::to_string(r.tunings) +
           " tunings (flips are re-tunings: fewer than tunings)";
    return false;
  }
  *d = std::move(r);
  return true;
}

}  // namespace tune::cache
