// Kernel Tuner's T4 output files (a brute-forced space's every configuration and its timings,
// as the FAIR benchmark hub publishes them) read as replay recordings (replay.hpp), so that a
// search strategy can be run on them exactly as on libtune's own recordings.
//
// A T4 document: {"results": [{"configuration": {name: value, ...}, "times": {"runtimes":
// [ms, ...]}, "invalidity": "correct" | "runtime" | "compile" | ..., ...}, ...]}. A row's time is
// the mean of its runtimes (the hub's own summary); a row without numeric runtimes, or whose
// invalidity is not "correct", failed (+inf, its invalidity as the reason). Files may be gzip
// compressed (read through zlib, which reads plain files as they are). Header-only; the
// program that includes it links ZLIB::ZLIB and nlohmann_json.
#pragma once

#include <zlib.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "replay.hpp"

namespace replay {

// The whole of `path`, decompressed when it is gzip; not_found naming it when unreadable.
inline Result<std::string> read_maybe_gzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return Status(StatusCode::not_found, "cannot open " + path);
  std::string out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  int err = 0;
  const char* msg = gzerror(f, &err);
  const std::string why = msg ? msg : "";
  gzclose(f);
  if (n < 0 || (err != Z_OK && err != Z_STREAM_END))
    return Status(StatusCode::invalid_argument, path + ": not readable as gzip: " + why);
  return out;
}

namespace detail {

// A T4 configuration value as a configuration value: integers and booleans keep their kind,
// strings stay strings, any other number becomes its text (as the T1 import makes floats).
inline std::optional<Value> t4_value(const nlohmann::json& v) {
  if (v.is_boolean()) return Value{v.get<bool>()};
  if (v.is_number_integer()) return Value{v.get<std::int64_t>()};
  if (v.is_string()) return Value{v.get<std::string>()};
  if (v.is_number()) return Value{v.dump()};
  return std::nullopt;
}

}  // namespace detail

// The rows of T4 document `text` over dimensions `dims` (a T1 space's, in declared order; empty:
// inferred from the rows as for a version-0 recording). invalid_argument naming the entry on a
// malformed one.
inline Result<Recording> parse_t4(std::string_view text,
                                  const std::vector<ConfigSpace::Dimension>& dims) {
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("results") ||
      !doc["results"].is_array())
    return Status(StatusCode::invalid_argument, "not a T4 document (no 'results' array)");
  Recording rec;
  rec.version = 1;
  rec.meta.emplace_back("format", "T4 " + doc.value("schema_version", std::string("?")));
  const auto& results = doc["results"];
  for (std::size_t n = 0; n < results.size(); ++n) {
    const auto& e = results[n];
    const std::string where = "results[" + std::to_string(n) + "]";
    if (!e.is_object() || !e.contains("configuration") || !e["configuration"].is_object())
      return Status(StatusCode::invalid_argument, where + ".configuration: missing");
    Row r;
    for (const auto& [name, v] : e["configuration"].items()) {
      auto value = detail::t4_value(v);
      if (!value)
        return Status(StatusCode::invalid_argument,
                      where + ".configuration." + name + ": " + v.dump() + " is not a value");
      r.config.set(name, std::move(*value));
    }
    double sum = 0;
    std::size_t count = 0;
    const auto* runtimes =
        e.contains("times") && e["times"].is_object() && e["times"].contains("runtimes")
            ? &e["times"]["runtimes"]
            : nullptr;
    if (runtimes != nullptr && runtimes->is_array())
      for (const auto& t : *runtimes)
        if (t.is_number()) {
          sum += t.get<double>();
          ++count;
        }
    const std::string invalidity = e.value("invalidity", std::string("correct"));
    if (count > 0 && invalidity == "correct") {
      r.median_ns = sum / static_cast<double>(count) * 1e6;  // ms -> ns
      r.reps = count;
    } else {
      r.status = "failed: " + (invalidity == "correct" ? std::string("no runtimes") : invalidity);
    }
    rec.rows.push_back(std::move(r));
  }
  if (rec.rows.empty()) return Status(StatusCode::invalid_argument, "the T4 file has no results");
  rec.dims = dims.empty() ? detail::infer_dims(rec.rows) : dims;
  rec.declared_dims = !dims.empty();
  std::vector<Row> kept;
  for (auto& r : rec.rows) {
    if (!in_domains(r.config, rec.dims)) {
      ++rec.outside;
      continue;
    }
    kept.push_back(std::move(r));
  }
  rec.rows = std::move(kept);
  if (rec.rows.empty())
    return Status(StatusCode::invalid_argument, "no T4 result lies in the space's domains");
  return rec;
}

inline Result<Recording> read_t4(const std::string& path,
                                 const std::vector<ConfigSpace::Dimension>& dims) {
  auto text = read_maybe_gzip(path);
  if (!text.ok()) return text.status();
  auto r = parse_t4(*text, dims);
  if (!r.ok()) return Status(r.status().code(), path + ": " + r.status().message());
  return r;
}

}  // namespace replay
