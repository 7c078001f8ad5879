// Replay recordings (issue 7): every configuration of a product space timed once on a device,
// stored as TSV, so that search strategies can be evaluated offline on real timings over the
// same product structure they search live. Written by `tuning_study record`, read by
// `search_eval --replay` and studies/replay_test.cpp. Header-only; depends on tune::core only.
//
// Format, version 1:
//   # libtune-replay 1
//   # kernel<TAB>matmul_f32                 metadata lines "# key<TAB>value" (any order)
//   # size<TAB>2048x2048x2048
//   # accepted<TAB>1329                     points of the space its constraints accept on the
//                                           device: the recording is complete with that many rows
//   # dim<TAB>BM<TAB>32<TAB>64<TAB>128      the space's dimensions in declared order, each value
//   # dim<TAB>num_stages<TAB>2<TAB>3        as Config text prints it (launch options by their
//                                           dimension name: block.x, num_stages, ...)
//   config<TAB>median_ns<TAB>p20_ns<TAB>p80_ns<TAB>min_ns<TAB>reps<TAB>compile_ms<TAB>status
//   BK=8,BM=64,...;block=128x1x1,...<TAB>452384.5<TAB>...<TAB>ok
//   BK=32,BM=256,...<TAB>inf<TAB>nan<TAB>...<TAB>compile_error: ... (failed: the reason)
// One row per configuration that was compiled and (if that worked) verified and timed. A row
// counts only with every column and its newline, so a run cut short mid-row loses that row
// only; '#' lines may also follow rows (a resumed run notes itself).
//
// The replayed space is the product of the declared dimensions with one constraint, "recorded":
// a point is in the space if and only if the recording has a row for it. A complete recording
// thus accepts exactly the points the live space accepted on the device; failed rows stay in
// the space and evaluate to +inf (evaluated, never best), as a failure does in a live search.
//
// Version 0 files (no header; lines "config<TAB>median_ns", with inf or <= 0 for a failure)
// are read too: their dimensions are inferred, one per parameter (its recorded values, sorted)
// plus each launch option that is not a function of the parameters (block sizes or shared
// memory derived from tile sizes are not dimensions).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "stats.hpp"
#include "tune/config_space.hpp"
#include "tune/search.hpp"
#include "tune/status.hpp"

namespace replay {

using tune::Config;
using tune::ConfigSpace;
using tune::Result;
using tune::Status;
using tune::StatusCode;
using tune::Value;

inline constexpr std::string_view kMagic = "# libtune-replay 1";
inline constexpr std::string_view kColumns =
    "config\tmedian_ns\tp20_ns\tp80_ns\tmin_ns\treps\tcompile_ms\tstatus";
inline constexpr int kColumnCount = 8;
inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Row {
  Config config;
  double median_ns = kInf;  // +inf when the config failed
  double p20_ns = kNaN, p80_ns = kNaN, min_ns = kNaN;
  std::uint64_t reps = 0;
  double compile_ms = kNaN;
  std::string status = "ok";  // "ok", or "<status code>: <message>"
  bool ok() const { return status == "ok" && std::isfinite(median_ns); }
  // "ok", or the status code of a failure ("compile_error", "out_of_resources", ...).
  std::string code() const { return status.substr(0, status.find(':')); }
};

struct Recording {
  int version = 0;
  std::vector<std::pair<std::string, std::string>> meta;  // "# key<TAB>value" lines, in order
  std::vector<ConfigSpace::Dimension> dims;               // declared, else inferred
  bool declared_dims = false;
  std::vector<Row> rows;       // one per point: a later row for the same point replaces an earlier
  std::size_t incomplete = 0;  // lines dropped: missing columns or newline, unparsable config
  std::size_t duplicates = 0;  // rows replaced by a later row for the same point
  std::size_t outside = 0;     // rows dropped: a value outside the declared domains

  // The last value of metadata `key`; empty when absent.
  std::string meta_value(std::string_view key) const {
    for (auto it = meta.rbegin(); it != meta.rend(); ++it)
      if (it->first == key) return it->second;
    return {};
  }
  // Accepted points of the live space (0: unknown).
  std::uint64_t accepted() const {
    return std::strtoull(meta_value("accepted").c_str(), nullptr, 10);
  }
};

// ---- writing ---------------------------------------------------------------------------------

// Tabs and line breaks become spaces; long messages are cut (a reason stays one column).
inline std::string one_field(std::string s, std::size_t max_len = 400) {
  for (char& ch : s)
    if (ch == '\t' || ch == '\n' || ch == '\r') ch = ' ';
  if (s.size() > max_len) s = s.substr(0, max_len) + "...";
  return s;
}

inline std::string dim_line(const ConfigSpace::Dimension& d) {
  std::string line = "# dim\t" + d.name;
  for (const Value& v : d.values) line += "\t" + one_field(tune::value_to_text(v));
  return line + "\n";
}

// The header block: magic, metadata, the space's dimensions (none for a list space), columns.
inline std::string header(const ConfigSpace& space,
                          const std::vector<std::pair<std::string, std::string>>& meta) {
  std::string out = std::string(kMagic) + "\n";
  for (const auto& [k, v] : meta) out += "# " + one_field(k) + "\t" + one_field(v) + "\n";
  if (!space.is_list())
    for (const auto& d : space.dimensions()) out += dim_line(d);
  return out + std::string(kColumns) + "\n";
}

inline std::string number(double v, const char* f = "%.1f") {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// One row; `stats` is null for a failure, `st` its reason.
inline std::string row_line(const Config& c, const tune::SampleStats* stats, double compile_ms,
                            const Status& st) {
  const bool ok = st.ok() && stats != nullptr;
  std::string line = c.to_string();
  line += "\t" + number(ok ? stats->median : kInf);
  line += "\t" + number(ok ? stats->p20 : kNaN);
  line += "\t" + number(ok ? stats->p80 : kNaN);
  line += "\t" + number(ok ? stats->min : kNaN);
  line += "\t" + std::to_string(ok ? stats->count : 0u);
  line += "\t" + number(compile_ms);
  line += "\t" + (ok ? std::string("ok") : one_field(st.to_string()));
  return line + "\n";
}

// ---- the projection onto the dimensions --------------------------------------------------------

// The value of dimension `name` in `c`: a parameter, or a launch option by its dimension name.
inline std::optional<Value> dim_value(const Config& c, std::string_view name) {
  if (tune::is_launch_option_name(name)) {
    const tune::LaunchOptions& l = c.launch();
    std::int64_t v = 0;
    if (name == tune::kBlockX)
      v = l.block.x;
    else if (name == tune::kBlockY)
      v = l.block.y;
    else if (name == tune::kBlockZ)
      v = l.block.z;
    else if (name == tune::kNumWarps)
      v = l.num_warps;
    else if (name == tune::kNumStages)
      v = l.num_stages;
    else if (name == tune::kMaxRegisters)
      v = l.max_registers;
    else if (name == tune::kSharedBytes)
      v = l.shared_bytes;
    return Value{v};
  }
  if (const Value* v = c.find(name)) return *v;
  return std::nullopt;
}

// `c` reduced to its dimensions, set exactly as ConfigSpace::at sets a product point (before
// any derive step): equal for a recorded config and the replayed point it stands for.
inline Config project(const Config& c, const std::vector<ConfigSpace::Dimension>& dims) {
  Config p;
  for (const auto& d : dims)
    if (auto v = dim_value(c, d.name)) p.set(d.name, *v);
  return p;
}

inline bool in_domains(const Config& c, const std::vector<ConfigSpace::Dimension>& dims) {
  for (const auto& d : dims) {
    auto v = dim_value(c, d.name);
    if (!v || std::find(d.values.begin(), d.values.end(), *v) == d.values.end()) return false;
  }
  return true;
}

// ---- reading ---------------------------------------------------------------------------------

namespace detail {

inline std::vector<std::string> split_tabs(std::string_view line) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  for (;;) {
    std::size_t tab = line.find('\t', pos);
    out.emplace_back(line.substr(pos, tab == std::string_view::npos ? line.npos : tab - pos));
    if (tab == std::string_view::npos) return out;
    pos = tab + 1;
  }
}

inline bool parse_double(const std::string& s, double* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return end != nullptr && *end == '\0';
}

inline std::optional<Value> parse_value(std::string_view name, const std::string& text) {
  if (tune::is_launch_option_name(name)) {
    char* end = nullptr;
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || v < 0) return std::nullopt;
    return Value{static_cast<std::int64_t>(v)};
  }
  auto c = Config::parse(std::string(name) + "=" + text);
  if (!c.ok()) return std::nullopt;
  if (const Value* v = c->find(name)) return *v;
  return std::nullopt;
}

inline bool value_less(const Value& a, const Value& b) {
  if (a.index() != b.index()) return a.index() < b.index();
  return a < b;
}

inline bool launch_is_set(const Config& c, std::string_view name) {
  auto v = dim_value(c, name);
  return v && std::get<std::int64_t>(*v) != 0;
}

// Version 0: a dimension per parameter (sorted recorded values); a launch option only where
// it varies independently of the parameters.
inline std::vector<ConfigSpace::Dimension> infer_dims(const std::vector<Row>& rows) {
  std::map<std::string, std::vector<Value>> params;
  for (const auto& r : rows)
    for (const auto& [name, v] : r.config.params()) {
      auto& vs = params[name];
      if (std::find(vs.begin(), vs.end(), v) == vs.end()) vs.push_back(v);
    }
  std::vector<ConfigSpace::Dimension> dims;
  for (auto& [name, vs] : params) {
    std::sort(vs.begin(), vs.end(), value_less);
    dims.push_back({name, vs});
  }
  const std::string_view launch_names[] = {tune::kBlockX,     tune::kBlockY,    tune::kBlockZ,
                                           tune::kNumWarps,   tune::kNumStages, tune::kMaxRegisters,
                                           tune::kSharedBytes};
  const std::vector<ConfigSpace::Dimension> param_dims = dims;
  for (std::string_view name : launch_names) {
    std::vector<Value> vs;
    std::map<std::string, std::set<std::int64_t>> by_params;  // parameters -> values
    bool any_set = false;
    for (const auto& r : rows) {
      any_set = any_set || launch_is_set(r.config, name);
      auto v = *dim_value(r.config, name);
      by_params[project(r.config, param_dims).to_string()].insert(std::get<std::int64_t>(v));
      if (std::find(vs.begin(), vs.end(), v) == vs.end()) vs.push_back(v);
    }
    if (!any_set) continue;
    bool derived = true;
    for (const auto& [p, values] : by_params) derived = derived && values.size() == 1;
    if (derived) continue;
    std::sort(vs.begin(), vs.end(), value_less);
    dims.push_back({std::string(name), vs});
  }
  return dims;
}

}  // namespace detail

// Parses a recording (either version). invalid_argument when nothing usable is in it.
inline Result<Recording> parse(std::string_view text) {
  Recording rec;
  std::vector<Row> rows;
  std::size_t pos = 0, line_no = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    const bool complete = nl != std::string_view::npos;
    std::string_view line = text.substr(pos, complete ? nl - pos : text.npos);
    pos = complete ? nl + 1 : text.size();
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (line_no == 1 && line == kMagic) {
      rec.version = 1;
      continue;
    }
    if (line[0] == '#') {
      if (!complete) continue;
      auto f = detail::split_tabs(line.substr(1));
      std::string key = f[0];
      key.erase(0, key.find_first_not_of(' '));
      if (key == "dim" && f.size() >= 3) {
        ConfigSpace::Dimension d{f[1], {}};
        for (std::size_t i = 2; i < f.size(); ++i) {
          auto v = detail::parse_value(d.name, f[i]);
          if (!v)
            return Status(StatusCode::invalid_argument, "line " + std::to_string(line_no) +
                                                            ": bad value '" + f[i] +
                                                            "' of dimension " + d.name);
          d.values.push_back(std::move(*v));
        }
        rec.dims.push_back(std::move(d));
        rec.declared_dims = true;
      } else if (f.size() >= 2) {
        rec.meta.emplace_back(key, f[1]);
      }
      continue;
    }
    if (line.substr(0, 7) == "config\t") continue;  // the column line
    auto f = detail::split_tabs(line);
    Row r;
    auto c = Config::parse(f[0]);
    if (!c.ok() || !complete || f.size() < 2 ||
        (rec.version >= 1 && static_cast<int>(f.size()) < kColumnCount)) {
      ++rec.incomplete;
      continue;
    }
    r.config = std::move(*c);
    double v = 0;
    if (!detail::parse_double(f[1], &v)) {
      ++rec.incomplete;
      continue;
    }
    if (rec.version == 0) {
      r.median_ns = v > 0 ? v : kInf;
      if (!std::isfinite(r.median_ns)) r.status = "failed: recorded as " + f[1];
    } else {
      r.median_ns = v;
      detail::parse_double(f[2], &r.p20_ns);
      detail::parse_double(f[3], &r.p80_ns);
      detail::parse_double(f[4], &r.min_ns);
      r.reps = std::strtoull(f[5].c_str(), nullptr, 10);
      detail::parse_double(f[6], &r.compile_ms);
      r.status = f[7];
      if (r.status == "ok" && !(v > 0 && std::isfinite(v))) r.status = "failed: median " + f[1];
      if (r.status != "ok") r.median_ns = kInf;
    }
    rows.push_back(std::move(r));
  }
  if (!rec.declared_dims) rec.dims = detail::infer_dims(rows);
  // One row per point; the last one wins (a re-recorded point).
  std::unordered_map<std::string, std::size_t> where;
  for (auto& r : rows) {
    if (!in_domains(r.config, rec.dims)) {
      ++rec.outside;
      continue;
    }
    std::string key = project(r.config, rec.dims).to_string();
    if (auto it = where.find(key); it != where.end()) {
      rec.rows[it->second] = std::move(r);
      ++rec.duplicates;
    } else {
      where.emplace(std::move(key), rec.rows.size());
      rec.rows.push_back(std::move(r));
    }
  }
  if (rec.rows.empty())
    return Status(StatusCode::invalid_argument, "no complete rows in the recording");
  if (rec.dims.empty())
    return Status(StatusCode::invalid_argument, "the recording has no dimensions");
  return rec;
}

inline Result<Recording> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(StatusCode::not_found, "cannot open " + path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto r = parse(text);
  if (!r.ok()) return Status(r.status().code(), path + ": " + r.status().message());
  return r;
}

// ---- the replayed space ----------------------------------------------------------------------

struct Replay {
  ConfigSpace space;  // the product of the dimensions, constrained to the recorded points
  std::shared_ptr<const std::unordered_map<std::string, double>> values;  // point -> median
  std::size_t recorded = 0, failed = 0;
  // With a live space (make_replay's `live`): its accepted points without a row (they evaluate
  // to +inf, as a configuration that could not be timed), and rows it rejects (never asked for).
  std::size_t unrecorded = 0, rejected_rows = 0;
  double best = kInf;
  Config best_config;

  // Median of a point of `space`; +inf for a failed one (and for a point not recorded, which
  // the space's constraint keeps strategies from asking for unless a live space accepts it).
  tune::Objective objective() const {
    auto v = values;
    return [v](const Config& c) {
      auto it = v->find(c.to_string());
      return it == v->end() ? kInf : it->second;
    };
  }
};

// The replay of `rec`. Without `live`, the space is the product of the recording's dimensions
// constrained to the recorded points ("recorded"). With `live` (a product space over the same
// dimensions, such as a T1 file's: its parameters and conditions, no derive step), the space
// is the points `live` accepts on `dev` (constraint "live", its verdicts listed once up front so
// that a search does not re-evaluate the conditions).
inline Replay make_replay(const Recording& rec, const ConfigSpace* live = nullptr,
                          const tune::DeviceInfo& dev = {}) {
  Replay r;
  auto values = std::make_shared<std::unordered_map<std::string, double>>();
  std::shared_ptr<std::unordered_set<std::string>> accepted;
  if (live != nullptr) {
    accepted = std::make_shared<std::unordered_set<std::string>>();
    for (std::uint64_t i = 0; i < live->raw_size(); ++i) {
      Config c = live->at(i);
      if (live->accepts(c, dev)) accepted->insert(project(c, rec.dims).to_string());
    }
  }
  for (const auto& row : rec.rows) {
    Config p = project(row.config, rec.dims);
    std::string key = p.to_string();
    if (accepted && accepted->count(key) == 0) {
      ++r.rejected_rows;
      continue;
    }
    (*values)[key] = row.median_ns;
    ++r.recorded;
    if (!row.ok()) ++r.failed;
    if (row.median_ns < r.best) {
      r.best = row.median_ns;
      r.best_config = row.config;
    }
  }
  for (const auto& d : rec.dims) r.space.param(d.name, d.values);
  std::shared_ptr<const std::unordered_map<std::string, double>> cv = values;
  if (accepted) {
    for (const auto& key : *accepted) r.unrecorded += cv->count(key) == 0 ? 1 : 0;
    std::shared_ptr<const std::unordered_set<std::string>> ca = accepted;
    r.space.constrain("live", [ca](const Config& c, const tune::DeviceInfo&) {
      return ca->count(c.to_string()) != 0;
    });
  } else {
    r.space.constrain("recorded", [cv](const Config& c, const tune::DeviceInfo&) {
      return cv->count(c.to_string()) != 0;
    });
  }
  r.values = std::move(cv);
  return r;
}

}  // namespace replay
