// search_eval: how close each search strategy gets to the true best configuration.
//
//   search_eval                      # the synthetic matmul model (deterministic, no hardware)
//   search_eval --replay FILE.tsv    # a recording of real timings (studies/replay.hpp), e.g. from
//                                    # `tuning_study record`
//     best found / true best after a fraction of the space, median over --seeds N (default 20;
//     --first-seed as below)
//   search_eval --t4 T4[:SPACE] ...  # Kernel Tuner T4 files (replay_t4.hpp), each over the space
//                                    # file `tune import-space` made of its T1 problem (without
//                                    # one: the points the T4 file lists)
//     per space and strategy, over --seeds N (default 50) searches of --budget B evaluations
//     (default 1000): evaluations until the best found is within 2%, 1%, 0% of the optimum
//     (median and 90th percentile; ">B" when not reached), best / optimum after 25, 50, 100 and
//     200 evaluations (median), and random sampling's exact figures beside them; --threads T
//     runs seeds in parallel; --strategies a,b,... picks strategies (default: all but
//     exhaustive); --first-seed S numbers the seeds from S (default 1: seeds 1..N), so that a
//     variant chosen on one seed set can be checked on another. --warm starts every search on
//     a T4 file much as the Autotuner's warm start does for a key new to a device
//     (core/src/tuning/warm_start.hpp): from the best kPerOtherDevice configurations of each
//     other T4 file given over the same SPACE (the same kernel on other GPUs), in the order
//     given (the library: newest device first), repeats skipped, at most kWarmStartPoints in
//     all, evaluated first (seeded_search.hpp) and counted as evaluations; unlike the library,
//     no untuned configuration comes first and no quarter-of-the-budget cap applies (a budget
//     of 400 would not bind it); --warm=PER,CAP takes PER of each other file and CAP in all.
//   search_eval --overhead           # the model search's own time per proposal on a 10,000-point
//                                    # space (an objective that costs nothing)
//
// The synthetic model is a roofline over an H100-like device with tile-level arithmetic
// intensity, register-tile ILP, occupancy from threads/shared memory/registers, wave
// quantisation and pipeline depth: parameters interact, as they do on real hardware. Its
// purpose is to rank strategies on a landscape of the right shape, not to predict a GPU.
//
// A replay searches the recording's own product space (its declared dimensions, in order,
// constrained to the recorded points), so neighbourhood moves of annealing and genetic search
// step through the same grid as in a live search; a configuration that failed on the device
// counts as evaluated with an infinite time. Fractions are of the recorded points.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "convergence.hpp"
#include "replay.hpp"
#include "replay_t4.hpp"
#include "search_explorer.hpp"
#include "space/space_file.hpp"
#include "space/space_kernel.hpp"
#include "tune/search.hpp"
#include "tuning/seeded_search.hpp"
#include "tuning/warm_start.hpp"

namespace {

using tune::Config;
using tune::ConfigSpace;

ConfigSpace matmul_space() {
  ConfigSpace s;
  s.param("BM", {16, 32, 64, 128, 256})
      .param("BN", {16, 32, 64, 128, 256})
      .param("BK", {8, 16, 32, 64})
      .param("TM", {1, 2, 4, 8})
      .param("TN", {1, 2, 4, 8})
      .param("STAGES", {1, 2, 3});
  s.constrain("threads", [](const Config& c, const tune::DeviceInfo& d) {
    auto t = (c.get_int("BM") / c.get_int("TM")) * (c.get_int("BN") / c.get_int("TN"));
    return t >= 32 && t <= d.max_threads_per_block;
  });
  s.constrain("smem", [](const Config& c, const tune::DeviceInfo& d) {
    auto bytes = 4 * c.get_int("STAGES") * c.get_int("BK") * (c.get_int("BM") + c.get_int("BN"));
    return bytes <= d.shared_bytes_per_block;
  });
  return s;
}

tune::DeviceInfo h100_like() {
  tune::DeviceInfo d;
  d.compute_units = 132;
  d.max_threads_per_block = 1024;
  d.shared_bytes_per_block = 48 * 1024;
  d.registers_per_block = 65536;
  return d;
}

// Modelled time in microseconds of a 4096^3 fp32 matmul.
double matmul_model(const Config& c) {
  const double M = 4096, N = 4096, K = 4096;
  double bm = c.get_int("BM"), bn = c.get_int("BN"), bk = c.get_int("BK");
  double tm = c.get_int("TM"), tn = c.get_int("TN"), st = c.get_int("STAGES");
  double threads = (bm / tm) * (bn / tn);
  double regs = 32 + tm * tn + tm + tn;  // accumulators + fragments + overhead
  double smem = 4 * st * bk * (bm + bn);
  double by_threads = std::floor(2048 / threads);
  double by_smem = std::floor(228.0 * 1024 / std::max(smem, 1.0));
  double by_regs = std::floor(65536 / (regs * threads));
  double blocks_per_sm = std::max(1.0, std::min({by_threads, by_smem, by_regs, 32.0}));
  double occupancy = std::min(1.0, blocks_per_sm * threads / 2048);
  double tiles = std::ceil(M / bm) * std::ceil(N / bn);
  double waves = std::ceil(tiles / (132 * blocks_per_sm));
  double wave_eff = tiles / (waves * 132 * blocks_per_sm);
  double ilp = std::min(1.0, tm * tn / 32.0) * (regs > 255 ? 0.3 : 1.0);
  double pipe = st == 1 ? 0.6 : (st == 2 ? 0.9 : 1.0);
  double latency_hiding = std::min(1.0, 0.3 + occupancy * pipe + (bk >= 16 ? 0.1 : 0.0));
  double peak = 60e6;  // fp32 FLOP per us
  double compute_us = 2 * M * N * K / (peak * ilp * latency_hiding * wave_eff + 1);
  double intensity = (bm * bn) / (bm + bn) / 2;      // flops per byte from L2 per tile
  double mem_us = 2 * M * N * K / intensity / 10e6;  // 10 TB/s L2
  return std::max(compute_us, mem_us) * (1 + 0.02 * std::log2(bk));
}

struct Case {
  std::string name;
  ConfigSpace space;
  tune::Objective f;
  std::vector<std::string> notes;   // printed under the title
  std::vector<std::uint64_t> warm;  // points every search evaluates first (--warm)
};

Case replay_case(const std::string& path) {
  auto rec = replay::read_file(path);
  if (!rec.ok()) {
    std::fprintf(stderr, "search_eval: %s\n", rec.status().to_string().c_str());
    std::exit(1);
  }
  replay::Replay r = replay::make_replay(*rec);
  Case k{"replay " + path, r.space, r.objective(), {}, {}};
  auto meta = [&](const char* key) {
    std::string v = rec->meta_value(key);
    return v.empty() ? std::string("?") : v;
  };
  if (rec->version >= 1)
    k.notes.push_back("recording: " + meta("kernel") + " " + meta("size") + " (" + meta("space") +
                      " space) on " + meta("device") + "; " + meta("timing"));
  std::string dims;
  for (const auto& d : rec->dims)
    dims += (dims.empty() ? "" : " x ") + d.name + "(" + std::to_string(d.values.size()) + ")";
  k.notes.push_back(std::string(rec->declared_dims ? "declared" : "inferred (no '# dim' lines)") +
                    " dimensions: " + dims + " = " + std::to_string(r.space.raw_size()) +
                    " points; constraint: recorded");
  std::map<std::string, int> codes;
  for (const auto& row : rec->rows)
    if (!row.ok()) ++codes[row.code()];
  std::string failed;
  for (const auto& [code, n] : codes) failed += " " + code + " " + std::to_string(n) + ",";
  if (!failed.empty()) failed.pop_back();
  const std::uint64_t accepted = rec->accepted();
  std::string coverage = accepted == 0 ? std::string("accepted count unknown")
                         : accepted == r.recorded
                             ? "complete: every accepted config of the live space"
                             : "PARTIAL: " + std::to_string(r.recorded) + " of " +
                                   std::to_string(accepted) + " accepted configs of the live space";
  k.notes.push_back(std::to_string(r.recorded) + " recorded configs (" + coverage + "), " +
                    std::to_string(r.failed) + " failed on the device (evaluated as +inf)" +
                    (failed.empty() ? "" : ":" + failed));
  k.notes.push_back("best as recorded: {" + r.best_config.to_string() + "}");
  if (rec->incomplete + rec->duplicates + rec->outside > 0)
    k.notes.push_back("dropped lines: " + std::to_string(rec->incomplete) + " incomplete, " +
                      std::to_string(rec->duplicates) + " duplicates (last kept), " +
                      std::to_string(rec->outside) + " outside the declared domains");
  return k;
}

// ---- T4 mode -----------------------------------------------------------------------------------

// A T4 file over the space of `space_path` (empty: its own points), as a Case.
Case t4_case(const std::string& t4_path, const std::string& space_path) {
  std::vector<ConfigSpace::Dimension> dims;
  std::optional<ConfigSpace> live;
  if (!space_path.empty()) {
    auto file = tune::cli::read_space_file(space_path);
    if (!file.ok()) {
      std::fprintf(stderr, "search_eval: %s\n", file.status().to_string().c_str());
      std::exit(1);
    }
    live = tune::cli::config_space_of(*file);
    dims = live->dimensions();
  }
  auto rec = replay::read_t4(t4_path, dims);
  if (!rec.ok()) {
    std::fprintf(stderr, "search_eval: %s\n", rec.status().to_string().c_str());
    std::exit(1);
  }
  replay::Replay r = replay::make_replay(*rec, live ? &*live : nullptr);
  std::string name = t4_path.substr(t4_path.find_last_of('/') + 1);
  Case k{name, r.space, r.objective(), {}, {}};
  std::string d;
  for (const auto& dim : rec->dims)
    d += (d.empty() ? "" : " x ") + dim.name + "(" + std::to_string(dim.values.size()) + ")";
  k.notes.push_back(std::string(live ? "T1 space " + space_path : "the T4 file's points") + ": " +
                    d + " = " + std::to_string(r.space.raw_size()) + " points");
  k.notes.push_back(std::to_string(r.recorded) + " rows in the space, " + std::to_string(r.failed) +
                    " failed (+inf); " + std::to_string(r.unrecorded) +
                    " accepted points without a row (+inf); " + std::to_string(r.rejected_rows) +
                    " rows the conditions reject; " + std::to_string(rec->outside) +
                    " rows outside the domains");
  return k;
}

struct Figures {
  std::vector<double> to_tol[3];  // per seed: evaluations until within 2%, 1%, 0%
  std::vector<double> ratio[4];   // per seed: best / optimum after 25, 50, 100, 200
};
constexpr double kTolerances[3] = {0.02, 0.01, 0.0};
constexpr std::size_t kAfter[4] = {25, 50, 100, 200};

// The first seed of every run, T4 and replay (--first-seed, at least 1): seeds are first_seed ..
// first_seed + N - 1.
std::uint64_t first_seed = 1;

Figures run_seeds(const tune::SearchStrategy& strategy, const Case& k, double optimum,
                  std::uint64_t budget, int seeds, int threads) {
  std::vector<tune::SearchResult> runs(static_cast<std::size_t>(seeds));
  std::atomic<int> next{0};
  auto work = [&] {
    for (int s = next++; s < seeds; s = next++) {
      auto r = strategy.search(k.space, tune::DeviceInfo{}, k.f, {budget, 0},
                               first_seed + static_cast<std::uint64_t>(s));
      if (!r.ok()) continue;
      // A seeded strategy (--warm) may go past the budget by its seeds: the Autotuner stops
      // it there, and so does this harness.
      if (r->history.size() > budget) r->history.resize(budget);
      runs[static_cast<std::size_t>(s)] = std::move(*r);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  Figures f;
  for (const auto& r : runs) {
    for (int t = 0; t < 3; ++t)
      f.to_tol[t].push_back(convergence::evals_to_within(r.history, optimum, kTolerances[t]));
    for (int a = 0; a < 4; ++a)
      f.ratio[a].push_back(convergence::best_ratio_after(r.history, optimum, kAfter[a]));
  }
  return f;
}

std::string count_text(double v, std::uint64_t budget) {
  if (!std::isfinite(v)) return ">" + std::to_string(budget);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

// One space's table; returns the summary rows (space, strategy, median 2%, p90 2%, @100).
std::vector<std::string> t4_table(const Case& k, const std::vector<std::string>& strategies,
                                  std::uint64_t budget, int seeds, int threads) {
  auto all = tune::make_exhaustive_search()->search(k.space, tune::DeviceInfo{}, k.f, {}, 0);
  if (!all.ok() || !std::isfinite(all->best_value)) {
    std::fprintf(stderr, "search_eval: %s: no configuration succeeded\n", k.name.c_str());
    std::exit(1);
  }
  const double opt = all->best_value;
  std::vector<double> values;
  for (const auto& h : all->history) values.push_back(h.second);
  const std::uint64_t n = values.size();
  std::printf("### %s\n\n%llu accepted configurations, optimum %.6g ms {%s}\n", k.name.c_str(),
              static_cast<unsigned long long>(n), opt * 1e-6, all->best.to_string().c_str());
  for (const auto& note : k.notes) std::printf("- %s\n", note.c_str());
  std::uint64_t within[3] = {0, 0, 0};
  for (double v : values)
    for (int t = 0; t < 3; ++t) within[t] += v <= opt * (1 + kTolerances[t]) ? 1 : 0;
  std::printf("- within 2%%: %llu, within 1%%: %llu, optimal: %llu\n\n",
              static_cast<unsigned long long>(within[0]),
              static_cast<unsigned long long>(within[1]),
              static_cast<unsigned long long>(within[2]));
  std::printf(
      "| strategy | to 2%% median / p90 | to 1%% median / p90 | to 0%% median / p90 | best/opt "
      "@25 | @50 | @100 | @200 |\n|---|---|---|---|---|---|---|---|\n");
  std::printf("| random, exact (expected) |");
  for (int t = 0; t < 3; ++t) {
    auto r = convergence::random_draws_to_hit(n, within[t]);
    std::printf(" %.0f / %.0f (%.0f) |", r.median, r.p90, r.expected);
  }
  for (std::size_t a : kAfter)
    std::printf(" %.3f |", convergence::random_median_ratio(values, a, opt));
  std::printf("\n");
  std::vector<std::string> summary;
  for (const auto& name : strategies) {
    std::shared_ptr<const tune::SearchStrategy> strategy = tune::make_search(name);
    if (!k.warm.empty()) strategy = tune::detail::seeded_search(strategy, k.warm);
    Figures f = run_seeds(*strategy, k, opt, budget, seeds, threads);
    std::printf("| %s |", name.c_str());
    for (int t = 0; t < 3; ++t)
      std::printf(" %s / %s |", count_text(convergence::median(f.to_tol[t]), budget).c_str(),
                  count_text(convergence::p90(f.to_tol[t]), budget).c_str());
    for (int a = 0; a < 4; ++a) std::printf(" %.3f |", convergence::median(f.ratio[a]));
    std::printf("\n");
    std::fflush(stdout);
    const double med = convergence::median(f.to_tol[0]), p = convergence::p90(f.to_tol[0]),
                 at100 = convergence::median(f.ratio[2]);
    char row[256];
    std::snprintf(row, sizeof row, "| %s | %s | %s / %s | %.3f | %s |", k.name.c_str(),
                  name.c_str(), count_text(med, budget).c_str(), count_text(p, budget).c_str(),
                  at100, med <= 100 && p <= 250 && at100 <= 1.02 ? "yes" : "no");
    summary.push_back(row);
  }
  std::printf("\n");
  return summary;
}

// The best `n` points of a case by its own times (finite ones), best first.
std::vector<std::uint64_t> best_of(const Case& k, std::size_t n) {
  auto all = tune::make_exhaustive_search()->search(k.space, tune::DeviceInfo{}, k.f, {}, 0);
  return all.ok() ? tune::detail::best_points(all->history, n) : std::vector<std::uint64_t>{};
}

// --warm: each case's warm start from the other cases over the same space file, as
// warm_start_points orders and caps the other devices' rankings.
void add_warm_starts(std::vector<Case>& cases, const std::vector<std::string>& space_paths,
                     std::size_t per_other, std::size_t cap) {
  std::vector<std::vector<std::uint64_t>> best;
  for (const Case& k : cases) best.push_back(best_of(k, per_other));
  for (std::size_t a = 0; a < cases.size(); ++a) {
    std::string from;
    for (std::size_t b = 0; b < cases.size(); ++b) {
      if (b == a || space_paths[b] != space_paths[a] || space_paths[a].empty()) continue;
      if (cases[a].warm.size() >= cap) break;
      std::vector<std::uint64_t>& w = cases[a].warm;
      for (std::uint64_t i : best[b])
        if (w.size() < cap && std::find(w.begin(), w.end(), i) == w.end()) w.push_back(i);
      from += (from.empty() ? "" : ", ") + cases[b].name;
    }
    cases[a].notes.push_back("warm start: " + std::to_string(cases[a].warm.size()) +
                             " points, the best of " + (from.empty() ? "none" : from));
  }
}

// Warm start (--warm[=PER,CAP]): per other file, and in all; {0, 0}: none.
struct WarmStart {
  std::size_t per_other = 0, cap = 0;
};

int t4_mode(const std::vector<std::string>& paths, std::vector<std::string> strategies,
            std::uint64_t budget, int seeds, int threads, WarmStart warm) {
  if (strategies.empty())
    for (auto n : tune::search_names())
      if (n != "exhaustive") strategies.emplace_back(n);
  std::vector<Case> cases;
  std::vector<std::string> space_paths;
  for (const auto& c : paths) {
    const auto colon = c.find(':');
    space_paths.push_back(colon == c.npos ? "" : c.substr(colon + 1));
    cases.push_back(t4_case(c.substr(0, colon), space_paths.back()));
  }
  if (warm.cap > 0) add_warm_starts(cases, space_paths, warm.per_other, warm.cap);
  std::vector<std::string> summary;
  for (const Case& k : cases) {
    auto rows = t4_table(k, strategies, budget, seeds, threads);
    summary.insert(summary.end(), rows.begin(), rows.end());
  }
  std::printf(
      "Targets (issue 36): median evaluations to within 2%% <= 100, 90th percentile <= 250, "
      "median best/opt after 100 <= 1.02. %d seeds from %llu, budget %llu.\n\n"
      "| space | strategy | to 2%% median / p90 | best/opt @100 | all three |\n"
      "|---|---|---|---|---|\n",
      seeds, static_cast<unsigned long long>(first_seed), static_cast<unsigned long long>(budget));
  for (const auto& r : summary) std::printf("%s\n", r.c_str());
  return 0;
}

// ---- overhead ----------------------------------------------------------------------------------

// The model search's time per proposal on a 10 x 10 x 10 x 10 space whose objective costs
// nothing: the strategy's own overhead next to a compile and a timing.
int overhead_mode() {
  ConfigSpace s;
  std::vector<tune::Value> v;
  for (std::int64_t i = 1; i <= 10; ++i) v.emplace_back(i * 16);
  s.param("A", v).param("B", v).param("C", v).param("D", v);
  tune::Objective f = [](const Config& c) {
    const double a = std::log2(static_cast<double>(c.get_int("A"))) - 5,
                 b = std::log2(static_cast<double>(c.get_int("B"))) - 6;
    return 1 + a * a + b * b + 0.1 * static_cast<double>(c.get_int("C") % 48) +
           0.01 * static_cast<double>(c.get_int("D"));
  };
  std::printf("| strategy | evaluations | ms per proposal |\n|---|---|---|\n");
  for (const char* name :
       {"model", "random", "annealing", "genetic", "pattern", "differential_evolution"})
    for (std::uint64_t budget : {100u, 250u, 500u, 1000u}) {
      auto st = tune::make_search(name);
      const auto t0 = std::chrono::steady_clock::now();
      auto r = st->search(s, tune::DeviceInfo{}, f, {budget, 0}, 1);
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (!r.ok()) return 1;
      std::printf("| %s | %llu | %.3f |\n", name, static_cast<unsigned long long>(r->evaluations),
                  ms / static_cast<double>(r->evaluations));
    }
  std::printf(
      "\nSpace: 10,000 configurations (4 parameters of 10 values), no constraints; one "
      "seed; wall time of the whole search / evaluations.\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string replay_path;
  std::vector<std::string> t4_cases, strategies;
  int seeds = 0, threads = 1;
  std::uint64_t budget = 1000;
  bool overhead = false;
  WarmStart warm;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--replay" && i + 1 < argc) {
      replay_path = argv[++i];
    } else if (a == "--t4" && i + 1 < argc) {
      t4_cases.emplace_back(argv[++i]);
    } else if (a == "--seeds" && i + 1 < argc) {
      seeds = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--first-seed" && i + 1 < argc) {
      first_seed = std::max<std::uint64_t>(1, std::strtoull(argv[++i], nullptr, 10));
    } else if (a == "--budget" && i + 1 < argc) {
      budget = std::max<std::uint64_t>(1, std::strtoull(argv[++i], nullptr, 10));
    } else if (a == "--threads" && i + 1 < argc) {
      threads = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--strategies" && i + 1 < argc) {
      std::string list = argv[++i];
      for (std::size_t pos = 0; pos <= list.size();) {
        std::size_t comma = list.find(',', pos);
        if (comma == list.npos) comma = list.size();
        std::string name = list.substr(pos, comma - pos);
        if (!tune::make_search(name)) {
          std::fprintf(stderr, "search_eval: --strategies: no strategy '%s'\n", name.c_str());
          return 2;
        }
        strategies.push_back(name);
        pos = comma + 1;
      }
    } else if (a == "--overhead") {
      overhead = true;
    } else if (a == "--warm" || a.starts_with("--warm=")) {
      warm = {tune::detail::kPerOtherDevice, tune::detail::kWarmStartPoints};
      if (a.size() > 7) {
        char* end = nullptr;
        warm.per_other = std::strtoull(a.c_str() + 7, &end, 10);
        warm.cap = *end == ',' ? std::strtoull(end + 1, nullptr, 10) : 0;
        if (warm.per_other == 0 || warm.cap == 0) {
          std::fprintf(stderr, "search_eval: --warm=PER,CAP: two counts above 0\n");
          return 2;
        }
      }
    } else {
      std::fprintf(stderr,
                   "usage: search_eval [--replay FILE.tsv | --t4 T4[:SPACE]... | --overhead] "
                   "[--seeds N] [--first-seed S] [--budget B] [--threads T] [--strategies a,b] "
                   "[--warm[=PER,CAP]]\n");
      return 2;
    }
  }
  if (overhead) return overhead_mode();
  if (!t4_cases.empty())
    return t4_mode(t4_cases, strategies, budget, seeds ? seeds : 50, threads, warm);
  if (seeds == 0) seeds = 20;
  Case k = !replay_path.empty()
               ? replay_case(replay_path)
               : Case{"synthetic fp32 matmul 4096^3 model", matmul_space(), matmul_model, {}, {}};
  tune::DeviceInfo dev = h100_like();
  auto all = tune::make_exhaustive_search()->search(k.space, dev, k.f, {}, 0);
  if (!all.ok()) {
    std::fprintf(stderr, "%s\n", all.status().to_string().c_str());
    return 1;
  }
  const double truth = all->best_value;
  const double n = static_cast<double>(all->evaluations);
  std::printf("%s: %.0f accepted configs (of %llu), true best %.4g {%s}\n", k.name.c_str(), n,
              static_cast<unsigned long long>(k.space.raw_size()), truth,
              all->best.to_string().c_str());
  for (const auto& note : k.notes) std::printf("- %s\n", note.c_str());
  std::printf("\n");
  if (!std::isfinite(truth)) {
    std::fprintf(stderr, "search_eval: every configuration failed; nothing to compare with\n");
    return 1;
  }
  const double fractions[] = {0.01, 0.02, 0.05, 0.10, 0.20};
  std::printf("| strategy | 1%% | 2%% | 5%% | 10%% | 20%% |\n|---|---|---|---|---|---|\n");
  std::string target;  // issue 7: median within 5% of the true best after 10% of the space
  for (std::string_view sv : tune::search_names()) {
    if (sv == "exhaustive") continue;
    const std::string name(sv);
    auto strategy = tune::make_search(name);
    std::printf("| %s |", name.c_str());
    for (double frac : fractions) {
      tune::SearchBudget b;
      b.max_evaluations = static_cast<std::uint64_t>(std::max(1.0, std::round(frac * n)));
      std::vector<double> ratios;
      for (std::uint64_t s = 0; s < static_cast<std::uint64_t>(seeds); ++s) {
        auto r = strategy->search(k.space, dev, k.f, b, first_seed + s);
        ratios.push_back(r.ok() ? r->best_value / truth : INFINITY);
      }
      std::sort(ratios.begin(), ratios.end());
      const std::size_t m = ratios.size();
      const double median = (ratios[(m - 1) / 2] + ratios[m / 2]) / 2;
      std::printf(" %.3f |", median);
      if (frac == 0.10)
        target += (target.empty() ? "" : ", ") + name + (median <= 1.05 ? " yes" : " no");
    }
    std::printf("\n");
  }
  std::printf(
      "\nCells: median over %d seeds of best found / true best after evaluating that "
      "fraction of the accepted configs.\nWithin 5%% of the true best after 10%%: %s.\n",
      seeds, target.c_str());
  return 0;
}
