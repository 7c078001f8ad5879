// AutotunerOptions::effort on the simulated device: how many configurations each preset
// evaluates (every candidate of a small space, the preset's budget of a model-guided search on
// a large one), which search it names in the report, that every search evaluates the
// configuration the kernel runs untuned first (TUNE_DISABLE's pick: the first accepted point,
// or the perf model's best estimate), and that a kernel's own KernelDef::search is kept.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <set>

#include "sim_fixture.hpp"
#include "timing_policy.hpp"
#include "tuning/effort_plan.hpp"

using namespace tune;
using namespace tune::testing;

namespace {

// A BM x BN product of `bm` x `bn` points; the cost has its minimum at (bm*2/3, bn/3).
struct Grid {
  int bm = 1, bn = 1;
  KernelDef def() const {
    ConfigSpace space;
    std::vector<Value> m, n;
    for (int i = 1; i <= bm; ++i) m.emplace_back(std::int64_t{i});
    for (int i = 1; i <= bn; ++i) n.emplace_back(std::int64_t{i});
    space.param("BM", m).param("BN", n);
    return sim_kernel(std::move(space));
  }
  SimDevice::CostModel cost() const {
    const double cm = bm * 2.0 / 3.0, cn = bn / 3.0;
    return [cm, cn](const Config& c, ArgList) {
      const double a = static_cast<double>(c.get_int("BM")) - cm;
      const double b = static_cast<double>(c.get_int("BN")) - cn;
      return 1000.0 + 5.0 * (a * a + b * b);
    };
  }
};

struct Tuned {
  TuningReport report;
  std::uint64_t compiles = 0;
};

Tuned tune_with(KernelDef def, Effort effort, const SimDevice::CostModel& cost) {
  SimRig rig;
  rig.dev.set_cost_model(cost);
  rig.dev.set_record_events(false);
  AutotunerOptions opts = quiet_options();
  opts.effort = effort;
  auto tuner = make_tuner(std::move(def), opts);
  auto args = rig.args(100);
  auto best = tuner->tune(rig.dev, args);
  REQUIRE_MESSAGE(best.ok(), best.status().to_string());
  auto report = tuner->last_report(rig.dev, args);
  REQUIRE(report.has_value());
  return {*report, rig.dev.compiles()};
}

const std::string& guided_name() {
  static const std::string name(detail::guided_search()->name());
  return name;
}

}  // namespace

TEST_CASE("effort: each preset's evaluations on small and large spaces") {
  struct Case {
    Effort effort;
    Grid grid;
    std::size_t evaluated;  // configurations the tuning evaluates
    bool searched;          // by the model-guided search (else every candidate timed)
  };
  const Case cases[] = {
      // quick: every candidate up to 30, else a search of 30.
      {Effort::quick, {5, 6}, 30, false},
      {Effort::quick, {6, 6}, 30, true},
      {Effort::quick, {20, 50}, 30, true},
      // standard: every candidate up to 250, else a search of 250.
      {Effort::standard, {10, 25}, 250, false},
      {Effort::standard, {12, 25}, 250, true},
      {Effort::standard, {40, 50}, 250, true},
      // thorough: every candidate up to 4096, else a search of 1000.
      {Effort::thorough, {40, 50}, 2000, false},
      {Effort::thorough, {65, 64}, 1000, true},
  };
  for (const Case& c : cases) {
    CAPTURE(to_string(c.effort));
    CAPTURE(c.grid.bm * c.grid.bn);
    const Tuned t = tune_with(c.grid.def(), c.effort, c.grid.cost());
    CHECK(t.report.results.size() == c.evaluated);
    CHECK(t.compiles == c.evaluated);
    CHECK(t.report.strategy == (c.searched ? guided_name() : std::string()));
    CHECK(t.report.partial == c.searched);
  }
}

TEST_CASE("effort: a search it chooses is the model-guided one") {
  const std::string name = guided_name();
  CHECK(name == "model");
}

// The effort's plan counts the candidates to choose between timing them all and a search;
// when it times them all, those candidates are the ones timed: early_prune and the perf model
// (user code) run once per tuning, not once for the plan and again for the timing.
TEST_CASE("effort: a space timed whole runs early_prune and the perf model once per tuning") {
  for (Effort effort : {Effort::quick, Effort::standard, Effort::thorough}) {
    CAPTURE(to_string(effort));
    int prunes = 0, estimates = 0;
    KernelDef def = Grid{4, 4}.def();
    def.early_prune = [&](std::vector<Config> cs, ArgList) {
      ++prunes;
      return cs;
    };
    def.perf_model.estimate = [&](const Config& c, ArgList, const DeviceInfo&) {
      ++estimates;
      return static_cast<double>(c.get_int("BM"));
    };
    def.perf_model.top_k = 8;
    const Tuned t = tune_with(std::move(def), effort, Grid{4, 4}.cost());
    CHECK(t.report.strategy.empty());  // 8 candidates: timed whole by every effort
    CHECK(prunes == 1);
    CHECK(estimates == 16);  // once per point of the 4 x 4 space
  }
}

TEST_CASE("effort: a search evaluates the configuration the kernel runs untuned first") {
  SUBCASE("the first accepted point, when constraints reject the space's first points") {
    Grid g{20, 50};
    KernelDef def = g.def();
    def.space.constrain("BM>=3",
                        [](const Config& c, const DeviceInfo&) { return c.get_int("BM") >= 3; });
    const Tuned t = tune_with(def, Effort::quick, g.cost());
    REQUIRE(t.report.results.size() == 30);
    CHECK(t.report.results.front().config.to_string() == "BM=3,BN=1");
    // Never twice.
    std::set<std::string> seen;
    for (const auto& r : t.report.results) CHECK(seen.insert(r.config.to_string()).second);
  }
  SUBCASE("the perf model's best estimate") {
    Grid g{20, 50};
    KernelDef def = g.def();
    def.perf_model.top_k = 1000;  // keeps every candidate: only the order changes
    def.perf_model.estimate = [](const Config& c, ArgList, const DeviceInfo&) {
      return std::abs(static_cast<double>(c.get_int("BM") - 7)) +
             std::abs(static_cast<double>(c.get_int("BN") - 11));
    };
    const Tuned t = tune_with(def, Effort::standard, g.cost());
    REQUIRE(t.report.results.size() == 250);
    CHECK(t.report.results.front().config.to_string() == "BM=7,BN=11");
  }
  SUBCASE("a kernel's own strategy and budget are kept, seeded alike") {
    Grid g{20, 50};
    KernelDef def = g.def();
    def.search.strategy = make_search("random");
    def.search.budget.max_evaluations = 12;
    def.search.seed = 3;
    for (Effort e : {Effort::quick, Effort::thorough}) {
      CAPTURE(to_string(e));
      const Tuned t = tune_with(def, e, g.cost());
      CHECK(t.report.results.size() == 12);
      CHECK(t.report.strategy == "random");
      CHECK(t.report.results.front().config.to_string() == "BM=1,BN=1");
    }
  }
}

TEST_CASE("effort: a search of the standard budget lands near the optimum of a smooth space") {
  Grid g{40, 50};  // 2,000 points, optimum near BM=27, BN=17
  const Tuned t = tune_with(g.def(), Effort::standard, g.cost());
  double best = INFINITY;
  for (const auto& r : t.report.results) best = std::min(best, r.stats.median);
  double optimum = INFINITY;
  for (int m = 1; m <= 40; ++m)
    for (int n = 1; n <= 50; ++n) {
      const double a = m - 40 * 2.0 / 3.0, b = n - 50 / 3.0;
      optimum = std::min(optimum, 1000.0 + 5.0 * (a * a + b * b));
    }
  // SimDevice's timings are its cost model without noise: the search's best is a real point.
  CHECK(best <= optimum * 1.02);
}

TEST_CASE("warm start: a search on a new key evaluates the store's winners of other keys early") {
  Grid g{40, 50};  // 2,000 points: the standard effort searches
  auto store = SqliteStore::open(":memory:");
  REQUIRE(store != nullptr);
  SimRig rig;
  rig.dev.set_cost_model(g.cost());
  rig.dev.set_record_events(false);
  AutotunerOptions opts = quiet_options();
  opts.store = store;
  auto tuner = make_tuner(g.def(), opts);

  auto first_args = rig.args(100);
  REQUIRE(tuner->tune(rig.dev, first_args).ok());
  const TuningReport cold = tuner->last_report(rig.dev, first_args).value();
  const Config winner = cold.winner;
  REQUIRE(cold.strategy == guided_name());
  REQUIRE(cold.results.front().config.to_string() == "BM=1,BN=1");

  // A new key of the same kernel on the same device: the untuned configuration first, then the
  // first key's winner, each timed here (a prior, not a substitute), within the same budget.
  auto second_args = rig.args(200);
  REQUIRE(tuner->tune(rig.dev, second_args).ok());
  const TuningReport warm = tuner->last_report(rig.dev, second_args).value();
  REQUIRE(warm.results.size() == 250);
  CHECK(warm.results[0].config.to_string() == "BM=1,BN=1");
  CHECK(warm.results[1].config == winner);
  CHECK_FALSE(warm.results[1].from_store);
  CHECK(warm.results[1].stats.count > 0);
  // Never twice, though the strategy may propose the prior again.
  std::set<std::string> seen;
  for (const auto& r : warm.results) CHECK(seen.insert(r.config.to_string()).second);

  // Another store kind (no listing of keys): no prior, the search starts cold.
  auto memory = std::make_shared<MemoryStore>();
  opts.store = memory;
  auto other = make_tuner(g.def(), opts);
  REQUIRE(other->tune(rig.dev, first_args).ok());
  REQUIRE(other->tune(rig.dev, second_args).ok());
  const TuningReport cold2 = other->last_report(rig.dev, second_args).value();
  CHECK(cold2.results.size() == 250);
  CHECK(cold2.results[0].config.to_string() == "BM=1,BN=1");
}

TEST_CASE("warm start: a key new to this device starts from other devices' rankings of it") {
  Grid g{40, 50};  // 2,000 points: the standard effort searches
  auto store = SqliteStore::open(":memory:");
  REQUIRE(store != nullptr);
  SimRig a;  // the devices outlive the tuner
  a.dev.set_cost_model(g.cost());
  a.dev.set_record_events(false);
  DeviceInfo other = SimDevice::default_info();
  other.name = "another simulated device";
  SimRig b(other);
  b.dev.set_cost_model(g.cost());
  b.dev.set_record_events(false);
  AutotunerOptions opts = quiet_options();
  opts.store = store;
  auto tuner = make_tuner(g.def(), opts);

  auto args_a = a.args(100);
  REQUIRE(tuner->tune(a.dev, args_a).ok());
  const TuningReport on_a = tuner->last_report(a.dev, args_a).value();

  // Another device (another fingerprint), the same key: the untuned configuration, then the
  // other device's best four (the first two checked), each timed here.
  auto args_b = b.args(100);
  REQUIRE(tuner->tune(b.dev, args_b).ok());
  const TuningReport on_b = tuner->last_report(b.dev, args_b).value();
  REQUIRE(on_b.results.size() >= 3);
  CHECK(on_b.results[0].config.to_string() == "BM=1,BN=1");
  CHECK(on_b.results[1].config == on_a.winner);
  CHECK_FALSE(on_b.results[1].from_store);
  CHECK(on_b.results[1].stats.count > 0);
  // The second: A's runner-up by the winner rule, so no configuration A timed, its winner
  // aside, was faster there by more than the tie tolerance.
  const Config second = on_b.results[2].config;
  double second_on_a = -1;
  for (const auto& r : on_a.results)
    if (r.config == second) second_on_a = r.stats.median;
  REQUIRE(second_on_a > 0);
  const double tie = resolve_timing(opts.bench, opts.effort).tie_tolerance;
  for (const auto& r : on_a.results)
    if (r.status.ok() && !(r.config == on_a.winner) && !(r.config == second))
      CHECK(second_on_a <= r.stats.median * (1.0 + tie));
}

TEST_CASE("warm start: the store's points take at most a quarter of the search's budget") {
  Grid g{40, 50};  // 2,000 points: quick and standard both search
  SimRig rig;
  auto args = rig.args(100);
  // What the store might know: a point this space does not have, the untuned BM=1,BN=1 again
  // and a repeat, none of which takes a place; then 20 distinct points, far from the optimum.
  std::vector<Config> valid;
  for (int i = 0; i < 20; ++i) valid.push_back(Config{}.set("BM", 2 + i).set("BN", 45));
  std::vector<Config> known = {Config{}.set("BM", 99).set("BN", 45),
                               Config{}.set("BM", 1).set("BN", 1), valid[0]};
  known.insert(known.end(), valid.begin(), valid.end());
  const SimDevice::CostModel cost = g.cost();
  const Objective f = [&](const Config& c) { return cost(c, args); };
  const KernelDef def = g.def();
  // (No structured bindings: clang 14 cannot capture them in CAPTURE's lambda.)
  for (const auto& c : {std::pair{Effort::quick, std::size_t{7}},  // 30 / 4
                        std::pair{Effort::standard, std::size_t{20}}}) {
    const Effort effort = c.first;
    const std::size_t taken = c.second;
    CAPTURE(static_cast<int>(effort));
    auto plan =
        detail::plan_search(def, effort, rig.dev.info(), args, Config{}, [&] { return known; });
    REQUIRE(plan.ok());
    REQUIRE(plan->has_value());
    const SearchOptions& p = **plan;
    // The plan is made; a short search shows its seeds.
    SearchBudget shorter = p.budget;
    shorter.max_evaluations = taken + 2;
    auto r = p.strategy->search(def.space, rig.dev.info(), f, shorter, 1);
    REQUIRE(r.ok());
    REQUIRE(r->history.size() > taken + 1);
    CHECK(def.space.at(r->history[0].first).to_string() == "BM=1,BN=1");
    for (std::size_t k = 0; k < taken; ++k)
      CHECK(def.space.at(r->history[k + 1].first) == valid[k]);
    // The next evaluation is the strategy's own: not the next known point in line.
    if (taken < valid.size())
      CHECK_FALSE(def.space.at(r->history[taken + 1].first) == valid[taken]);
  }
}
