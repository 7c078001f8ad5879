// tuning_study: the tuning-time and selection-quality figures of issue 7, measured on any
// tune::Device, printed as markdown tables for bench/RESULTS.md, raw data written under --out.
//
//   tuning_study racing  [--device SPEC] [--large] [--quick] [--kernel NAME] [--out DIR]
//       Per bundled kernel and size: tuning with racing vs exhaustive timing, each from a cold
//       state (fresh device, fresh Autotuner, no persistent cache: compile time included), and
//       again with every variant compiled first (Autotuner::warmup, timed apart). Reports
//       wall time, timed repetitions, device time spent timing, the winners, and the winners
//       re-timed side by side with a long budget (raced / exhaustive median ratio).
//   tuning_study quality [--device SPEC] [--large] [--quick] [--kernel NAME] [--out DIR]
//       >= 20 (kernel, shape) cases, ragged shapes included: tune with default options, then
//       re-time every configuration with a long budget, interleaved in rounds; chosen / best.
//       The winner's and the best configuration's outputs are checked on the CPU reference.
//   tuning_study record  [--device SPEC] [--large] [--quick] [--kernel NAME] [--out DIR]
//                        [--space bundled|wide] [--size MxNxK] [--long-ms MS]
//                        [--max-seconds S] [--resume FILE] [--jobs N]
//       Times every configuration of one kernel's space at one size and writes a replay file
//       (format: studies/replay.hpp) for `search_eval --replay FILE`: variants compile on all
//       cores while each is verified once and timed; rows (median, quantiles, compile time,
//       status or failure reason) are flushed one by one in a fixed shuffled order, so a run
//       cut short leaves a usable sample. --max-seconds stops cleanly; --resume FILE appends
//       the configs FILE lacks. --space wide: matmul_f32 over wider domains of its own
//       parameters (>= 1000 accepted configurations).
//
// Persistent caches are switched off for the whole process (TUNE_CACHE=off, and the drivers'
// own shader caches where an environment variable controls them) so that "cold" means cold.
// Progress goes to stderr; tables to stdout.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "race.hpp"
#include "replay.hpp"
#include "tune/kernels/bundled.hpp"
#include "tune/tune.hpp"

namespace {

using namespace tune;
using Clock = std::chrono::steady_clock;
using Size = std::vector<std::int64_t>;

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Options {
  std::string command;
  std::string device;
  bool large = false;
  bool quick = false;
  std::string kernel;
  std::string out = "tuning_study_out";
  std::string space = "bundled";
  std::string size;
  int rounds = 4;
  double long_ms = 0;      // 0: the mode's default
  double max_seconds = 0;  // record: stop cleanly after this long (0: no limit)
  std::string resume;      // record: append to this recording, skipping what it has
  int jobs = 0;            // record: compile threads + 1 (0: hardware_concurrency)
};

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

Clock::time_point g_start = Clock::now();

// Progress line on stderr, prefixed with the elapsed time.
template <typename... A>
void progress(const char* fmt, A... a) {
  std::fprintf(stderr, "[%6.1f s] ", ms_since(g_start) / 1000.0);
  if constexpr (sizeof...(A) == 0) {
    std::fputs(fmt, stderr);
  } else {
    std::fprintf(stderr, fmt, a...);
  }
  std::fputc('\n', stderr);
}

[[noreturn]] void die(const std::string& what, const Status& st) {
  std::fprintf(stderr, "tuning_study: %s: %s\n", what.c_str(), st.to_string().c_str());
  std::exit(1);
}

std::string size_text(const Size& s) {
  std::string out;
  for (auto v : s) out += (out.empty() ? "" : "x") + std::to_string(v);
  return out;
}

std::optional<Size> parse_size(const std::string& text) {
  Size out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t x = text.find('x', pos);
    std::string part = text.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    char* end = nullptr;
    long long v = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || v <= 0) return std::nullopt;
    out.push_back(v);
    if (x == std::string::npos) break;
    pos = x + 1;
  }
  return out;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// Nanoseconds as a short human string.
std::string ns_text(double ns) {
  if (!std::isfinite(ns)) return "inf";
  if (ns >= 1e6) return fmt("%.3f ms", ns / 1e6);
  if (ns >= 1e3) return fmt("%.1f us", ns / 1e3);
  return fmt("%.0f ns", ns);
}

bool is_matmul(const std::string& name) { return name.rfind("matmul", 0) == 0; }

// ---- device and workload helpers -------------------------------------------------------------

void disable_persistent_caches() {
  // libtune's tuning cache and the CUDA/HIP binary cache; Mesa's and NVIDIA's shader caches;
  // the CUDA driver's JIT cache. Set before any device opens.
  ::setenv("TUNE_CACHE", "off", 1);
  ::setenv("MESA_SHADER_CACHE_DISABLE", "true", 1);
  ::setenv("__GL_SHADER_DISK_CACHE", "0", 1);
  ::setenv("CUDA_CACHE_DISABLE", "1", 1);
  ::unsetenv("TUNE_DISABLE");
}

std::unique_ptr<Device> open(const Options& o) {
  auto d = open_device(o.device);
  if (!d.ok()) die("open_device(\"" + o.device + "\")", d.status());
  return std::move(*d);
}

// The reset_to_zero buffers of `args`, as device work before a launch.
LaunchResets accumulators(const KernelDef& def, ArgList args) {
  LaunchResets r;
  for (const auto& name : def.reset_to_zero) {
    const int i = def.signature.index_of(name);
    if (i >= 0) r.zero.push_back(args[static_cast<std::size_t>(i)].buffer);
  }
  return r;
}

Status reset_accumulators(Device& dev, const KernelDef& def, ArgList args) {
  return apply_resets(dev, accumulators(def, args));
}

// Before every launch of the study's timings: the accumulators zeroed, recorded by the backend
// beside its timed launches.
BeforeLaunch before_for(const KernelDef& def, ArgList args) {
  BeforeLaunch b;
  b.resets = accumulators(def, args);
  return b;
}

// One launch of `ck` on freshly poisoned outputs, compared with the CPU reference.
Status verify(Device& dev, const kernels::BundledKernel& k, kernels::Workload& w, const Config& c,
              const CompiledKernel& ck) {
  TUNE_RETURN_IF_ERROR(w.poison_outputs(dev));
  TUNE_RETURN_IF_ERROR(reset_accumulators(dev, k.def, w.args()));
  TUNE_RETURN_IF_ERROR(dev.launch(ck, k.def.dims(c, w.args()), w.args()));
  TUNE_RETURN_IF_ERROR(dev.synchronize());
  return w.check(dev);
}

std::unique_ptr<kernels::Workload> make_workload(Device& dev, const kernels::BundledKernel& k,
                                                 const Size& s) {
  auto w = k.workload(s);
  Status st = w->setup(dev, 2024);
  if (!st.ok()) die(k.name + " " + size_text(s) + " setup", st);
  return w;
}

// Compiles configs on up to hardware_concurrency threads (Device::compile is thread-safe).
std::vector<Result<std::unique_ptr<CompiledKernel>>> compile_many(Device& dev,
                                                                  const KernelSource& src,
                                                                  const std::vector<Config>& cs) {
  std::vector<std::optional<Result<std::unique_ptr<CompiledKernel>>>> slots(cs.size());
  std::atomic<std::size_t> next{0}, done{0};
  const unsigned workers = std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(),
                                                           static_cast<unsigned>(cs.size())));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < workers; ++t) {
    pool.emplace_back([&] {
      for (std::size_t i = next++; i < cs.size(); i = next++) {
        slots[i].emplace(dev.compile(src, cs[i]));
        std::size_t n = ++done;
        if (cs.size() >= 200 && n % 200 == 0) progress("  compiled %zu / %zu", n, cs.size());
      }
    });
  }
  for (auto& t : pool) t.join();
  std::vector<Result<std::unique_ptr<CompiledKernel>>> out;
  out.reserve(cs.size());
  for (auto& s : slots) out.push_back(std::move(*s));
  return out;
}

// ---- long, interleaved re-timing ---------------------------------------------------------------

struct Contender {
  const CompiledKernel* kernel = nullptr;
  LaunchDims dims;
  std::vector<double> samples;
  Status status;
  SampleStats stats;
  Interval ci;  // 99% distribution-free interval of the median
};

// Warms every contender up, then times them in `rounds` interleaved rounds that together
// spend opts.rep_ms per contender (so slow drift of clocks or of a shared CPU hits all alike).
Status time_interleaved(Device& dev, std::vector<Contender>& cs, ArgList args,
                        const BenchOptions& opts, int rounds, const BeforeLaunch& before) {
  std::vector<int> per_round(cs.size(), 0);
  for (std::size_t i = 0; i < cs.size(); ++i) {
    auto est = warm_up(dev, *cs[i].kernel, cs[i].dims, args, opts, before);
    if (!est.ok()) {
      if (est.status().code() == StatusCode::device_lost) return est.status();
      cs[i].status = est.status();
      continue;
    }
    const int total = reps_for(*est, opts);
    per_round[i] = std::max(1, (total + rounds - 1) / rounds);
  }
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t i = 0; i < cs.size(); ++i) {
      if (!cs[i].status.ok()) continue;
      auto s = time_reps(dev, *cs[i].kernel, cs[i].dims, args, opts, per_round[i], before);
      if (!s.ok()) {
        if (s.status().code() == StatusCode::device_lost) return s.status();
        cs[i].status = s.status();
        continue;
      }
      cs[i].samples.insert(cs[i].samples.end(), s->begin(), s->end());
    }
  }
  for (auto& c : cs) {
    if (!c.status.ok() || c.samples.empty()) {
      if (c.status.ok()) c.status = Status(StatusCode::internal, "no samples");
      c.stats.median = kInf;
      continue;
    }
    c.stats = summarize(c.samples);
    c.ci = median_interval(c.samples, 0.99);
  }
  return {};
}

// "1.234 ms [1.2, 1.3]": the median and its 99% interval, in the median's unit.
std::string ci_text(const Contender& c) {
  const double m = c.stats.median;
  if (!std::isfinite(m)) return "inf";
  const double unit = m >= 1e6 ? 1e6 : (m >= 1e3 ? 1e3 : 1.0);
  const char* f = m >= 1e6 ? "%.3f" : "%.1f";
  return ns_text(m) + " [" + fmt(f, c.ci.lo / unit) + ", " + fmt(f, c.ci.hi / unit) + "]";
}

// The long budget that re-timings use.
BenchOptions long_budget(const Options& o) {
  BenchOptions b;
  if (o.quick) {
    b.warmup_ms = 5;
    b.rep_ms = 50;
    b.max_reps = 300;
  } else if (o.large) {
    b.warmup_ms = 20;
    b.rep_ms = 100;
    b.max_reps = 3000;
  } else {
    b.warmup_ms = 25;
    b.rep_ms = 250;
    b.max_reps = 5000;
  }
  if (o.long_ms > 0) b.rep_ms = o.long_ms;
  b.min_reps = 10;
  b.racing = false;
  return b;
}

std::string budget_text(const BenchOptions& b, int rounds) {
  return "warmup " + fmt("%.0f", b.warmup_ms) + " ms, " + fmt("%.0f", b.rep_ms) + " ms of reps (" +
         std::to_string(b.min_reps) + ".." + std::to_string(b.max_reps) + ") per config in " +
         std::to_string(rounds) + " interleaved rounds, L2 flushed before each rep";
}

std::vector<kernels::BundledKernel> kernels_for(Device& dev, const Options& o) {
  auto all = kernels::bundled_kernels(dev.language());
  if (all.empty())
    die("bundled kernels",
        Status(StatusCode::unavailable,
               "no bundled kernels for language " + std::string(to_string(dev.language()))));
  if (o.kernel.empty()) return all;
  std::vector<kernels::BundledKernel> out;
  for (auto& k : all)
    if (k.name == o.kernel) out.push_back(std::move(k));
  if (out.empty()) die("--kernel", Status(StatusCode::invalid_argument, "no kernel " + o.kernel));
  return out;
}

void print_device(const DeviceInfo& info, const Options& o) {
  std::printf("Device: %s (%s, %s), driver %s, compiler %s. Command: tuning_study %s%s%s%s%s%s\n",
              info.name.c_str(), info.backend.c_str(), info.arch.c_str(),
              info.driver_version.c_str(), info.compiler_version.c_str(), o.command.c_str(),
              o.large ? " --large" : "", o.quick ? " --quick" : "",
              o.kernel.empty() ? "" : (" --kernel " + o.kernel).c_str(),
              (o.device.empty() ? std::string() : " --device " + o.device).c_str(),
              ((o.command == "record" ? " --space " + o.space : std::string()) +
               (o.size.empty() ? std::string() : " --size " + o.size) +
               (o.long_ms > 0 ? " --long-ms " + fmt("%g", o.long_ms) : std::string()) +
               (o.max_seconds > 0 ? " --max-seconds " + fmt("%g", o.max_seconds) : std::string()) +
               (o.resume.empty() ? std::string() : " --resume " + o.resume))
                  .c_str());
  if (info.vendor == "Mesa" || info.name.find("llvmpipe") != std::string::npos)
    std::printf("Note: lavapipe/llvmpipe runs on the CPU: these are CPU timings, not GPU ones.\n");
  std::printf("\n");
}

std::ofstream open_out(const Options& o, const std::string& name) {
  std::filesystem::create_directories(o.out);
  std::filesystem::path p = std::filesystem::path(o.out) / name;
  std::ofstream f(p);
  if (!f) die("open " + p.string(), Status(StatusCode::internal, "cannot write"));
  progress("writing %s", p.string().c_str());
  return f;
}

// ---- racing ------------------------------------------------------------------------------------

Size large_size(const kernels::BundledKernel& k) {
  if (is_matmul(k.name)) return {4096, 4096, 4096};
  return {std::int64_t{1} << 26};
}

struct TuneRun {
  TuningReport report;
  double warmup_ms = 0;  // Autotuner::warmup (compile everything) before tune(), warm runs
  std::uint64_t reps = 0;
  double timed_ms = 0;  // device time of the timed repetitions (count x mean)
  int raced_out = 0, failed = 0, timed = 0;
};

TuneRun summarize_report(const TuningReport& r) {
  TuneRun t;
  t.report = r;
  for (const auto& c : r.results) {
    if (!c.status.ok()) {
      ++t.failed;
      continue;
    }
    if (c.stats.count == 0) continue;
    ++t.timed;
    t.reps += c.stats.count;
    t.timed_ms += c.stats.count * c.stats.mean / 1e6;
    if (c.raced_out) ++t.raced_out;
  }
  return t;
}

// One tuning from a fresh Autotuner; with warm = true, every variant is compiled first.
TuneRun tune_once(Device& dev, const kernels::BundledKernel& k, kernels::Workload& w, bool racing,
                  bool warm) {
  AutotunerOptions ao;
  ao.persistent = false;
  ao.print = false;
  ao.disable = false;
  ao.bench.racing = racing;
  auto tuner = Autotuner::make(k.def, ao);
  if (!tuner.ok()) die(k.name + " Autotuner::make", tuner.status());
  double warm_ms = 0;
  if (warm) {
    auto t0 = Clock::now();
    Status st = (*tuner)->warmup(dev);
    if (!st.ok()) die(k.name + " warmup", st);
    warm_ms = ms_since(t0);
  }
  auto best = (*tuner)->tune(dev, w.args());
  if (!best.ok()) die(k.name + " tune", best.status());
  auto rep = (*tuner)->last_report(dev, w.args());
  if (!rep) die(k.name + " last_report", Status(StatusCode::internal, "no report"));
  TuneRun t = summarize_report(*rep);
  t.warmup_ms = warm_ms;
  return t;
}

struct RacingCase {
  std::string kernel;
  Size size;
  std::size_t configs = 0;
  TuneRun runs[2][2];                        // [racing?][warm?]
  std::map<std::string, Contender> retimed;  // by config text
  std::map<std::string, Status> checked;     // output check of each winner
};

int cmd_racing(const Options& o) {
  auto dev = open(o);
  print_device(dev->info(), o);
  const BenchOptions lb = long_budget(o);
  auto ks = kernels_for(*dev, o);
  dev.reset();  // every tuning below opens its own device, so compile caches start empty
  std::vector<RacingCase> cases;
  for (const auto& k : ks) {
    std::vector<Size> sizes = o.large ? std::vector<Size>{large_size(k)} : k.demo_sizes;
    if (o.quick && !o.large) sizes.resize(1);  // the first demo size only
    if (!o.size.empty()) sizes = {*parse_size(o.size)};
    for (const auto& s : sizes) {
      RacingCase rc;
      rc.kernel = k.name;
      rc.size = s;
      const bool racing_first = cases.size() % 2 == 0;  // alternate the order between cases
      std::unique_ptr<Device> last;
      std::unique_ptr<kernels::Workload> last_w;
      for (int pass = 0; pass < 4; ++pass) {
        const bool racing = racing_first == (pass % 2 == 0);
        const bool warm = pass >= 2;
        // A fresh device each time: the backends cache compiled variants per device.
        last_w.reset();
        last.reset();
        last = open(o);
        last_w = make_workload(*last, k, s);
        progress("%s %s: %s, %s", k.name.c_str(), size_text(s).c_str(),
                 racing ? "racing" : "exhaustive", warm ? "warm compile cache" : "cold");
        TuneRun& t = rc.runs[racing][warm];
        t = tune_once(*last, k, *last_w, racing, warm);
        progress("  warmup %.1f ms + tune %.1f ms, %llu reps, winner {%s}", t.warmup_ms,
                 t.report.wall_ms, static_cast<unsigned long long>(t.reps),
                 t.report.winner.to_string().c_str());
      }
      rc.configs = rc.runs[0][0].report.results.size();
      // Re-time the distinct winners side by side with the long budget, and check each.
      std::vector<Config> winners;
      for (auto& by_mode : rc.runs)
        for (auto& run : by_mode)
          if (std::find(winners.begin(), winners.end(), run.report.winner) == winners.end())
            winners.push_back(run.report.winner);
      const KernelSource* src = k.def.source_for(last->language());
      auto compiled = compile_many(*last, *src, winners);
      std::vector<Contender> cs;
      std::vector<std::string> names;
      for (std::size_t i = 0; i < winners.size(); ++i) {
        if (!compiled[i].ok()) die("compile winner", compiled[i].status());
        rc.checked[winners[i].to_string()] = verify(*last, k, *last_w, winners[i], **compiled[i]);
        Contender c;
        c.kernel = compiled[i]->get();
        c.dims = k.def.dims(winners[i], last_w->args());
        cs.push_back(std::move(c));
        names.push_back(winners[i].to_string());
      }
      progress("re-timing %zu distinct winner(s): %s", winners.size(),
               budget_text(lb, o.rounds).c_str());
      Status st = time_interleaved(*last, cs, last_w->args(), lb, o.rounds,
                                   before_for(k.def, last_w->args()));
      if (!st.ok()) die("re-timing", st);
      for (std::size_t i = 0; i < cs.size(); ++i) rc.retimed[names[i]] = std::move(cs[i]);
      compiled.clear();
      last_w.reset();
      last.reset();
      cases.push_back(std::move(rc));
    }
  }

  std::printf(
      "### Tuning wall time: racing vs exhaustive\n\n"
      "Each tuning: a fresh device and Autotuner, no persistent cache. *Cold*: compiling "
      "included. *Warm*: Autotuner::warmup compiled every variant first (its time, i.e. the "
      "compile cost, in parentheses); the figure is tune() alone; reps, device ms, raced out "
      "and winner are the warm run's. Timed reps: repetitions timed across all "
      "configs; timed device ms: their summed device time (count x mean). Default budgets: "
      "warmup 25 ms and reps 100 ms per config; racing drops a config once its 99%% median "
      "interval lies above the leader's (batches of 5, >= 10 samples).\n\n");
  std::printf(
      "| kernel | size | configs | mode | cold wall ms | warm wall ms (warmup) | timed reps "
      "(warm) | timed device ms (warm) | raced out (warm) | winner (warm) |\n"
      "|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& c : cases) {
    for (int racing : {1, 0}) {
      const TuneRun& cold = c.runs[racing][0];
      const TuneRun& warm = c.runs[racing][1];
      std::printf("| %s | %s | %zu | %s | %.0f | %.0f (%.0f) | %llu | %.1f | %d | %s |\n",
                  c.kernel.c_str(), size_text(c.size).c_str(), c.configs,
                  racing ? "racing" : "exhaustive", cold.report.wall_ms, warm.report.wall_ms,
                  warm.warmup_ms, static_cast<unsigned long long>(warm.reps), warm.timed_ms,
                  warm.raced_out, warm.report.winner.to_string().c_str());
    }
  }
  std::printf(
      "\n| kernel | size | racing cold / exhaustive cold wall | racing warm / exhaustive "
      "warm wall | racing reps / exhaustive reps (warm) |\n|---|---|---|---|---|\n");
  for (const auto& c : cases) {
    std::printf("| %s | %s | %.2f | %.2f | %.2f |\n", c.kernel.c_str(), size_text(c.size).c_str(),
                c.runs[1][0].report.wall_ms / c.runs[0][0].report.wall_ms,
                c.runs[1][1].report.wall_ms / c.runs[0][1].report.wall_ms,
                static_cast<double>(c.runs[1][1].reps) /
                    static_cast<double>(std::max<std::uint64_t>(1, c.runs[0][1].reps)));
  }
  std::printf(
      "\n### Do the racing and exhaustive winners agree?\n\nEvery distinct winner re-timed side "
      "by side: %s. Ratio: raced winner's median / exhaustive winner's median (1.00 when the "
      "same config won). *Within noise*: same config, or the two 99%% median intervals "
      "overlap.\n\n",
      budget_text(lb, o.rounds).c_str());
  std::printf(
      "| kernel | size | run | racing winner | exhaustive winner | raced median [99%% CI] | "
      "exhaustive median [99%% CI] | ratio | within noise | outputs |\n"
      "|---|---|---|---|---|---|---|---|---|---|\n");
  auto out = open_out(o, "racing.tsv");
  out << "kernel\tsize\tmode\tcompile\twall_ms\twarmup_ms\treps\ttimed_device_ms\traced_out\t"
         "failed\twinner\twinner_long_median_ns\n";
  for (const auto& c : cases) {
    for (int warm : {0, 1}) {
      const Config& rw = c.runs[1][warm].report.winner;
      const Config& ew = c.runs[0][warm].report.winner;
      const Contender& r = c.retimed.at(rw.to_string());
      const Contender& e = c.retimed.at(ew.to_string());
      const bool same = rw == ew;
      const bool overlap = r.ci.lo <= e.ci.hi && e.ci.lo <= r.ci.hi;
      std::string outputs = "ok";
      for (const auto* w : {&rw, &ew}) {
        const Status& s = c.checked.at(w->to_string());
        if (!s.ok()) outputs = "WRONG: " + s.to_string();
      }
      std::printf("| %s | %s | %s | %s | %s | %s | %s | %.3f | %s | %s |\n", c.kernel.c_str(),
                  size_text(c.size).c_str(), warm ? "warm" : "cold", rw.to_string().c_str(),
                  ew.to_string().c_str(), ci_text(r).c_str(), ci_text(e).c_str(),
                  r.stats.median / e.stats.median, same ? "yes (same)" : (overlap ? "yes" : "no"),
                  outputs.c_str());
      for (int racing : {1, 0}) {
        const TuneRun& t = c.runs[racing][warm];
        out << c.kernel << '\t' << size_text(c.size) << '\t' << (racing ? "racing" : "exhaustive")
            << '\t' << (warm ? "warm" : "cold") << '\t' << t.report.wall_ms << '\t' << t.warmup_ms
            << '\t' << t.reps << '\t' << t.timed_ms << '\t' << t.raced_out << '\t' << t.failed
            << '\t' << t.report.winner.to_string() << '\t'
            << c.retimed.at(t.report.winner.to_string()).stats.median << '\n';
      }
    }
  }
  std::printf("\n");
  return 0;
}

// ---- quality -----------------------------------------------------------------------------------

// At least 20 cases over the kernels present: powers of two and ragged sizes.
std::vector<Size> quality_sizes(const std::string& name, const Options& o) {
  const bool mm = is_matmul(name);
  if (o.quick) {
    if (mm) return {{64, 64, 64}, {128, 128, 128}, {100, 130, 72}, {129, 257, 40}, {33, 47, 65}};
    return {{4099}, {65536}, {100003}, {333333}, {1 << 20}};
  }
  if (o.large) {
    if (mm)
      return {{1024, 1024, 1024},
              {2048, 2048, 2048},
              {4096, 4096, 4096},
              {1000, 3000, 777},
              {4096, 1024, 4096}};
    return {{3000017}, {1 << 24}, {10000019}, {1 << 26}, {100000007}};
  }
  if (mm)
    return {{128, 128, 128}, {256, 256, 256}, {512, 512, 512}, {100, 130, 72}, {257, 129, 333}};
  return {{4099}, {100003}, {1 << 20}, {3000017}, {1 << 24}};
}

struct QualityCase {
  std::string kernel;
  Size size;
  std::size_t configs = 0;
  Config chosen, best;
  double chosen_ns = kInf, best_ns = kInf, tune_ms = 0;
  double screen_ratio = kInf;  // chosen / best in the all-configs re-timing
  int rank = 0;                // 1 = the chosen config is the best one re-timed
  bool overlap = false;
  Status chosen_check, best_check;
};

int cmd_quality(const Options& o) {
  auto dev = open(o);
  print_device(dev->info(), o);
  const BenchOptions lb = long_budget(o);
  auto ks = kernels_for(*dev, o);
  std::vector<QualityCase> cases;
  auto out = open_out(o, "quality.tsv");
  out << "kernel\tsize\tconfig\tchosen\tlong_median_ns\tp20_ns\tp80_ns\tsamples\tstatus\n";
  for (const auto& k : ks) {
    const KernelSource* src = k.def.source_for(dev->language());
    auto all = k.def.space.enumerate(dev->info());
    if (!all.ok()) die(k.name + " enumerate", all.status());
    // Every accepted config, compiled once per kernel and re-timed for every case.
    progress("%s: compiling %zu configs for re-timing", k.name.c_str(), all->size());
    auto compiled = compile_many(*dev, *src, *all);
    for (const auto& s : quality_sizes(k.name, o)) {
      QualityCase q;
      q.kernel = k.name;
      q.size = s;
      auto w = make_workload(*dev, k, s);
      AutotunerOptions ao;  // defaults (racing on), memory only
      ao.persistent = false;
      ao.print = false;
      ao.disable = false;
      auto tuner = Autotuner::make(k.def, ao);
      if (!tuner.ok()) die(k.name + " Autotuner::make", tuner.status());
      auto chosen = (*tuner)->tune(*dev, w->args());
      if (!chosen.ok()) die(k.name + " " + size_text(s) + " tune", chosen.status());
      q.chosen = *chosen;
      q.tune_ms = (*tuner)->last_report(*dev, w->args())->wall_ms;
      tuner->reset();
      progress("%s %s: tuned in %.0f ms -> {%s}; re-timing %zu configs", k.name.c_str(),
               size_text(s).c_str(), q.tune_ms, q.chosen.to_string().c_str(), all->size());
      std::vector<Contender> cs(all->size());
      std::vector<std::size_t> live;
      for (std::size_t i = 0; i < all->size(); ++i) {
        if (!compiled[i].ok()) {
          cs[i].status = compiled[i].status();
          cs[i].stats.median = kInf;
          continue;
        }
        cs[i].kernel = compiled[i]->get();
        cs[i].dims = k.def.dims((*all)[i], w->args());
        live.push_back(i);
      }
      std::vector<Contender> timed;
      for (auto i : live) timed.push_back(std::move(cs[i]));
      Status st =
          time_interleaved(*dev, timed, w->args(), lb, o.rounds, before_for(k.def, w->args()));
      if (!st.ok()) die("re-timing", st);
      for (std::size_t j = 0; j < live.size(); ++j) cs[live[j]] = std::move(timed[j]);
      std::size_t ci = all->size(), bi = all->size();
      for (std::size_t i = 0; i < all->size(); ++i) {
        if ((*all)[i] == q.chosen) ci = i;
        if (cs[i].status.ok() && (bi == all->size() || cs[i].stats.median < cs[bi].stats.median))
          bi = i;
      }
      if (bi == all->size()) die(k.name, Status(StatusCode::all_failed, "nothing re-timed"));
      q.configs = all->size();
      q.best = (*all)[bi];
      q.best_ns = cs[bi].stats.median;
      if (ci < all->size()) {
        q.chosen_ns = cs[ci].stats.median;
        q.overlap = cs[ci].ci.lo <= cs[bi].ci.hi;
        q.rank = 1;
        for (const auto& c : cs)
          if (c.status.ok() && c.stats.median < q.chosen_ns) ++q.rank;
        q.chosen_check = compiled[ci].ok() ? verify(*dev, k, *w, q.chosen, **compiled[ci])
                                           : compiled[ci].status();
      } else {
        q.chosen_check = Status(StatusCode::internal, "chosen config not in the enumerated space");
      }
      q.best_check = verify(*dev, k, *w, q.best, **compiled[bi]);
      q.screen_ratio = q.chosen_ns / q.best_ns;
      // The best of many noisy medians is biased low (the minimum of N estimates): confirm
      // with a fresh, independent side-by-side re-timing of the chosen and the best config.
      if (ci < all->size() && ci != bi) {
        std::vector<Contender> pair(2);
        for (int j = 0; j < 2; ++j) {
          const std::size_t idx = j == 0 ? ci : bi;
          pair[static_cast<std::size_t>(j)].kernel = compiled[idx]->get();
          pair[static_cast<std::size_t>(j)].dims = k.def.dims((*all)[idx], w->args());
        }
        BenchOptions cb = lb;
        cb.rep_ms *= 2;
        cb.max_reps *= 2;
        st = time_interleaved(*dev, pair, w->args(), cb, o.rounds, before_for(k.def, w->args()));
        if (!st.ok()) die("confirming", st);
        q.chosen_ns = pair[0].stats.median;
        q.best_ns = pair[1].stats.median;
        q.overlap = pair[0].ci.lo <= pair[1].ci.hi;
      }
      for (std::size_t i = 0; i < all->size(); ++i) {
        out << k.name << '\t' << size_text(s) << '\t' << (*all)[i].to_string() << '\t'
            << (i == ci ? 1 : 0) << '\t' << cs[i].stats.median << '\t' << cs[i].stats.p20 << '\t'
            << cs[i].stats.p80 << '\t' << cs[i].stats.count << '\t'
            << (cs[i].status.ok() ? "ok" : cs[i].status.to_string()) << '\n';
      }
      progress("  chosen/best = %.3f confirmed, %.3f screening (rank %d of %zu)",
               q.chosen_ns / q.best_ns, q.screen_ratio, q.rank, all->size());
      w.reset();
      cases.push_back(std::move(q));
    }
    compiled.clear();
  }

  std::printf(
      "### Selection quality\n\nPer case: tuned with default options (racing on, warmup "
      "25 ms, reps 100 ms per config, fresh Autotuner, memory only), then every config "
      "re-timed (screening): %s. The screening's best and the chosen config are then "
      "re-timed again side by side with twice that budget (confirmation: the least of many "
      "noisy medians is biased low, so the screening ratio overstates the loss). "
      "chosen/best: medians in the confirmation (1.000 when the chosen config was the "
      "screening's best); rank: the chosen config's place in the screening. *Noise*: the "
      "chosen config's 99%% median interval reaches the best's. "
      "Outputs: the chosen and the best config checked against the CPU reference.\n\n",
      budget_text(lb, o.rounds).c_str());
  std::printf(
      "| kernel | size | configs | tune ms | chosen | best | chosen median | best median "
      "| chosen/best | rank | within noise | outputs |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  int good = 0, noise_ok = 0, wrong = 0;
  std::vector<double> ratios;
  for (const auto& q : cases) {
    const double ratio = q.chosen_ns / q.best_ns;
    ratios.push_back(ratio);
    if (ratio <= 1.02) ++good;
    if (ratio <= 1.02 || q.overlap) ++noise_ok;
    std::string outputs = "ok";
    if (!q.chosen_check.ok()) outputs = "chosen WRONG: " + q.chosen_check.to_string();
    if (!q.best_check.ok()) outputs += "; best WRONG: " + q.best_check.to_string();
    if (!q.chosen_check.ok() || !q.best_check.ok()) ++wrong;
    std::printf("| %s | %s | %zu | %.0f | %s | %s | %s | %s | %.3f | %.3f | %d | %s | %s |\n",
                q.kernel.c_str(), size_text(q.size).c_str(), q.configs, q.tune_ms,
                q.chosen.to_string().c_str(), q.best.to_string().c_str(),
                ns_text(q.chosen_ns).c_str(), ns_text(q.best_ns).c_str(), ratio, q.screen_ratio,
                q.rank, q.overlap ? "yes" : "no", outputs.c_str());
  }
  std::sort(ratios.begin(), ratios.end());
  const double n = static_cast<double>(cases.size());
  std::printf(
      "\n**%d of %zu cases (%.0f%%) have chosen/best <= 1.02** (target: >= 95%%); %d of "
      "%zu (%.0f%%) are <= 1.02 or within the best's noise. Median ratio %.3f, worst "
      "%.3f. Wrong outputs: %d.\n\n",
      good, cases.size(), 100.0 * good / n, noise_ok, cases.size(), 100.0 * noise_ok / n,
      ratios[ratios.size() / 2], ratios.back(), wrong);
  return wrong == 0 ? 0 : 2;
}

// ---- record ------------------------------------------------------------------------------------

// matmul_f32 over wider domains of its own parameters. The GLSL source takes any BM, BN, BK,
// TM, TN with TM | BM and TN | BN (its loads stride by the workgroup size, every bound is
// checked), a (BN/TN) x (BM/TM) workgroup and double buffering on or off; the CUDA source has
// its static_asserts, mirrored by the bundled space's own constraints, which are reused here.
std::optional<ConfigSpace> wide_matmul_f32_space(const kernels::BundledKernel& k, Language lang,
                                                 std::string* why) {
  if (k.name != "matmul_f32") {
    *why = "--space wide is defined for matmul_f32 only";
    return std::nullopt;
  }
  ConfigSpace s;
  if (lang == Language::glsl) {
    s.param("BM", {16, 32, 64, 128, 256})
        .param("BN", {16, 32, 64, 128, 256})
        .param("BK", {4, 8, 16, 32})
        .param("TM", {1, 2, 4, 8})
        .param("TN", {1, 2, 4, 8})
        .param("DB", std::vector<Value>{Value{false}, Value{true}})
        .derive([](Config& c) {
          c.launch().block = {static_cast<std::uint32_t>(c.get_int("BN") / c.get_int("TN")),
                              static_cast<std::uint32_t>(c.get_int("BM") / c.get_int("TM")), 1};
        })
        .constrain("TM | BM and TN | BN",
                   [](const Config& c, const DeviceInfo&) {
                     return c.get_int("BM") % c.get_int("TM") == 0 &&
                            c.get_int("BN") % c.get_int("TN") == 0;
                   })
        .constrain("at least 32 invocations",
                   [](const Config& c, const DeviceInfo&) {
                     return c.launch().block.x * c.launch().block.y >= 32;
                   })
        .constrain(
            "bundled constraints (workgroup and shared memory fit)",
            [&k](const Config& c, const DeviceInfo& d) { return k.def.space.accepts(c, d); });
    return s;
  }
  if (lang == Language::cuda_hip) {
    // The kernel's own parameters over wider domains; the block size is not a dimension but
    // follows from them (a thread computes a TM x TN tile: BM * BN / (TM * TN) threads, for
    // any warp size), so every point of the product has its one consistent launch. Then as
    // matmul_f32_derive (cuda_hip_kernels.cpp): a 1-D block and NUM_STAGES * BK * ((BM + 4) +
    // (BN + 4)) floats of dynamic shared memory. 3456 points; 1329 accepted on sm_90.
    s.param("BM", {32, 64, 128, 256})
        .param("BN", {32, 64, 128, 256})
        .param("BK", {8, 16, 32})
        .param("TM", {4, 8})
        .param("TN", {4, 8})
        .param("WTN", {1, 2, 4, 8, 16, 32})
        .param(std::string(kNumStages), {2, 3, 4})
        .derive([](Config& c) {
          const std::int64_t threads =
              c.get_int("BM") * c.get_int("BN") / (c.get_int("TM") * c.get_int("TN"));
          c.launch().block = {static_cast<std::uint32_t>(threads), 1, 1};
          const std::int64_t bytes = c.launch().num_stages * c.get_int("BK") *
                                     ((c.get_int("BM") + 4) + (c.get_int("BN") + 4)) * 4;
          c.launch().shared_bytes = static_cast<std::uint32_t>(bytes);
        })
        .constrain(
            "bundled constraints (shapes, threads, shared memory)",
            [&k](const Config& c, const DeviceInfo& d) { return k.def.space.accepts(c, d); });
    return s;
  }
  *why = "no wide space for this language";
  return std::nullopt;
}

// Compiles configs on `workers` threads in a given order while the caller times them: take(j)
// waits for the j-th. stop() makes the workers quit after the variant each has in hand.
class CompilePipeline {
 public:
  CompilePipeline(Device& dev, const KernelSource& src, std::vector<Config> order, unsigned workers)
      : dev_(dev), src_(src), order_(std::move(order)), slots_(order_.size()) {
    for (unsigned t = 0; t < std::max(1u, workers); ++t) pool_.emplace_back([this] { work(); });
  }
  ~CompilePipeline() {
    stop();
    for (auto& t : pool_) t.join();
  }
  void stop() { stop_ = true; }

  // The j-th variant and its compile wall time in ms; nullopt if `deadline` passes first.
  std::optional<std::pair<Result<std::unique_ptr<CompiledKernel>>, double>> take(
      std::size_t j, Clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(mu_);
    while (!slots_[j].kernel) {
      if (Clock::now() >= deadline) return std::nullopt;
      cv_.wait_for(lock, std::chrono::milliseconds(200));
    }
    auto out = std::make_pair(std::move(*slots_[j].kernel), slots_[j].ms);
    slots_[j].kernel.reset();
    return out;
  }
  std::size_t compiled() const { return done_; }

 private:
  void work() {
    for (std::size_t i = next_++; i < order_.size() && !stop_; i = next_++) {
      auto t0 = Clock::now();
      auto r = dev_.compile(src_, order_[i]);
      const double ms = ms_since(t0);
      {
        std::lock_guard<std::mutex> lock(mu_);
        slots_[i].kernel.emplace(std::move(r));
        slots_[i].ms = ms;
      }
      ++done_;
      cv_.notify_all();
    }
  }

  struct Slot {
    std::optional<Result<std::unique_ptr<CompiledKernel>>> kernel;
    double ms = 0;
  };
  Device& dev_;
  const KernelSource& src_;
  std::vector<Config> order_;
  std::vector<Slot> slots_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<std::size_t> next_{0}, done_{0};
  std::atomic<bool> stop_{false};
  std::vector<std::thread> pool_;
};

bool same_dims(const std::vector<ConfigSpace::Dimension>& a,
               const std::vector<ConfigSpace::Dimension>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].name != b[i].name || a[i].values != b[i].values) return false;
  return true;
}

// Times every configuration of one kernel's space at one size and writes a replay file
// (studies/replay.hpp) row by row: variants compile on all cores while the main thread verifies
// each once against the CPU reference and times it; a failure is a row with its reason. Rows
// are flushed as they are made, in a fixed shuffled order (a run cut short leaves a uniform
// sample of the space); --max-seconds stops cleanly, --resume FILE records only what FILE
// lacks and appends to it.
int cmd_record(const Options& o) {
  auto dev = open(o);
  const DeviceInfo& info = dev->info();
  print_device(info, o);
  Options ko = o;
  if (ko.kernel.empty()) ko.kernel = "matmul_f32";
  auto ks = kernels_for(*dev, ko);
  const auto& k = ks.front();
  Size size = o.large ? large_size(k) : k.demo_sizes.front();
  if (o.quick && o.space == "wide" && is_matmul(k.name)) size = {64, 64, 64};
  if (!o.size.empty()) {
    auto s = parse_size(o.size);
    if (!s) die("--size", Status(StatusCode::invalid_argument, "expected e.g. 256x256x256"));
    size = *s;
  }
  ConfigSpace space = k.def.space;
  std::string space_note = "the bundled space";
  if (o.space == "wide") {
    std::string why;
    auto wide = wide_matmul_f32_space(k, dev->language(), &why);
    if (!wide) die("--space wide", Status(StatusCode::invalid_argument, why));
    space = std::move(*wide);
    space_note = "the wide space (matmul_f32's own parameters over wider domains)";
  } else if (o.space != "bundled") {
    die("--space", Status(StatusCode::invalid_argument, "bundled or wide"));
  }
  auto configs = space.enumerate(info);
  if (!configs.ok()) die("enumerate", configs.status());

  BenchOptions b;
  if (o.quick) {
    b.warmup_ms = 1;
    b.rep_ms = 5;
    b.estimate_runs = 2;
    b.min_reps = 3;
    b.max_reps = 100;
  } else {
    b.warmup_ms = 2;
    b.rep_ms = 15;
    b.estimate_runs = 3;
    b.min_reps = 10;
    b.max_reps = 500;
  }
  if (o.long_ms > 0) b.rep_ms = o.long_ms;
  const std::string timing = "per config: verified once, then warmup " + fmt("%.0f", b.warmup_ms) +
                             " ms, " + fmt("%.0f", b.rep_ms) + " ms of reps (" +
                             std::to_string(b.min_reps) + ".." + std::to_string(b.max_reps) +
                             "), L2 flushed before each rep; median of the reps";

  // The file: a new one under --out, or --resume's, whose header must describe this run.
  std::vector<std::pair<std::string, std::string>> meta = {
      {"kernel", k.name},
      {"size", size_text(size)},
      {"space", o.space},
      {"device", info.name + " (" + info.backend + " " + info.arch + ")"},
      {"driver", info.driver_version},
      {"compiler", info.compiler_version},
      {"timing", timing},
      {"order", "shuffled, seed 1"},
      {"raw", std::to_string(space.raw_size())},
      {"accepted", std::to_string(configs->size())},
  };
  std::filesystem::path path = o.resume;
  std::set<std::string> have;
  if (!o.resume.empty()) {
    auto rec = replay::read_file(o.resume);
    if (!rec.ok()) die("--resume", rec.status());
    for (const char* key : {"kernel", "size", "space", "device"}) {
      std::string want;
      for (const auto& [mk, mv] : meta)
        if (mk == key) want = mv;
      if (rec->meta_value(key) != want)
        die("--resume " + o.resume,
            Status(StatusCode::invalid_argument, std::string("recorded ") + key + " '" +
                                                     rec->meta_value(key) + "', this run '" + want +
                                                     "'"));
    }
    if (!space.is_list() && !same_dims(rec->dims, space.dimensions()))
      die("--resume " + o.resume,
          Status(StatusCode::invalid_argument, "its dimensions differ from this space's"));
    for (const auto& r : rec->rows) have.insert(r.config.to_string());
  } else {
    path = std::filesystem::path(o.out) / ("replay_" + info.backend + "_" + k.name + "_" +
                                           size_text(size) + "_" + o.space + ".tsv");
    std::filesystem::create_directories(o.out);
  }
  std::ofstream out(path, o.resume.empty() ? std::ios::trunc : std::ios::app);
  if (!out) die("open " + path.string(), Status(StatusCode::internal, "cannot write"));
  if (o.resume.empty()) {
    out << replay::header(space, meta);
  } else {
    // A run killed mid-row leaves a line without its newline: end it (the reader drops it).
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (in.tellg() > 0) {
      in.seekg(-1, std::ios::end);
      if (in.get() != '\n') out << '\n';
    }
    out << "# resumed\t" << have.size() << " rows present\n";
  }
  out.flush();

  std::vector<Config> order = *configs;
  std::mt19937_64 rng(1);
  std::shuffle(order.begin(), order.end(), rng);
  std::erase_if(order, [&](const Config& c) { return have.count(c.to_string()) != 0; });
  const unsigned jobs = o.jobs > 0 ? static_cast<unsigned>(o.jobs)
                                   : std::max(1u, std::thread::hardware_concurrency());
  const unsigned workers = jobs > 2 ? jobs - 1 : 1;  // one core stays with the timing thread
  progress(
      "%s %s: %zu accepted configs of %llu (%s); %zu recorded already, %zu to record; "
      "compiling on %u threads -> %s",
      k.name.c_str(), size_text(size).c_str(), configs->size(),
      static_cast<unsigned long long>(space.raw_size()), space_note.c_str(), have.size(),
      order.size(), workers, path.string().c_str());

  auto w = make_workload(*dev, k, size);
  auto before = before_for(k.def, w->args());
  const auto deadline =
      o.max_seconds > 0
          ? g_start + std::chrono::milliseconds(static_cast<std::int64_t>(o.max_seconds * 1000))
          : Clock::time_point::max();
  const auto t1 = Clock::now();
  std::size_t done = 0, failed = 0;
  double compile_ms_sum = 0;
  bool stopped = false;
  {
    CompilePipeline pipe(*dev, *k.def.source_for(dev->language()), order, workers);
    for (std::size_t j = 0; j < order.size(); ++j) {
      auto got = Clock::now() < deadline ? pipe.take(j, deadline) : std::nullopt;
      if (!got) {
        stopped = true;
        break;
      }
      const Config& c = order[j];
      auto& [compiled, compile_ms] = *got;
      compile_ms_sum += compile_ms;
      Status st = compiled.ok() ? Status() : compiled.status();
      if (st.ok()) st = verify(*dev, k, *w, c, **compiled);
      std::optional<SampleStats> stats;
      if (st.ok()) {
        auto r = time_kernel(*dev, **compiled, k.def.dims(c, w->args()), w->args(), b, before);
        if (r.ok())
          stats = *r;
        else
          st = r.status();
      }
      out << replay::row_line(c, stats ? &*stats : nullptr, compile_ms, st) << std::flush;
      ++done;
      if (!st.ok() && ++failed <= 20)
        progress("  {%s}: %s", c.to_string().c_str(), st.to_string().c_str());
      if (st.code() == StatusCode::device_lost) {
        pipe.stop();
        die("record (the row is written; --resume " + path.string() + " goes on)", st);
      }
      if (done % 100 == 0) {
        const double s = ms_since(t1) / 1000;
        progress("  recorded %zu / %zu in %.0f s (%zu compiled), about %.0f s to go", done,
                 order.size(), s, pipe.compiled(),
                 s / static_cast<double>(done) * static_cast<double>(order.size() - done));
      }
    }
    pipe.stop();
  }
  out.close();
  const double run_s = ms_since(t1) / 1000;
  if (stopped)
    progress(
        "stopped by --max-seconds %.0f: %zu of %zu recorded in this run; go on with "
        "--resume %s",
        o.max_seconds, done, order.size(), path.string().c_str());
  w.reset();

  // The summary, over the whole file (earlier runs' rows included).
  auto rec = replay::read_file(path.string());
  if (!rec.ok()) die("reading back " + path.string(), rec.status());
  std::vector<double> sorted;
  std::map<std::string, int> codes;
  const replay::Row* best = nullptr;
  double def_ns = kInf;
  const Config def = replay::project(k.default_config, rec->dims);
  for (const auto& r : rec->rows) {
    if (!r.ok()) {
      ++codes[r.code()];
      continue;
    }
    sorted.push_back(r.median_ns);
    if (!best || r.median_ns < best->median_ns) best = &r;
    if (replay::project(r.config, rec->dims) == def) def_ns = r.median_ns;
  }
  std::sort(sorted.begin(), sorted.end());
  const double n = static_cast<double>(rec->rows.size());
  auto frac_within = [&](double f) {
    if (sorted.empty()) return 0.0;
    const auto m =
        std::upper_bound(sorted.begin(), sorted.end(), sorted.front() * f) - sorted.begin();
    return static_cast<double>(m) / n;
  };
  const bool complete = rec->rows.size() == configs->size();
  std::printf("### Recorded space: %s %s (%s)%s\n\n", k.name.c_str(), size_text(size).c_str(),
              space_note.c_str(), complete ? "" : ", PARTIAL");
  std::printf(
      "| accepted configs | raw points | recorded | timed ok | failed | best | best median | "
      "worst median | default config median | within 5%% of best | within 20%% | this run: "
      "rows, wall s |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::printf(
      "| %zu | %llu | %zu | %zu | %zu | %s | %s | %s | %s | %.1f%% | %.1f%% | %zu, %.1f |\n\n",
      configs->size(), static_cast<unsigned long long>(space.raw_size()), rec->rows.size(),
      sorted.size(), rec->rows.size() - sorted.size(),
      best ? best->config.to_string().c_str() : "-", ns_text(best ? best->median_ns : kInf).c_str(),
      ns_text(sorted.empty() ? kInf : sorted.back()).c_str(), ns_text(def_ns).c_str(),
      100 * frac_within(1.05), 100 * frac_within(1.20), done, run_s);
  for (const auto& [code, m] : codes) std::printf("- failed with %s: %d\n", code.c_str(), m);
  std::printf(
      "Timing %s. Compiling: %.1f s of variant compile wall time on %u threads this run. "
      "Replay: `search_eval --replay %s`%s\n\n",
      timing.c_str(), compile_ms_sum / 1000, workers, path.string().c_str(),
      complete ? "" : (" (partial: go on with `--resume " + path.string() + "`)").c_str());
  return codes.count("wrong_output") == 0 ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tuning_study: racing, selection-quality and replay-recording figures (issue 7)"};
  app.require_subcommand(1, 1);
  Options o;
  auto common = [&o](CLI::App* sc) {
    sc->add_option("--device", o.device,
                   "device spec for tune::open_device (default: its own "
                   "choice: TUNE_DEVICE, TUNE_BACKEND, then the first)");
    sc->add_flag("--large", o.large, "GPU-sized problems (vector_add/reduce 2^26, matmul 4096^3)");
    sc->add_flag("--quick", o.quick, "small sizes and short long-budgets (lavapipe)");
    sc->add_option("--kernel", o.kernel, "only this bundled kernel");
    sc->add_option("--out", o.out, "directory for raw data files")->capture_default_str();
    sc->add_option("--rounds", o.rounds, "interleaved rounds of the long re-timing")
        ->capture_default_str()
        ->check(CLI::Range(1, 100));
    sc->add_option("--long-ms", o.long_ms,
                   "repetition budget per config of the long re-timing (record: of the timing)");
    sc->add_option("--size", o.size, "one problem size, e.g. 4096x4096x4096 or 1048576");
  };
  auto* racing = app.add_subcommand("racing", "tuning wall time, racing vs exhaustive");
  auto* quality = app.add_subcommand("quality", "chosen / best over >= 20 (kernel, shape) cases");
  auto* record = app.add_subcommand("record", "time a kernel's whole space, write a replay file");
  for (auto* sc : {racing, quality, record}) common(sc);
  record->add_option("--space", o.space, "bundled or wide (matmul_f32)")->capture_default_str();
  record->add_option("--max-seconds", o.max_seconds,
                     "stop cleanly this many seconds after start (rows so far are kept)");
  record->add_option("--resume", o.resume,
                     "append to this recording, recording only the configs it lacks");
  record->add_option("--jobs", o.jobs, "cores to use: jobs-1 compile threads (default: all)");
  CLI11_PARSE(app, argc, argv);
  o.command = app.get_subcommands().front()->get_name();
  if (!o.size.empty() && !parse_size(o.size))
    die("--size", Status(StatusCode::invalid_argument, "expected e.g. 256x256x256 or 1048576"));
  disable_persistent_caches();
  g_start = Clock::now();
  if (o.command == "racing") return cmd_racing(o);
  if (o.command == "quality") return cmd_quality(o);
  return cmd_record(o);
}
