// `tune-lab stability`. See stability_command.hpp.
#include "stability_command.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "command_error.hpp"
#include "open_cli_device.hpp"
#include "stability_judge.hpp"
#include "stability_reference.hpp"
#include "stats.hpp"
#include "sustained_turn.hpp"
#include "timing_policy.hpp"
#include "tune/backend/hash.hpp"
#include "tune/kernels/bundled.hpp"
#include "tune/tune.hpp"

namespace tune::cli {
namespace {

constexpr const char* kStabilityCommand = "tune-lab stability";  // prefixes its error messages

struct StabilityArgs {
  std::string device;
  std::string kernel;
  int runs = 5;
  bool quick = false;
  bool json = false;
  bool quality = false;      // compare each pick with an exhaustive reference timing
  double heat_ms = 0;        // heavy GPU load before each tuning
  bool no_showdown = false;  // BenchOptions::showdown_rounds = 0 (to measure what it buys)
  bool no_screen = false;    // BenchOptions::showdown_screen_rounds = 0 (likewise)
  bool no_sustain = false;   // BenchOptions::showdown_sustain_ms = 0 (likewise)
  double sustain_ms = -1;    // BenchOptions::showdown_sustain_ms when >= 0 (to compare lengths)
  int sustain_pairs = TimingPolicy{}.showdown_sustain_pairs;
  int sustain_contenders = TimingPolicy{}.showdown_sustain_contenders;
  int reference_passes = 2;  // --quality: passes over every candidate (reference_medians)
  int judge_pairs = 3;       // --quality: forward/backward pairs of the judge (head_to_head)
  int judge_each_pairs = 0;  // --quality: pairs of a judge right after each run; 0: none
  double tie_tolerance = TimingPolicy{}.tie_tolerance;
  int sizes = 0;  // the first this many demo sizes of each kernel; 0: all (--quick: 1)
  // Where every order of turns comes from (the reference's, the judges', the tuner's sustained
  // turns' via BenchOptions::showdown_seed): 0: a fresh one, printed (text and JSON).
  std::uint64_t seed = 0;
};

// The orders of one key's turns, each use its own, all from StabilityArgs::seed: each seed is
// the base hashed with the key's index, the use and the run (hash_combine), so that no two
// uses share one, whatever --runs is.
struct TurnSeeds {
  std::uint64_t base = 0;
  std::uint64_t key = 0;
  std::uint64_t reference() const { return mix(0, 0); }
  std::uint64_t end_judge() const { return mix(1, 0); }
  std::uint64_t run(int r) const { return mix(2, static_cast<std::uint64_t>(r)); }
  std::uint64_t each_judge(int r) const { return mix(3, static_cast<std::uint64_t>(r)); }

 private:
  // Never 0: BenchOptions::showdown_seed 0 means "draw one".
  std::uint64_t mix(std::uint64_t use, std::uint64_t r) const {
    const std::uint64_t z = hash_combine(hash_combine(hash_combine(base, key), use), r);
    return z == 0 ? 1 : z;
  }
};

// A pick more than this much slower than the fastest is a wrong pick (issue 15).
constexpr double kWrongPick = 1.02;
// The judge times the picks against this many of the reference's fastest candidates.
constexpr int kJudgeTop = 3;
// A pick is shown wrong when the judge's one-sided lower bound of its ratio at this
// confidence (HeadToHead::ratio_lower) exceeds kWrongPick.
constexpr double kJudgeConfidence = 0.95;

// Picks more than kWrongPick from the fastest; a pick with no time (NaN) counts as wrong.
int count_wrong(const std::vector<double>& ratios) {
  return static_cast<int>(
      std::count_if(ratios.begin(), ratios.end(), [](double r) { return !(r <= kWrongPick); }));
}

// Picks whose ratio's lower bound exceeds kWrongPick (a NaN bound is not counted).
int count_shown_wrong(const std::vector<double>& lower) {
  return static_cast<int>(
      std::count_if(lower.begin(), lower.end(), [](double r) { return r > kWrongPick; }));
}

// The largest ratio, or NaN when any is NaN.
double worst(const std::vector<double>& ratios) {
  double w = 0;
  for (double r : ratios) w = std::isnan(w) || std::isnan(r) ? NAN : std::max(w, r);
  return w;
}

// One key's outcome over the runs.
struct KeyOutcome {
  std::string kernel, size;
  std::map<std::string, int> winners;  // config text -> runs that picked it
  std::vector<std::string> picks;      // each successful run's pick, in run order
  int failed = 0;                      // runs whose tuning failed
  int runs = 0;
  // With --quality: each candidate's reference median (and the two passes it is the mean of),
  // and each run's pick over the fastest.
  std::map<std::string, double> reference;
  std::map<std::string, std::vector<double>> reference_passes;
  std::vector<double> pick_ratios;
  // With --quality and judge pairs: the picks and the reference's fastest timed head to head,
  // and each run's pick over the fastest of them.
  HeadToHead judge;
  std::vector<double> judged_ratios;
  std::vector<double> judged_lower;  // each ratio's lower bound (HeadToHead::ratio_lower)
  // With --judge-each-pairs: right after each run, its pick and the reference's fastest timed
  // head to head (the same minute as the tuning), each run's ratio and its lower bound.
  std::vector<HeadToHead> each_judge;
  std::vector<double> each_ratios, each_lower;
  // Each run's sustained contenders' turn medians (ShowdownReport::sustained_medians).
  std::vector<std::map<std::string, std::vector<double>>> sustained_medians;
  // Each run's ShowdownReport::sustained_order: each round's turns in order.
  std::vector<std::vector<std::vector<std::string>>> sustained_order;
  // Each run's own medians (its TuningReport) of the judge's contenders: how the tuning saw them.
  std::vector<std::map<std::string, double>> run_medians;
  std::vector<double> tune_ms;          // each run's TuningReport::wall_ms (compiling included)
  int sustained = 0;                    // runs whose showdown held sustained turns
  std::vector<double> sustained_turns;  // each run's ShowdownReport::sustained_turns
  double median_tune_ms() const { return tune_ms.empty() ? 0.0 : quantile(tune_ms, 0.5); }
  // Runs that picked the most frequent winner, over all runs.
  double agreement() const {
    int top = 0;
    for (const auto& [c, n] : winners) top = std::max(top, n);
    return runs == 0 ? 0.0 : 100.0 * top / runs;
  }
};

// Tunes one workload `runs` times, each with a fresh Autotuner and no database.
KeyOutcome measure_key(Device& dev, const kernels::BundledKernel& k,
                       const std::vector<std::int64_t>& size, const StabilityArgs& a, unsigned seed,
                       const TurnSeeds& turns) {
  KeyOutcome out;
  out.kernel = k.name;
  auto w = k.workload(size);
  out.size = w->size_text();
  if (Status st = w->setup(dev, seed); !st.ok())
    fail_command(kStabilityCommand, k.name + " " + out.size + ": setup failed: " + st.to_string());
  AutotunerOptions opts;
  opts.persistent = false;  // every run tunes from nothing
  if (a.no_showdown) opts.bench.expert.showdown_rounds = 0;
  if (a.no_screen) opts.bench.expert.showdown_screen_rounds = 0;
  if (a.no_sustain) opts.bench.expert.showdown_sustain_ms = 0;
  if (a.sustain_ms >= 0) opts.bench.expert.showdown_sustain_ms = a.sustain_ms;
  opts.bench.expert.showdown_sustain_pairs = a.sustain_pairs;
  opts.bench.expert.showdown_sustain_contenders = a.sustain_contenders;
  opts.bench.expert.tie_tolerance = a.tie_tolerance;
  if (a.quick) {
    opts.bench.warmup_ms = 2;
    opts.bench.rep_ms = 10;
  }
  double fastest_ns = INFINITY;
  const double turn_ms = a.quick ? 20.0 : 100.0;
  Candidates candidates;
  if (a.quality) {
    auto compiled = compile_candidates(dev, k, *w);
    if (!compiled.ok())
      fail_command(kStabilityCommand, k.name + " " + out.size + ": compiling the reference: " +
                                          compiled.status().to_string());
    candidates = std::move(*compiled);
    auto ref = reference_medians(dev, candidates, turn_ms, a.reference_passes, turns.reference());
    if (!ref.ok())
      fail_command(kStabilityCommand,
                   k.name + " " + out.size + ": reference timing: " + ref.status().to_string());
    out.reference_passes = std::move(*ref);
    out.reference = pass_means(out.reference_passes);
    fastest_ns = fastest(out.reference);
  }
  std::vector<std::string>& picks = out.picks;
  std::vector<std::map<std::string, double>> medians;  // each run's report, by config text
  for (int r = 0; r < a.runs; ++r) {
    if (Status st = heat_gpu(dev, a.heat_ms); !st.ok())
      fail_command(kStabilityCommand, st.to_string());
    opts.bench.expert.showdown_seed = turns.run(r);
    auto tuner = Autotuner::make(k.def, opts);
    if (!tuner.ok()) fail_command(kStabilityCommand, k.name + ": " + tuner.status().to_string());
    auto best = (*tuner)->tune(dev, w->args());
    ++out.runs;
    if (!best.ok()) {
      ++out.failed;
      continue;
    }
    ++out.winners[best->to_string()];
    picks.push_back(best->to_string());
    if (auto report = (*tuner)->last_report(dev, w->args())) {
      auto& m = medians.emplace_back();
      for (const ConfigResult& result : report->results)
        if (result.status.ok()) m[result.config.to_string()] = result.stats.median;
      out.tune_ms.push_back(report->wall_ms);
      if (report->showdown.sustained > 0) ++out.sustained;
      out.sustained_turns.push_back(report->showdown.sustained_turns);
      out.sustained_medians.push_back(report->showdown.sustained_medians);
      out.sustained_order.push_back(report->showdown.sustained_order);
    }
    if (a.quality) {
      auto it = out.reference.find(best->to_string());
      out.pick_ratios.push_back(it == out.reference.end() ? NAN : it->second / fastest_ns);
    }
    if (a.quality && a.judge_each_pairs > 0) {
      auto judge = head_to_head(
          dev, candidates, judge_contenders({{best->to_string(), 1}}, out.reference, kJudgeTop),
          turn_ms, a.judge_each_pairs, turns.each_judge(r));
      if (!judge.ok())
        fail_command(kStabilityCommand, k.name + " " + out.size + ": judging run " +
                                            std::to_string(r + 1) +
                                            "'s pick: " + judge.status().to_string());
      out.each_ratios.push_back(judge->ratio(best->to_string()));
      out.each_lower.push_back(judge->ratio_lower(best->to_string(), kJudgeConfidence));
      out.each_judge.push_back(std::move(*judge));
    }
  }
  if (a.quality && a.judge_pairs > 0 && !picks.empty()) {
    auto judge =
        head_to_head(dev, candidates, judge_contenders(out.winners, out.reference, kJudgeTop),
                     turn_ms, a.judge_pairs, turns.end_judge());
    if (!judge.ok())
      fail_command(kStabilityCommand,
                   k.name + " " + out.size + ": judging the picks: " + judge.status().to_string());
    out.judge = std::move(*judge);
    for (const std::string& pick : picks) {
      out.judged_ratios.push_back(out.judge.ratio(pick));
      out.judged_lower.push_back(out.judge.ratio_lower(pick, kJudgeConfidence));
    }
    for (const auto& run : medians) {
      auto& m = out.run_medians.emplace_back();
      for (const auto& [config, rounds] : out.judge.rounds)
        if (auto it = run.find(config); it != run.end()) m[config] = it->second;
    }
  }
  return out;
}

void print_text(const DeviceInfo& info, const std::vector<KeyOutcome>& keys, int runs,
                std::uint64_t seed) {
  std::printf(
      "device: %s (%s)\n%d runs per key, no tuning database; turn orders from --seed %llu\n\n",
      info.name.c_str(), info.backend.c_str(), runs, static_cast<unsigned long long>(seed));
  std::printf("%-12s %-22s %9s  %s\n", "kernel", "size", "agreement", "winners (runs)");
  double sum = 0;
  int unanimous = 0;
  for (const auto& k : keys) {
    std::string w;
    std::vector<std::pair<std::string, int>> sorted(k.winners.begin(), k.winners.end());
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& x, const auto& y) { return x.second > y.second; });
    for (const auto& [c, n] : sorted)
      w += (w.empty() ? "" : "; ") + c + " (" + std::to_string(n) + ")";
    if (k.failed > 0)
      w += (w.empty() ? "" : "; ") + std::string("failed (") + std::to_string(k.failed) + ")";
    std::printf("%-12s %-22s %8.0f%%  %s\n", k.kernel.c_str(), k.size.c_str(), k.agreement(),
                w.c_str());
    if (!k.pick_ratios.empty())
      std::printf("%-35s picks > %.0f%% from the reference's fastest: %d of %zu, worst %.3fx\n", "",
                  (kWrongPick - 1) * 100, count_wrong(k.pick_ratios), k.pick_ratios.size(),
                  worst(k.pick_ratios));
    if (!k.reference_passes.empty())
      std::printf("%-35s reference: its passes differ by up to %.1f%%\n", "",
                  100 * pass_spread(k.reference_passes));
    if (!k.judged_ratios.empty())
      std::printf(
          "%-35s head to head with %zu contenders: picks > %.0f%% from the fastest: %d of "
          "%zu, worst %.3fx; its pairs differ by up to %.1f%%\n",
          "", k.judge.rounds.size(), (kWrongPick - 1) * 100, count_wrong(k.judged_ratios),
          k.judged_ratios.size(), worst(k.judged_ratios), 100 * k.judge.pair_spread);
    if (!k.judged_lower.empty())
      std::printf("%-35s   of them shown > %.0f%% at %.0f%% confidence: %d\n", "",
                  (kWrongPick - 1) * 100, kJudgeConfidence * 100,
                  count_shown_wrong(k.judged_lower));
    if (!k.each_ratios.empty())
      std::printf(
          "%-35s judged right after each run: picks > %.0f%% from the fastest: %d of %zu, "
          "worst %.3fx; shown at %.0f%% confidence: %d\n",
          "", (kWrongPick - 1) * 100, count_wrong(k.each_ratios), k.each_ratios.size(),
          worst(k.each_ratios), kJudgeConfidence * 100, count_shown_wrong(k.each_lower));
    if (!k.tune_ms.empty())
      std::printf(
          "%-35s tuning: median %.0f ms; sustained turns held in %d of %zu runs, median %.0f "
          "turns\n",
          "", k.median_tune_ms(), k.sustained, k.tune_ms.size(),
          k.sustained_turns.empty() ? 0.0 : quantile(k.sustained_turns, 0.5));
    sum += k.agreement();
    unanimous += k.winners.size() == 1 && k.failed == 0 ? 1 : 0;
  }
  if (!keys.empty()) {
    std::printf("\n%zu keys: mean agreement %.0f%%, %d with the same winner in every run\n",
                keys.size(), sum / static_cast<double>(keys.size()), unanimous);
  }
  int wrong = 0, judged_wrong = 0, each_wrong = 0, each_shown = 0;
  std::size_t picks = 0, judged = 0, each = 0;
  for (const auto& k : keys) {
    wrong += count_wrong(k.pick_ratios);
    picks += k.pick_ratios.size();
    judged_wrong += count_wrong(k.judged_ratios);
    judged += k.judged_ratios.size();
    each_wrong += count_wrong(k.each_ratios);
    each_shown += count_shown_wrong(k.each_lower);
    each += k.each_ratios.size();
  }
  if (picks > 0)
    std::printf("wrong picks (> %.0f%% slower than the reference's fastest): %d of %zu tunings\n",
                (kWrongPick - 1) * 100, wrong, picks);
  if (judged > 0)
    std::printf("wrong picks (> %.0f%% slower than the fastest, head to head): %d of %zu tunings\n",
                (kWrongPick - 1) * 100, judged_wrong, judged);
  if (each > 0)
    std::printf(
        "wrong picks (> %.0f%% slower than the fastest, judged right after each run): %d of %zu "
        "tunings, %d shown at %.0f%% confidence\n",
        (kWrongPick - 1) * 100, each_wrong, each, each_shown, kJudgeConfidence * 100);
}

// The judges held right after each run (--judge-each-pairs): their rounds, each run's ratio
// and its lower bound, and the counts.
nlohmann::json each_judge_json(const KeyOutcome& k) {
  nlohmann::json rounds = nlohmann::json::array();
  for (const HeadToHead& h : k.each_judge) rounds.push_back(h.rounds);
  return {{"rounds_ns", rounds},
          {"pick_ratios", k.each_ratios},
          {"pick_ratios_lower", k.each_lower},
          {"wrong_picks", count_wrong(k.each_ratios)},
          {"shown_wrong", count_shown_wrong(k.each_lower)}};
}

void print_json(const DeviceInfo& info, const std::vector<KeyOutcome>& keys, int runs,
                std::uint64_t seed) {
  nlohmann::json j = {
      {"device", info.name},
      {"backend", info.backend},
      {"runs", runs},
      // As text: above 2^53 a JSON reader that keeps numbers as doubles would round it.
      {"seed", std::to_string(seed)}};
  j["keys"] = nlohmann::json::array();
  for (const auto& k : keys) {
    j["keys"].push_back({{"kernel", k.kernel},
                         {"size", k.size},
                         {"agreement", k.agreement()},
                         {"winners", k.winners},
                         {"picks", k.picks},
                         {"failed", k.failed},
                         {"reference_ns", k.reference},
                         {"reference_passes_ns", k.reference_passes},
                         {"reference_pass_spread", pass_spread(k.reference_passes)},
                         {"pick_ratios", k.pick_ratios},
                         {"wrong_picks", count_wrong(k.pick_ratios)},
                         {"judge",
                          {{"rounds_ns", k.judge.rounds},
                           {"ns", k.judge.ns},
                           {"pair_spread", k.judge.pair_spread},
                           {"pick_ratios", k.judged_ratios},
                           {"pick_ratios_lower", k.judged_lower},
                           {"run_medians_ns", k.run_medians},
                           {"wrong_picks", count_wrong(k.judged_ratios)},
                           {"shown_wrong", count_shown_wrong(k.judged_lower)}}},
                         {"judge_each", each_judge_json(k)},
                         {"sustained_medians_ns", k.sustained_medians},
                         {"sustained_order", k.sustained_order},
                         {"tune_ms", k.tune_ms},
                         {"sustained_runs", k.sustained},
                         {"sustained_turns", k.sustained_turns}});
  }
  std::printf("%s\n", j.dump(2).c_str());
}

void cmd_stability(const StabilityArgs& a) {
  std::unique_ptr<Device> dev = open_cli_device("stability", a.device, "tune-lab");
  if (!dev) throw CLI::RuntimeError(1);
  std::vector<KeyOutcome> keys;
  const std::uint64_t seed = a.seed != 0 ? a.seed : fresh_seed();
  bool any = false;
  for (const auto& k : kernels::bundled_kernels(dev->language())) {
    if (!a.kernel.empty() && k.name != a.kernel) continue;
    // Kernels for other architectures (the sm_90 wgmma matmuls) unless asked for by name.
    if (a.kernel.empty() && !kernels::offered_on(k, dev->info())) continue;
    any = true;
    std::size_t sizes = a.quick ? 1 : k.demo_sizes.size();
    if (a.sizes > 0) sizes = std::min(sizes, static_cast<std::size_t>(a.sizes));
    for (std::size_t s = 0; s < sizes; ++s)
      keys.push_back(measure_key(*dev, k, k.demo_sizes[s], a, 42 + static_cast<unsigned>(s),
                                 TurnSeeds{seed, keys.size()}));
  }
  if (!any)
    fail_command(kStabilityCommand, "no bundled kernel" +
                                        (a.kernel.empty() ? "" : " named " + a.kernel) + " for " +
                                        dev->info().backend);
  if (a.json)
    print_json(dev->info(), keys, a.runs, seed);
  else
    print_text(dev->info(), keys, a.runs, seed);
}

}  // namespace

void add_stability_command(CLI::App& app) {
  auto args = std::make_shared<StabilityArgs>();
  CLI::App* c = app.add_subcommand(
      "stability",
      "Tune each bundled kernel's sizes several times without the database and report how "
      "often the winner changes");
  add_device_option(*c, args->device);
  c->add_option("--kernel", args->kernel, "only this kernel");
  c->add_option("--runs", args->runs, "tunings per key")->check(CLI::Range(2, 1000));
  c->add_flag("--quick", args->quick, "first demo size only, short timing budgets");
  c->add_flag("--json", args->json, "Machine-readable output");
  c->add_flag("--quality", args->quality,
              "Also time every candidate exhaustively (a 100 ms turn of back-to-back launches "
              "each, its second half counted, in --reference-passes passes, in pairs of an "
              "order and its reverse, the order turned each pair) and count the picks more "
              "than 2% slower than the fastest");
  c->add_option("--heat-ms", args->heat_ms,
                "Before each tuning, load the GPU this long with the largest bundled matmul")
      ->check(CLI::Range(0.0, 600000.0));
  c->add_flag("--no-showdown", args->no_showdown,
              "Tune without the finalists' interleaved showdown (BenchOptions::showdown_rounds "
              "= 0), to compare");
  c->add_flag("--no-screen", args->no_screen,
              "Tune without the screen before the showdown (BenchOptions::showdown_screen_rounds "
              "= 0), to compare");
  c->add_flag("--no-sustain", args->no_sustain,
              "Tune without the showdown's sustained turns (BenchOptions::showdown_sustain_ms "
              "= 0), to compare");
  c->add_option("--sustain-ms", args->sustain_ms,
                "Tune with sustained turns of this length (BenchOptions::showdown_sustain_ms; "
                "the default is twice the device's power-settle time), to compare")
      ->check(CLI::Range(0.0, 10000.0));
  c->add_option("--reference-passes", args->reference_passes,
                "With --quality: time every candidate in this many passes (in pairs of an "
                "order and its reverse, so an odd count is rounded up; default 2), each "
                "candidate's reference the mean of its passes")
      ->check(CLI::Range(2, 20));
  c->add_option("--judge-pairs", args->judge_pairs,
                "With --quality: after a key's runs, time its picks and the reference's three "
                "fastest head to head in this many forward/backward pairs of sustained turns "
                "(default 3; 0: no judge; a confidence bound takes 2 or more) and count the picks "
                "more than 2% slower than the fastest of them")
      ->check(CLI::Range(0, 20));
  c->add_option("--judge-each-pairs", args->judge_each_pairs,
                "With --quality: right after each run, time its pick and the reference's three "
                "fastest head to head in this many forward/backward pairs of sustained turns "
                "(default 0: none; a confidence bound takes 2 or more), so that a pick is judged "
                "in the same minute as its tuning")
      ->check(CLI::Range(0, 20));
  c->add_option("--sustain-contenders", args->sustain_contenders,
                "Hold sustained turns for up to this many near-ties "
                "(BenchOptions::showdown_sustain_contenders; default 5)")
      ->check(CLI::Range(2, 50));
  c->add_option("--sustain-pairs", args->sustain_pairs,
                "Allow up to this many forward/backward pairs of sustained turns until they "
                "decide the pick (BenchOptions::showdown_sustain_pairs; default 3)")
      ->check(CLI::Range(1, 10));
  c->add_option("--tie-tolerance", args->tie_tolerance,
                "Tune with this winner-rule band (BenchOptions::tie_tolerance; default 0.01): "
                "medians within it of the fastest are equal and the first in canonical order "
                "wins; 0: the fastest wins")
      ->check(CLI::Range(0.0, 0.5));
  c->add_option("--seed", args->seed,
                "Draw every order of sustained turns (reference, judges, the tunings' own) from "
                "this seed, to repeat a run with the same --kernel/--sizes/--quick (default 0: a "
                "fresh one, printed)");
  c->add_option("--sizes", args->sizes,
                "Only the first this many of each kernel's demo sizes (default: all)")
      ->check(CLI::Range(1, 100));
  c->callback([args] { cmd_stability(*args); });
}

}  // namespace tune::cli
