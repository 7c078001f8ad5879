// See t4_export.hpp.
#include "t4_export.hpp"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <tuple>
#include <variant>
#include <vector>

#include "host_text.hpp"
#include "tune/backend/hash.hpp"
#include "tune/config.hpp"
#include "tune/version.hpp"

namespace tune::cli {
namespace {

using nlohmann::json;

bool same_key(const StoreKey& a, const StoreKey& b) {
  return std::tie(a.kernel, a.source_hash, a.key, a.device, a.toolchain) ==
         std::tie(b.kernel, b.source_hash, b.key, b.device, b.toolchain);
}

std::string key_text(const StoreKey& k) {
  return k.kernel + " key '" + k.key + "' on '" + k.device + "' with '" + k.toolchain + "'";
}

std::string iso8601_utc(std::int64_t unix_time) {
  const std::time_t t = static_cast<std::time_t>(unix_time);
  std::tm tm{};
  char buf[32];
  if (::gmtime_r(&t, &tm) == nullptr ||
      std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
    return "1970-01-01T00:00:00Z";
  return buf;
}

// The configuration object: parameters by name, then the launch options that are set. A
// stored text that no longer parses is kept whole under "config" (nothing is dropped).
json configuration_of(const std::string& text) {
  json c = json::object();
  auto parsed = Config::parse(text);
  if (!parsed.ok()) {
    c["config"] = text;
    return c;
  }
  for (const auto& param : parsed->params()) {
    json& slot = c[param.first];  // (clang captures no structured binding in a lambda)
    std::visit([&slot](const auto& v) { slot = v; }, param.second);
  }
  const LaunchOptions& l = parsed->launch();
  if (l.block.any_set()) {
    const Dim3 b = normalized_block(l.block);
    c[std::string(kBlockX)] = b.x;
    c[std::string(kBlockY)] = b.y;
    c[std::string(kBlockZ)] = b.z;
  }
  if (l.num_warps != 0) c[std::string(kNumWarps)] = l.num_warps;
  if (l.num_stages != 0) c[std::string(kNumStages)] = l.num_stages;
  if (l.max_registers != 0) c[std::string(kMaxRegisters)] = l.max_registers;
  if (l.shared_bytes != 0) c[std::string(kSharedBytes)] = l.shared_bytes;
  return c;
}

// T4's invalidity for a status, and Kernel Tuner's name for that kind of failure.
struct Invalidity {
  const char* t4;
  const char* kernel_tuner;
};
Invalidity invalidity_of(StatusCode code) {
  switch (code) {
    case StatusCode::ok:
      return {"correct", ""};
    case StatusCode::compile_error:
      return {"compile", "CompilationFailedConfig"};
    case StatusCode::out_of_resources:
    case StatusCode::invalid_argument:
      return {"constraints", "InvalidConfig"};
    case StatusCode::timeout:
      return {"timeout", "RuntimeFailedConfig"};
    case StatusCode::wrong_output:
      return {"correctness", "RuntimeFailedConfig"};
    default:
      return {"runtime", "RuntimeFailedConfig"};
  }
}

json measurement(const char* name, json value, const char* unit) {
  return {{"name", name}, {"value", std::move(value)}, {"unit", unit}};
}

// A statistic in milliseconds; a non-finite one (not measured) as the string "nan", since
// T4 values are numbers, strings or arrays.
json ms(double ns) { return std::isfinite(ns) ? json(ns / 1e6) : json("nan"); }

json result_of(const StoredResult& r) {
  const Invalidity inv = invalidity_of(r.status);
  json m = json::array();
  if (r.status == StatusCode::ok) {
    m.push_back(measurement("time", ms(r.stats.median), "ms"));
    m.push_back(measurement("time_mean", ms(r.stats.mean), "ms"));
    m.push_back(measurement("time_min", ms(r.stats.min), "ms"));
    m.push_back(measurement("time_p20", ms(r.stats.p20), "ms"));
    m.push_back(measurement("time_p80", ms(r.stats.p80), "ms"));
    m.push_back(measurement("time_max", ms(r.stats.max), "ms"));
    m.push_back(measurement("samples", r.stats.count, ""));
  } else {
    m.push_back(measurement("time", inv.kernel_tuner, ""));
    m.push_back(measurement("error", std::string(to_string(r.status)), ""));
    m.push_back(measurement("reason", r.reason, ""));
  }
  // T4's correctness is 0 only for output found wrong; whether it was checked at all has no
  // field of its own, so it is a measurement (T4's place for further named values).
  m.push_back(measurement("verification",
                          std::string(to_string(verification_of(r.status, r.verified))), ""));
  return {{"timestamp", iso8601_utc(r.unix_time)},
          {"configuration", configuration_of(r.config)},
          {"objectives", json::array({"time"})},
          {"times", json::object()},
          {"invalidity", inv.t4},
          {"correctness", r.status == StatusCode::wrong_output ? 0 : 1},
          {"measurements", std::move(m)}};
}

std::string dump(const json& j) {
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace

Result<std::string> t4_results_json(std::span<const CacheRow> rows) {
  if (rows.empty())
    return Status(StatusCode::not_found, "no stored results match: nothing to export");
  std::vector<const StoreKey*> keys;
  for (const CacheRow& r : rows) {
    bool known = false;
    for (const StoreKey* k : keys) known = known || same_key(*k, r.key);
    if (!known) keys.push_back(&r.key);
  }
  if (keys.size() > 1) {
    std::string msg = "a T4 file holds one tuning problem, and these rows are from " +
                      std::to_string(keys.size()) +
                      " (choose one with --kernel, --key and --device):";
    for (const StoreKey* k : keys) msg += "\n  " + key_text(*k);
    return Status(StatusCode::invalid_argument, msg);
  }
  json results = json::array();
  for (const CacheRow& r : rows) results.push_back(result_of(r.result));
  return dump({{"schema_version", kT4SchemaVersion}, {"results", std::move(results)}});
}

std::string t4_metadata_json(const StoreKey& key) {
  const std::string os = host_os_text();
  json device = {{"kernel", key.kernel},
                 {"key", key.key},
                 {"device", key.device},
                 {"toolchain", key.toolchain},
                 {"source_hash", "0x" + hex64(key.source_hash)}};
  json metadata = {
      {"hardware",
       {{"operating_system", os},
        {"hardware_description", json::array({{{"device", key.device}}})}}},
      {"environment",
       {{"device_query", {{"libtune", device}}},
        {"requirements", json::array({"libtune==" + std::string(kVersion), key.toolchain})}}}};
  return dump({{"schema_version", kT4SchemaVersion}, {"metadata", std::move(metadata)}});
}

}  // namespace tune::cli
