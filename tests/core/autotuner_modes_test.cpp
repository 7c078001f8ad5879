// Racing, search-driven tuning, background (nearest-key) tuning, TUNE_DISABLE and the tuning
// budget, on the simulated device. Noise is deterministic for a seed: no test depends on
// wall-clock time.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "sim_fixture.hpp"
#include "stats.hpp"
#include "timing_policy.hpp"

using namespace tune;
using namespace tune::testing;

namespace {

BenchOptions racing_bench(bool racing) {
  BenchOptions b = tiny_bench();
  b.rep_ms = 0.5;  // simulated: ~250 repetitions of a ~2 us kernel
  b.expert.max_reps = 400;
  b.racing = racing;
  return b;
}

// 12 configs 5% apart around BM=48 with 2% lognormal noise.
std::pair<Config, std::uint64_t> tune_once(bool racing, std::uint64_t seed) {
  SimRig rig;
  rig.dev.set_cost_model([](const Config& c, ArgList) {
    return 2000.0 * (1.0 + 0.05 * std::fabs(static_cast<double>(c.get_int("BM") - 48) / 8.0));
  });
  rig.dev.set_noise(0.02, seed);
  rig.dev.set_record_events(false);
  auto opts = quiet_options();
  opts.bench = racing_bench(racing);
  auto tuner =
      Autotuner::make(sim_kernel(bm_space({8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96})), opts)
          .value();
  auto args = rig.args(1000);
  auto c = tuner->tune(rig.dev, args).value();
  return {c, rig.dev.timed_reps()};
}

}  // namespace

TEST_CASE("racing: same winner as exhaustive timing for a fraction of the repetitions") {
  for (std::uint64_t seed : {1, 2, 3}) {
    CAPTURE(seed);
    auto [raced, raced_reps] = tune_once(true, seed);
    auto [full, full_reps] = tune_once(false, seed);
    CHECK(raced.get_int("BM") == 48);
    CHECK(full.get_int("BM") == 48);
    CHECK(raced_reps * 3 < full_reps);
  }
}

TEST_CASE("racing: configs within the noise are kept, not dropped") {
  SimRig rig;
  rig.dev.set_cost_model([](const Config&, ArgList) { return 1000.0; });  // all equal
  rig.dev.set_noise(0.05, 9);
  auto opts = quiet_options();
  opts.bench = racing_bench(true);
  auto tuner = Autotuner::make(sim_kernel(bm_space({1, 2, 3, 4})), opts).value();
  auto args = rig.args(10);
  REQUIRE(tuner->tune(rig.dev, args).ok());
  auto report = tuner->last_report(rig.dev, args).value();
  int raced_out = 0;
  for (const auto& r : report.results) raced_out += r.raced_out ? 1 : 0;
  // Identical configurations are never "slower beyond noise" at 99% confidence... except by
  // the 1% chance per comparison that the interval test allows: at most one here.
  CHECK(raced_out <= 1);
}

TEST_CASE("racing: near-ties stop at the tolerance instead of spending their whole budgets") {
  // Configs 0.1% apart with 0.3% noise: telling them apart takes (nearly) the full budget;
  // with a 1% tolerance the others stop once each is known to be within 1% of the leader.
  auto run = [](double tolerance) {
    SimRig rig;
    rig.dev.set_cost_model(
        [](const Config& c, ArgList) { return c.get_int("BM") == 1 ? 1000.0 : 1001.0; });
    rig.dev.set_noise(0.003, 5);
    rig.dev.set_record_events(false);
    auto opts = quiet_options();
    opts.bench = racing_bench(true);
    opts.bench.expert.race_tolerance = tolerance;
    // The race alone: a showdown would replace the race's samples (counted below) with its own
    // fixed rounds (tests/core/showdown_test.cpp).
    opts.bench.expert.showdown_rounds = 0;
    auto tuner = Autotuner::make(sim_kernel(bm_space({1, 2, 3})), opts).value();
    auto args = rig.args(10);
    Config c = tuner->tune(rig.dev, args).value();
    auto report = tuner->last_report(rig.dev, args).value();
    int settled = 0;
    std::size_t samples = 0;  // timed in the race (warm-up and estimates not counted)
    for (const auto& r : report.results) {
      settled += r.settled ? 1 : 0;
      samples += r.stats.count;
    }
    return std::tuple{c, samples, settled, report.to_string()};
  };
  // Plain variables, not structured bindings: CAPTURE's lambda cannot capture those (clang 14).
  const auto tied = run(0.01), full = run(0.0);
  const Config& tied_pick = std::get<0>(tied);
  const Config& full_pick = std::get<0>(full);
  const std::size_t tied_reps = std::get<1>(tied), full_reps = std::get<1>(full);
  const int settled = std::get<2>(tied), none_settled = std::get<2>(full);
  const std::string& text = std::get<3>(tied);
  const std::string& full_text = std::get<3>(full);
  CAPTURE(text);
  CAPTURE(full_text);
  CHECK(settled >= 1);
  CHECK(none_settled == 0);
  CHECK(tied_reps * 4 < full_reps);
  CHECK(text.find("(within tolerance of the leader)") != std::string::npos);
  // Either pick is within 0.1% of the best: both are right.
  CHECK(full_pick.has("BM"));
  CHECK(tied_pick.has("BM"));
}

TEST_CASE("racing: a device whose clock idled is raced at full clock, not at the idle one") {
  // The driver idled the clock before the race (3x slower, stepping up every 0.5 ms of
  // work): the race settles it first (over a 1 ms window), so every timed config is measured
  // at its modelled time and the fastest wins, exhaustive or raced.
  for (bool racing : {true, false}) {
    CAPTURE(racing);
    SimRig rig;
    rig.dev.set_cost_model([](const Config& c, ArgList) {
      return 2000.0 * (1.0 + 0.05 * std::fabs(static_cast<double>(c.get_int("BM") - 48) / 8.0));
    });
    rig.dev.set_record_events(false);
    auto opts = quiet_options();
    opts.bench = racing_bench(racing);
    opts.bench.expert.settle_batch_ms = 0.05;
    opts.bench.expert.settle_window_ms = 1.0;
    auto tuner = Autotuner::make(sim_kernel(bm_space({32, 40, 48, 56, 64})), opts).value();
    auto args = rig.args(1000);
    rig.dev.set_clock_ramp(3.0, 2e6, 4);
    CHECK(tuner->tune(rig.dev, args).value().get_int("BM") == 48);
    auto report = tuner->last_report(rig.dev, args).value();
    for (const auto& r : report.results) {
      if (r.stats.count == 0) continue;
      CAPTURE(r.config.to_string());
      CHECK(r.stats.median < rig.dev.modelled_ns(r.config, args) * 1.02);
    }
  }
}

TEST_CASE("racing: configs already compiled are raced while a slow compile finishes") {
  SimRig rig;
  rig.dev.set_cost_model([](const Config& c, ArgList) {
    return 2000.0 * (1.0 + 0.1 * std::fabs(static_cast<double>(c.get_int("BM") - 32) / 16.0));
  });
  rig.dev.set_noise(0.02, 3);
  rig.dev.compile_delay_if([](const Config& c) { return c.get_int("BM") == 64; }, 300.0);
  auto opts = quiet_options();
  opts.bench = racing_bench(true);
  auto tuner = Autotuner::make(sim_kernel(bm_space({16, 32, 48, 64})), opts).value();
  auto args = rig.args(1000);
  CHECK(tuner->tune(rig.dev, args).value().get_int("BM") == 32);
  // Race batches (race_batch = 5 repetitions; estimates take 2) ran before the slow compile
  // ended, and the slow config still joined the race and was timed.
  const auto ev = rig.dev.events();
  const auto slow = std::find(ev.begin(), ev.end(), "compile BM=64");
  REQUIRE(slow != ev.end());
  const auto batches_before = std::count_if(ev.begin(), slow, [](const std::string& e) {
    return e.rfind("time ", 0) == 0 && e.find("reps=5") != std::string::npos;
  });
  CHECK(batches_before > 0);
  auto report = tuner->last_report(rig.dev, args).value();
  for (const auto& r : report.results) {
    CAPTURE(r.config.to_string());
    CHECK(r.stats.count > 0);
  }
}

TEST_CASE("median_interval: distribution-free bounds around the median") {
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  auto ci = median_interval(v, 0.99);
  CHECK(ci.lo < 50.5);
  CHECK(ci.hi > 50.5);
  CHECK(ci.lo >= 35);  // binomial(100, 1/2): the 99% interval is about [37, 64]
  CHECK(ci.hi <= 66);
  std::vector<double> few = {3, 1, 2};
  auto wide = median_interval(few, 0.99);  // too few samples: [min, max]
  CHECK(wide.lo == 1);
  CHECK(wide.hi == 3);
}

TEST_CASE("search strategy: the Autotuner evaluates only the budget and keeps the best seen") {
  SimRig rig;
  ConfigSpace space;
  std::vector<Value> v;
  for (int i = 1; i <= 64; ++i) v.emplace_back(std::int64_t{i});
  space.param("BM", v).param("BN", v);  // 4096 points
  rig.dev.set_cost_model([](const Config& c, ArgList) {
    double a = static_cast<double>(c.get_int("BM") - 40),
           b = static_cast<double>(c.get_int("BN") - 9);
    return 1000.0 + a * a + b * b;
  });
  auto def = sim_kernel(space);
  def.search.strategy = make_genetic_search();
  def.search.budget.max_evaluations = 200;
  def.search.seed = 4;
  auto store = std::make_shared<MemoryStore>();
  auto opts = quiet_options();
  opts.store = store;
  auto tuner = Autotuner::make(def, opts).value();
  auto args = rig.args(100);
  auto c = tuner->tune(rig.dev, args).value();
  auto report = tuner->last_report(rig.dev, args).value();
  CHECK(report.results.size() == 200);
  CHECK(report.partial);
  CHECK(rig.dev.compiles() == 200);
  // The winner rule: within tie_tolerance of the best seen, the canonical first.
  double best = 1e300;
  for (const auto& r : report.results) best = std::min(best, r.stats.median);
  const double picked =
      1000.0 + std::pow(c.get_int("BM") - 40, 2) + std::pow(c.get_int("BN") - 9, 2);
  CHECK(picked <= best * (1.0 + resolve_timing(opts.bench, opts.effort).tie_tolerance));
  for (const auto& r : report.results)
    if (r.stats.median <= best * (1.0 + resolve_timing(opts.bench, opts.effort).tie_tolerance))
      CHECK(c.to_string() <= r.config.to_string());
  CHECK(store->saved_rows == 200);

  // A second tuner with the same store reuses those timings without compiling them again.
  SimRig rig2;
  rig2.dev.set_cost_model([](const Config&, ArgList) { return 5000.0; });
  auto tuner2 = Autotuner::make(def, opts).value();
  auto args2 = rig2.args(100);
  REQUIRE(tuner2->tune(rig2.dev, args2).ok());
  CHECK(rig2.dev.compiles() < 200);
}

TEST_CASE("search strategy: a batch's compiles run while its first point is timed") {
  // The model-guided search proposes its points in batches (its first: 20 random points). While
  // the first point of that batch is timed, the kernel body waits (at most 20 s, no timing is
  // asserted) for a compile of a later point of the same batch to start: it only does if the
  // batch's compiles were started together. Evaluated one at a time, none starts.
  SimRig rig;
  ConfigSpace space;
  std::vector<Value> v;
  for (int i = 1; i <= 40; ++i) v.emplace_back(std::int64_t{i});
  space.param("BM", v).param("BN", v);  // 1600 points
  rig.dev.set_cost_model([](const Config& c, ArgList) {
    return 1000.0 + static_cast<double>(c.get_int("BM") + c.get_int("BN"));
  });
  rig.dev.set_record_events(false);
  std::atomic<int> compiles_started{0};
  rig.dev.compile_delay_if(
      [&](const Config&) {
        compiles_started.fetch_add(1);
        return false;
      },
      0.0);
  std::mutex mu;
  std::set<std::string> timed;  // configurations whose body ran, in the order first seen
  int started_when_second_timed = -1;
  rig.dev.set_kernel_body([&](const Config& c, ArgList, SimDevice&) {
    std::lock_guard lock(mu);
    if (!timed.insert(c.to_string()).second || timed.size() != 2) return;
    // The second configuration timed is the first of the model's first batch (the first was
    // the untuned configuration, a batch of its own).
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (compiles_started.load() < 3 && std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    started_when_second_timed = compiles_started.load();
  });
  auto def = sim_kernel(space);
  def.search.strategy = make_search("model");
  def.search.budget.max_evaluations = 40;
  auto opts = quiet_options();
  opts.store = std::make_shared<MemoryStore>();
  auto tuner = Autotuner::make(def, opts).value();
  auto args = rig.args(100);
  REQUIRE(tuner->tune(rig.dev, args).ok());
  CHECK(tuner->last_report(rig.dev, args)->results.size() == 40);
  CHECK_MESSAGE(
      started_when_second_timed >= 3,
      "compiles started while the batch's first point was timed: " << started_when_second_timed);
  CHECK(rig.dev.compiles() == 40);
}

TEST_CASE("TUNE_DISABLE: the first surviving config is used and nothing is timed") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(64));
  auto opts = quiet_options();
  opts.disable = true;
  auto tuner = Autotuner::make(sim_kernel(bm_space({16, 32, 64})), opts).value();
  auto args = rig.args(100);
  REQUIRE(tuner->run(rig.dev, args).ok());
  CHECK(tuner->best(rig.dev, args)->get_int("BM") == 16);
  CHECK(rig.dev.timed_reps() == 0);
  CHECK(rig.dev.compiles() == 1);
  CHECK(tuner->last_report(rig.dev, args)->source == ResultSource::disabled);
}

TEST_CASE("tuning budget: stops timing new configs, takes the best so far, marks partial") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(1));
  // BM=1 compiles at once; the others take far longer than the budget. The call must not
  // wait for them: it returns with BM=1 while they still compile.
  std::atomic<int> slow_done{0};
  rig.dev.compile_delay_if([](const Config& c) { return c.get_int("BM") != 1; }, 600);
  rig.dev.set_kernel_body([](const Config&, ArgList, SimDevice&) {});
  auto opts = quiet_options();
  opts.tuning_budget_ms = 150;
  auto store = std::make_shared<MemoryStore>();
  opts.store = store;
  auto tuner = Autotuner::make(sim_kernel(bm_space({1, 2, 3, 4})), opts).value();
  auto args = rig.args(100);
  REQUIRE(tuner->run(rig.dev, args).ok());
  slow_done = static_cast<int>(rig.dev.compiles());
  auto report = tuner->last_report(rig.dev, args).value();
  CHECK(report.partial);
  CHECK(report.winner.get_int("BM") == 1);
  CHECK(slow_done < 4);           // returned before the slow compiles finished
  CHECK(store->saved_rows == 1);  // untimed configs are not stored: a later run times them
  CHECK(report.to_string().find("partial") != std::string::npos);
}

TEST_CASE("tuning budget: nothing timed by the deadline is a clear error; a later call goes on") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(2));
  rig.dev.compile_delay_if([](const Config&) { return true; }, 300);
  auto opts = quiet_options();
  opts.tuning_budget_ms = 20;
  auto tuner = Autotuner::make(sim_kernel(bm_space({1, 2, 3})), opts).value();
  auto args = rig.args(100);
  Status st = tuner->run(rig.dev, args);
  REQUIRE(st.code() == StatusCode::timeout);
  CHECK(st.message().find("tuning_budget_ms (20.0 ms)") != std::string::npos);
  CHECK(st.message().find("before any configuration was timed") != std::string::npos);
  CHECK_FALSE(tuner->best(rig.dev, args).has_value());
  // The compiles finish in the background; a later call times what they built.
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  const auto compiles = rig.dev.compiles();
  REQUIRE(tuner->run(rig.dev, args).ok());
  CHECK(rig.dev.compiles() == compiles);  // nothing compiled again
  CHECK(tuner->best(rig.dev, args).has_value());
}

TEST_CASE("background mode: a new key borrows the nearest key's config, then switches") {
  SimRig rig;
  // Which config each launch on the calling thread used, for n = 3000.
  const auto caller = std::this_thread::get_id();
  std::mutex launched_mu;
  std::vector<std::int64_t> caller_launches;
  rig.dev.set_kernel_body([&](const Config& c, ArgList args, SimDevice&) {
    if (std::this_thread::get_id() != caller || args[1].as_int() != 3000) return;
    std::lock_guard lock(launched_mu);
    caller_launches.push_back(c.get_int("BM"));
  });
  rig.dev.set_cost_model([](const Config& c, ArgList args) {
    std::int64_t best = args[1].as_int() < 1000 ? 16 : 64;
    return 1000.0 + 10.0 * static_cast<double>(std::llabs(c.get_int("BM") - best));
  });
  auto opts = quiet_options();
  opts.mode = TuningMode::background;
  std::mutex mu;
  std::condition_variable cv;
  int tunings = 0;
  opts.listener = [&](const TuningReport&) {
    std::lock_guard lock(mu);
    ++tunings;
    cv.notify_all();
  };
  auto tuner = Autotuner::make(sim_kernel(bm_space({16, 32, 64})), opts).value();
  auto small = rig.args(100);
  REQUIRE(tuner->run(rig.dev, small).ok());
  auto large = rig.args(3000);
  REQUIRE(tuner->run(rig.dev, large).ok());  // launches n = 100's winner, tunes behind
  {
    std::lock_guard lock(launched_mu);
    REQUIRE(caller_launches.size() == 1);
    CHECK(caller_launches[0] == 16);
  }
  {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return tunings == 2; });  // the background tuning reported
  }
  // Published after the listener ran: poll the lock-free table until it appears.
  std::optional<Config> c;
  while (!(c = tuner->best(rig.dev, large))) std::this_thread::yield();
  CHECK(c->get_int("BM") == 64);
  REQUIRE(tuner->run(rig.dev, large).ok());
  std::lock_guard lock(launched_mu);
  CHECK(caller_launches.back() == 64);
}
