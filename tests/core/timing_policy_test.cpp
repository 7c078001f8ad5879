// The timing policy: BenchOptions' fields over the effort's preset (core/src/timing_policy.hpp),
// and validation that names the field where the user sets it.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "sim_fixture.hpp"
#include "timing_policy.hpp"

using namespace tune;
using namespace tune::testing;

namespace {

bool same(const TimingPolicy& a, const TimingPolicy& b) {
  return a.warmup_ms == b.warmup_ms && a.rep_ms == b.rep_ms &&
         a.warmup_next_ms == b.warmup_next_ms && a.estimate_runs == b.estimate_runs &&
         a.min_reps == b.min_reps && a.max_reps == b.max_reps && a.cache == b.cache &&
         a.rotate_max_bytes == b.rotate_max_bytes && a.timeout_ms == b.timeout_ms &&
         a.warmup_count == b.warmup_count && a.rep_count == b.rep_count &&
         a.settle_window_ms == b.settle_window_ms && a.settle_max_ms == b.settle_max_ms &&
         a.settle_batch_ms == b.settle_batch_ms && a.settle_tolerance == b.settle_tolerance &&
         a.racing == b.racing && a.race_batch == b.race_batch &&
         a.race_min_samples == b.race_min_samples && a.race_confidence == b.race_confidence &&
         a.race_tolerance == b.race_tolerance && a.tie_tolerance == b.tie_tolerance &&
         a.showdown_rounds == b.showdown_rounds && a.showdown_finalists == b.showdown_finalists &&
         a.showdown_margin == b.showdown_margin && a.showdown_retries == b.showdown_retries &&
         a.showdown_screen_rounds == b.showdown_screen_rounds &&
         a.showdown_screen_margin == b.showdown_screen_margin &&
         a.showdown_sustain_ms == b.showdown_sustain_ms &&
         a.showdown_sustain_margin == b.showdown_sustain_margin &&
         a.showdown_sustain_pairs == b.showdown_sustain_pairs &&
         a.showdown_sustain_contenders == b.showdown_sustain_contenders &&
         a.showdown_seed == b.showdown_seed;
}

}  // namespace

TEST_CASE("timing policy: standard with nothing set is the documented defaults") {
  const TimingPolicy p = resolve_timing(BenchOptions{}, Effort::standard);
  CHECK(same(p, TimingPolicy{}));
  CHECK(p.warmup_ms == 25.0);
  CHECK(p.rep_ms == 100.0);
  CHECK(p.racing);
  CHECK(p.race_tolerance == 0.01);
  CHECK(p.tie_tolerance == 0.01);
  CHECK(p.cache == TimingCache::flush);
  CHECK(p.showdown_rounds == 6);
  CHECK(p.showdown_sustain_ms < 0);  // the device's
  // AutotunerOptions' default effort is standard: a default tuner times as before.
  CHECK(AutotunerOptions{}.effort == Effort::standard);
}

TEST_CASE("timing policy: quick spends less, thorough more, on the same rules") {
  const TimingPolicy standard = timing_preset(Effort::standard);
  const TimingPolicy quick = timing_preset(Effort::quick);
  const TimingPolicy thorough = timing_preset(Effort::thorough);
  CHECK(quick.warmup_ms < standard.warmup_ms);
  CHECK(quick.rep_ms < standard.rep_ms);
  CHECK(quick.showdown_rounds == 0);                       // no showdown, screen or turns
  CHECK(quick.settle_max_ms == standard.settle_max_ms);    // clocks still settle
  CHECK(quick.race_tolerance == standard.race_tolerance);  // the same pick rule
  CHECK(thorough.warmup_ms > standard.warmup_ms);
  CHECK(thorough.rep_ms > standard.rep_ms);
  CHECK(thorough.max_reps > standard.max_reps);
  CHECK(thorough.showdown_rounds == standard.showdown_rounds);
  CHECK(thorough.showdown_sustain_margin > standard.showdown_sustain_margin);
  CHECK(thorough.showdown_sustain_pairs > standard.showdown_sustain_pairs);
  CHECK(thorough.showdown_sustain_contenders > standard.showdown_sustain_contenders);
  for (Effort e : {Effort::quick, Effort::standard, Effort::thorough}) {
    CAPTURE(to_string(e));
    CHECK(validate(BenchOptions{}, e).ok());
  }
}

TEST_CASE("timing policy: a field set wins over every effort's value") {
  BenchOptions o;
  o.warmup_ms = 7;
  o.rep_ms = 30;
  o.racing = false;
  o.cache = TimingCache::none;
  o.timeout_ms = 50;
  o.expert.showdown_rounds = 2;
  o.expert.max_reps = 77;
  for (Effort e : {Effort::quick, Effort::standard, Effort::thorough}) {
    CAPTURE(to_string(e));
    const TimingPolicy p = resolve_timing(o, e);
    CHECK(p.warmup_ms == 7);
    CHECK(p.rep_ms == 30);
    CHECK_FALSE(p.racing);
    CHECK(p.cache == TimingCache::none);
    CHECK(p.timeout_ms == 50);
    CHECK(p.showdown_rounds == 2);
    CHECK(p.max_reps == 77);
    CHECK(p.settle_max_ms == timing_preset(e).settle_max_ms);  // unset: the effort's
  }
}

TEST_CASE("timing policy: tolerance sets racing's and the winner rule's, unless either is set") {
  BenchOptions o;
  o.tolerance = 0.03;
  TimingPolicy p = resolve_timing(o, Effort::standard);
  CHECK(p.race_tolerance == 0.03);
  CHECK(p.tie_tolerance == 0.03);
  o.expert.tie_tolerance = 0;
  p = resolve_timing(o, Effort::standard);
  CHECK(p.race_tolerance == 0.03);
  CHECK(p.tie_tolerance == 0);
}

TEST_CASE("timing policy: validation names the field where it is set") {
  BenchOptions o;
  o.warmup_ms = -1;
  CHECK(validate(o).message().rfind("BenchOptions::warmup_ms ", 0) == 0);
  o = {};
  o.tolerance = 1.5;
  CHECK(validate(o).message().rfind("BenchOptions::tolerance ", 0) == 0);
  o.expert.race_tolerance = 0.01;  // racing's is now set: the winner rule's still comes from it
  CHECK(validate(o).message().rfind("BenchOptions::tolerance ", 0) == 0);
  o = {};
  o.expert.race_batch = 0;
  CHECK(validate(o).message().rfind("BenchOptions::expert.race_batch ", 0) == 0);
  o = {};
  o.expert.min_reps = 2000;  // above every max_reps but thorough's
  CHECK(validate(o, Effort::standard).message().rfind("BenchOptions::expert.min_reps ", 0) == 0);
  CHECK(validate(o, Effort::thorough).ok());
  o = {};
  o.rep_count = -1;
  CHECK(validate(o).message().rfind("BenchOptions::rep_count ", 0) == 0);
  // Autotuner::make checks them for its effort, in the context of the options.
  AutotunerOptions ao = quiet_options();
  ao.bench.expert.showdown_finalists = 1;
  auto made = Autotuner::make(sim_kernel(bm_space({16, 32})), ao);
  REQUIRE_FALSE(made.ok());
  CHECK(made.status().message().find("BenchOptions::expert.showdown_finalists") !=
        std::string::npos);
}

TEST_CASE("timing policy: an Autotuner times with its effort's budgets") {
  // On the simulated device a launch costs what the model says: quick's rep_ms buys fewer
  // repetitions than standard's. Budgets unset, so the effort decides.
  auto reps = [](Effort e) {
    SimRig rig;
    rig.dev.set_cost_model([](const Config&, ArgList) { return 1e5; });  // 0.1 ms a launch
    AutotunerOptions o = quiet_options();
    o.bench = {};
    o.bench.expert.settle_max_ms = 0;
    o.effort = e;
    auto tuner = make_tuner(sim_kernel(bm_space({16})), o);
    auto results = tuner->measure(rig.dev, rig.args(1000), std::vector<Config>{Config{{"BM", 16}}});
    REQUIRE(results.ok());
    return results->front().stats.count;
  };
  CHECK(reps(Effort::quick) == 200);      // rep_ms 20 at 0.1 ms
  CHECK(reps(Effort::standard) == 1000);  // rep_ms 100 at 0.1 ms
}
