#include "report.hpp"

#include "convert.hpp"

namespace tune::python {
namespace {

py::dict result_dict(const ConfigResult& c, const Config& winner) {
  py::dict d;
  d["config"] = c.config.to_string();
  d["params"] = config_to_dict(c.config);
  d["status"] = std::string(to_string(c.status.code()));
  d["reason"] = c.status.message();
  d["winner"] = c.status.ok() && c.config == winner;
  d["median_ns"] = c.stats.median;
  d["min_ns"] = c.stats.min;
  d["p20_ns"] = c.stats.p20;
  d["p80_ns"] = c.stats.p80;
  d["max_ns"] = c.stats.max;
  d["mean_ns"] = c.stats.mean;
  d["samples"] = c.stats.count;
  d["compile_ms"] = c.compile_ms;
  d["from_store"] = c.from_store;
  d["origin"] = c.origin;  // the bundle a from_store row came from, else ""
  d["raced_out"] = c.raced_out;
  d["settled"] = c.settled;
  d["verified"] = c.verified;  // checked (passed unless status is wrong_output)
  d["verification"] = std::string(to_string(c.verification()));  // verified, not_checked, ...
  d["registers"] = c.resources.registers;
  d["spill_bytes"] = c.resources.spill_bytes;
  d["static_shared_bytes"] = c.resources.shared_bytes;
  return d;
}

}  // namespace

py::dict report_dict(const TuningReport& r) {
  py::dict d;
  d["status"] = std::string(to_string(r.status.code()));
  d["error"] = r.status.message();
  d["kernel"] = r.kernel;
  d["key"] = r.key;
  d["device"] = r.device;
  d["source"] = std::string(to_string(r.source));
  d["winner"] = r.winner.to_string();
  d["winner_params"] = config_to_dict(r.winner);
  d["pruned"] = r.pruned;
  d["partial"] = r.partial;
  d["strategy"] = r.strategy;
  d["wall_ms"] = r.wall_ms;
  py::dict times;
  times["candidates"] = r.times.candidates;
  times["store"] = r.times.store;
  times["compile"] = r.times.compile;
  times["verify"] = r.times.verify;
  times["benchmark"] = r.times.benchmark;
  times["strategy"] = r.times.strategy;
  times["overhead"] = r.times.overhead;
  d["times_ms"] = times;
  py::list results;
  for (const auto& c : r.results) results.append(result_dict(c, r.winner));
  d["results"] = results;
  return d;
}

py::list report_rows(const std::vector<TuningReport>& reports) {
  py::list rows;
  for (const auto& r : reports) {
    for (const auto& c : r.results) {
      py::dict row;
      row["kernel"] = r.kernel;
      row["key"] = r.key;
      row["device"] = r.device;
      row["source"] = std::string(to_string(r.source));
      py::dict res = result_dict(c, r.winner);
      py::dict params = res["params"];
      PyDict_DelItemString(res.ptr(), "params");
      for (auto [k, v] : res) row[k] = v;
      // Each parameter its own column (prefixed in the rare case it shares a column's name).
      for (auto [k, v] : params)
        row[row.contains(k) ? py::str("param." + k.cast<std::string>()) : py::str(k)] = v;
      rows.append(row);
    }
  }
  return rows;
}

}  // namespace tune::python
