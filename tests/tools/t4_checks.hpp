// Checks of a `tune cache export --format t4` result against the vendored T4 schemas and
// against the rows `tune cache show --json` prints for the same filter (the export keeps the
// store's row order, so the two lists pair up by position), each row's verification included.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "python_helpers.hpp"
#include "tune_process.hpp"

namespace tune::testing {

// The measurement `name` of a T4 result, or null when absent.
inline nlohmann::json t4_measurement(const nlohmann::json& result, const std::string& name) {
  for (const auto& m : result.at("measurements"))
    if (m.at("name") == name) return m;
  return nullptr;
}

inline std::vector<std::string> split_text(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = s.find(sep, start);
    out.push_back(s.substr(start, end - start));
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}

// The configuration object holds each "name=value" of the config text: parameters, and the
// launch options after ';' ("block=AxBxC" as block.x, block.y, block.z).
inline void check_t4_configuration(const nlohmann::json& conf, const std::string& text) {
  const std::size_t semi = text.find(';');
  auto text_of = [](const nlohmann::json& v) {
    return v.is_string() ? v.get<std::string>() : v.dump();
  };
  for (const std::string& part : split_text(text.substr(0, semi), ',')) {
    const std::size_t eq = part.find('=');
    REQUIRE(eq != std::string::npos);
    const std::string name = part.substr(0, eq);
    CHECK_MESSAGE(conf.contains(name), text << " -> " << conf.dump());
    if (conf.contains(name)) CHECK_MESSAGE(text_of(conf.at(name)) == part.substr(eq + 1), text);
  }
  if (semi == std::string::npos) return;
  for (const std::string& part : split_text(text.substr(semi + 1), ',')) {
    const std::size_t eq = part.find('=');
    const std::string name = part.substr(0, eq), value = part.substr(eq + 1);
    if (name == "block") {
      const auto xyz = split_text(value, 'x');
      REQUIRE(xyz.size() == 3);
      CHECK(text_of(conf.value("block.x", nlohmann::json())) == xyz[0]);
      CHECK(text_of(conf.value("block.y", nlohmann::json())) == xyz[1]);
      CHECK(text_of(conf.value("block.z", nlohmann::json())) == xyz[2]);
    } else {
      CHECK_MESSAGE(text_of(conf.value(name, nlohmann::json())) == value, text);
    }
  }
}

// `results` and `metadata` (files written by the export) follow the schemas, and every result
// carries the numbers and failures of the matching `shown` row (cache show --json).
inline void check_t4_export(const TuneCli& cli, const fs::path& results, const fs::path& metadata,
                            const nlohmann::json& shown) {
  const std::string dir = TUNE_T4_SCHEMA_DIR;
  check_schema(cli, results.string(), dir + "/results-schema.json");
  check_schema(cli, metadata.string(), dir + "/metadata-schema.json");

  const nlohmann::json doc = nlohmann::json::parse(read_text(results));
  CHECK(doc.at("schema_version") == "1.0.0");
  const nlohmann::json& out = doc.at("results");
  REQUIRE(out.size() == shown.size());
  for (std::size_t i = 0; i < shown.size(); ++i) {
    const nlohmann::json& row = shown[i];
    const nlohmann::json& res = out[i];
    const std::string config = row.at("config");
    CAPTURE(config);
    check_t4_configuration(res.at("configuration"), config);
    CHECK(res.at("objectives") == nlohmann::json::array({"time"}));
    const std::string status = row.at("status");
    // Every row says whether its output was checked (T4 has no field for it).
    const nlohmann::json verification = t4_measurement(res, "verification");
    REQUIRE_MESSAGE(verification.is_object(), res.dump());
    CHECK(verification.at("value") == row.at("verification"));
    CHECK(res.at("correctness") == (row.at("verification") == "wrong_output" ? 0 : 1));
    if (status == "ok") {
      CHECK(res.at("invalidity") == "correct");
      CHECK(res.at("correctness") == 1);
      const nlohmann::json& st = row.at("stats");
      const std::pair<const char*, const char*> names[] = {
          {"time", "median"},  {"time_mean", "mean"}, {"time_min", "min"},
          {"time_p20", "p20"}, {"time_p80", "p80"},   {"time_max", "max"}};
      for (const auto& name : names) {
        const char* m = name.first;
        const char* s = name.second;
        const nlohmann::json got = t4_measurement(res, m);
        REQUIRE_MESSAGE(got.is_object(), m);
        CHECK(got.at("unit") == "ms");
        // Nanoseconds stored, milliseconds written: equal to a double's rounding.
        const double want_ms = st.at(s).get<double>() / 1e6;
        CHECK_MESSAGE(std::abs(got.at("value").get<double>() - want_ms) <= 1e-12 * want_ms, m);
      }
      CHECK(t4_measurement(res, "samples").at("value") == st.at("count"));
    } else {
      CHECK(res.at("invalidity") != "correct");
      CHECK(t4_measurement(res, "error").at("value") == status);
      CHECK(t4_measurement(res, "reason").at("value") == row.at("reason"));
      CHECK(t4_measurement(res, "time").at("value").is_string());
    }
  }

  const nlohmann::json meta = nlohmann::json::parse(read_text(metadata));
  CHECK(meta.at("schema_version") == "1.0.0");
  if (shown.empty()) return;
  const nlohmann::json& q = meta.at("metadata").at("environment").at("device_query").at("libtune");
  CHECK(q.at("device") == shown[0].at("device"));
  CHECK(q.at("toolchain") == shown[0].at("toolchain"));
  CHECK(q.at("kernel") == shown[0].at("kernel"));
  CHECK(q.at("key") == shown[0].at("key"));
}

}  // namespace tune::testing
