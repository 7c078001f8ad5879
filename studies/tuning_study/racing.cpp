// tuning_study racing: tuning wall time, racing vs exhaustive (usage: main.cpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "study.hpp"

namespace study {

namespace {

// "1.234 ms [1.2, 1.3]": the median and its 99% interval, in the median's unit.
std::string ci_text(const Contender& c) {
  const double m = c.stats.median;
  if (!std::isfinite(m)) return "inf";
  const double unit = m >= 1e6 ? 1e6 : (m >= 1e3 ? 1e3 : 1.0);
  const char* f = m >= 1e6 ? "%.3f" : "%.1f";
  return ns_text(m) + " [" + fmt(f, c.ci.lo / unit) + ", " + fmt(f, c.ci.hi / unit) + "]";
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

}  // namespace

int cmd_racing(const Options& o) {
  auto dev = open(o);
  print_device(dev->info(), o);
  const TimingPolicy lb = long_budget(o);
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

}  // namespace study
