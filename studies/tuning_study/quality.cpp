// tuning_study quality: chosen / best over >= 20 (kernel, shape) cases (usage: main.cpp).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "study.hpp"

namespace study {

namespace {

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

}  // namespace

int cmd_quality(const Options& o) {
  auto dev = open(o);
  print_device(dev->info(), o);
  const TimingPolicy lb = long_budget(o);
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
        TimingPolicy cb = lb;
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

}  // namespace study
