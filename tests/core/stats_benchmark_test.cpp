// Sample statistics and time_kernel on the simulated device.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "race.hpp"
#include "sim_fixture.hpp"
#include "stats.hpp"
#include "tune/benchmark.hpp"

using namespace tune;
using namespace tune::testing;

TEST_CASE("quantile: linear interpolation over unsorted samples") {
  std::vector<double> v = {5, 1, 4, 2, 3};
  CHECK(quantile(v, 0.0) == 1.0);
  CHECK(quantile(v, 1.0) == 5.0);
  CHECK(quantile(v, 0.5) == 3.0);
  CHECK(quantile(v, 0.25) == 2.0);
  CHECK(quantile(v, 0.1) == doctest::Approx(1.4));
  std::vector<double> two = {10, 20};
  CHECK(quantile(two, 0.5) == 15.0);
  CHECK(quantile(std::vector<double>{7}, 0.3) == 7.0);
  CHECK(std::isnan(quantile(std::vector<double>{}, 0.5)));
}

TEST_CASE("summarize: count, min, quantiles, max, mean, spread") {
  std::vector<double> v = {10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
  SampleStats s = summarize(v);
  CHECK(s.count == 11);
  CHECK(s.min == 10);
  CHECK(s.max == 20);
  CHECK(s.median == 15);
  CHECK(s.p20 == doctest::Approx(12));
  CHECK(s.p80 == doctest::Approx(18));
  CHECK(s.mean == doctest::Approx(15));
  CHECK(s.spread() == doctest::Approx(6.0 / 15.0));
  CHECK(s.to_string().find("n=11") != std::string::npos);
  SampleStats none = summarize(std::vector<double>{});
  CHECK(none.count == 0);
  CHECK(none.spread() == 0.0);
}

TEST_CASE("clearly_faster: only when the noise bands do not overlap") {
  SampleStats fast = summarize(std::vector<double>{10, 10.5, 11, 11.5, 12});
  SampleStats slow = summarize(std::vector<double>{20, 21, 22, 23, 24});
  SampleStats overlapping = summarize(std::vector<double>{11, 11.5, 12, 12.5, 13});
  CHECK(clearly_faster(fast, slow));
  CHECK_FALSE(clearly_faster(slow, fast));
  CHECK_FALSE(clearly_faster(fast, overlapping));
  CHECK_FALSE(clearly_faster(overlapping, fast));
  CHECK_FALSE(clearly_faster(SampleStats{}, slow));  // no samples: nothing is clear
}

TEST_CASE("normal_quantile: the tables' values, symmetry, the ends") {
  // Values from the standard tables (and R's qnorm), to 1e-9.
  CHECK(normal_quantile(0.5) == doctest::Approx(0.0).epsilon(1e-12));
  CHECK(normal_quantile(0.95) == doctest::Approx(1.6448536269514722).epsilon(1e-9).scale(0));
  CHECK(normal_quantile(0.975) == doctest::Approx(1.959963984540054).epsilon(1e-9).scale(0));
  CHECK(normal_quantile(0.999) == doctest::Approx(3.090232306167813).epsilon(1e-9).scale(0));
  CHECK(normal_quantile(1e-10) == doctest::Approx(-6.361340902404056).epsilon(1e-9).scale(0));
  // Far in the upper tail too (no cancellation near 1): R's qnorm(1 - 1e-7).
  CHECK(normal_quantile(1 - 1e-7) == doctest::Approx(5.199337582192816).epsilon(1e-9).scale(0));
  // Deep in both tails, at a p whose complement is exact (2^-40), to 1e-13: the upper tail is
  // the lower one mirrored (refined on the upper side directly, P(Z <= x) - p cancels between
  // two numbers near 1 and leaves an error near 1e-6 here). Value from mpmath at 40 digits.
  const double tail = std::ldexp(1.0, -40);
  CHECK(normal_quantile(tail) == doctest::Approx(-7.0477002566644087).epsilon(1e-13).scale(0));
  CHECK(normal_quantile(1 - tail) == doctest::Approx(7.0477002566644087).epsilon(1e-13).scale(0));
  for (double p : {0.001, 0.01, 0.2, 0.4})  // both tails and the middle region
    CHECK(normal_quantile(p) == doctest::Approx(-normal_quantile(1 - p)).epsilon(1e-9).scale(0));
  CHECK(std::isinf(normal_quantile(0.0)));
  CHECK(normal_quantile(0.0) < 0);
  CHECK(std::isinf(normal_quantile(1.0)));
  CHECK(std::isnan(normal_quantile(-0.1)));
  CHECK(std::isnan(normal_quantile(1.5)));
  CHECK(std::isnan(normal_quantile(NAN)));
}

TEST_CASE("student_t_quantile: the tables' values, the normal's in the limit") {
  struct Row {
    double p;
    std::size_t dof;
    double t;  // from the tables (R's qt)
  };
  const Row rows[] = {{0.95, 1, 6.313752},  {0.95, 2, 2.919986},   {0.95, 3, 2.353363},
                      {0.95, 4, 2.131847},  {0.95, 5, 2.015048},   {0.95, 10, 1.812461},
                      {0.95, 30, 1.697261}, {0.975, 1, 12.706205}, {0.975, 2, 4.302653},
                      {0.975, 3, 3.182446}, {0.975, 5, 2.570582},  {0.975, 10, 2.228139},
                      {0.99, 3, 4.540703},  {0.99, 5, 3.364930},   {0.99, 20, 2.527977}};
  for (const Row& r : rows) {
    const double t = student_t_quantile(r.p, r.dof);
    // Relative error (scale 0: no absolute slack). The expansion's weak corner is few degrees
    // of freedom far in the tail: 0.12% low at p 0.975 and 3, 0.4% at 0.99 and 3.
    const double within = r.dof < 5 && r.p > 0.95 ? (r.p > 0.975 ? 5e-3 : 1.5e-3) : 1e-3;
    CHECK_MESSAGE(t == doctest::Approx(r.t).epsilon(within).scale(0), "p ", r.p, " dof ", r.dof);
    CHECK(student_t_quantile(1 - r.p, r.dof) == doctest::Approx(-t).epsilon(1e-9).scale(0));
  }
  CHECK(student_t_quantile(0.5, 4) == doctest::Approx(0.0));
  CHECK(student_t_quantile(0.95, 100000) ==
        doctest::Approx(normal_quantile(0.95)).epsilon(1e-4).scale(0));
  CHECK(std::isnan(student_t_quantile(0.95, 0)));
  CHECK(std::isnan(student_t_quantile(0.0, 3)));
  CHECK(std::isnan(student_t_quantile(1.0, 3)));
  CHECK(std::isnan(student_t_quantile(NAN, 3)));
}

namespace {

// A compiled kernel on `dev` that the model times at `ns`.
std::unique_ptr<CompiledKernel> constant_kernel(SimDevice& dev, double ns) {
  dev.set_cost_model([ns](const Config&, ArgList) { return ns; });
  return dev.compile(sim_source(), Config{{"BM", std::int64_t{1}}}).value();
}

}  // namespace

TEST_CASE("time_kernel: repetitions follow the budgets") {
  SimRig rig;
  auto k = constant_kernel(rig.dev, 10000.0);  // 0.01 ms per launch
  auto args = rig.args(1024);
  BenchOptions opts;
  opts.warmup_ms = 0.05;  // 5 warmup launches
  opts.rep_ms = 0.1;      // 10 timed repetitions
  opts.expert.estimate_runs = 3;
  opts.expert.min_reps = 1;
  opts.expert.max_reps = 1000;
  auto stats = time_kernel(rig.dev, *k, LaunchDims{}, args, opts);
  REQUIRE(stats.ok());
  // rep_ms / estimate = 10; allow one either side for rounding of the estimate.
  CHECK(stats->count >= 9);
  CHECK(stats->count <= 11);
  CHECK(stats->median == 10000.0);
  CHECK(stats->min == 10000.0);
  CHECK(stats->max == 10000.0);
  // The estimate plus the timed repetitions went through time(); warmup may be launches.
  CHECK(rig.dev.timed_reps() >= 13);
  CHECK(rig.dev.executions() >= 3 + 5 + 10);
}

TEST_CASE("time_kernel: min_reps and max_reps clamp the repetition count") {
  SimRig rig;
  auto args = rig.args(1024);
  BenchOptions opts = tiny_bench();
  opts.expert.min_reps = 4;
  opts.expert.max_reps = 7;
  SUBCASE("a slow kernel gets min_reps") {
    auto k = constant_kernel(rig.dev, 1e6);  // 1 ms, rep_ms 0.05
    auto stats = time_kernel(rig.dev, *k, LaunchDims{}, args, opts);
    REQUIRE(stats.ok());
    CHECK(stats->count == 4);
  }
  SUBCASE("a fast kernel is capped at max_reps") {
    auto k = constant_kernel(rig.dev, 10.0);  // 10 ns, rep_ms 0.05
    auto stats = time_kernel(rig.dev, *k, LaunchDims{}, args, opts);
    REQUIRE(stats.ok());
    CHECK(stats->count == 7);
  }
}

TEST_CASE("time_kernel: a host step runs before every launch, flush follows options") {
  SimRig rig;
  auto k = constant_kernel(rig.dev, 2000.0);
  auto args = rig.args(1024);
  int calls = 0;
  BenchOptions opts = tiny_bench();
  opts.cache = TimingCache::none;
  auto stats = time_kernel(rig.dev, *k, LaunchDims{}, args, opts, [&] {
    ++calls;
    rig.dev.record("before");
    return Status();
  });
  REQUIRE(stats.ok());
  CHECK(calls > 0);
  CHECK(static_cast<std::uint64_t>(calls) == rig.dev.executions());
  CHECK(rig.dev.flushes() == 0);
  // Every execution is preceded by its own host step: it runs in the core, so a
  // timed one is a time() call of one rep made right after it.
  auto ev = rig.dev.events();
  for (std::size_t i = 0; i < ev.size(); ++i) {
    if (ev[i].rfind("time ", 0) == 0) CHECK(ev[i].find(" reps=1") != std::string::npos);
    if (ev[i].rfind("rep ", 0) == 0 || ev[i].rfind("launch ", 0) == 0) {
      std::size_t j = i;
      while (j > 0 && ev[j - 1].rfind("time ", 0) == 0) --j;
      REQUIRE(j > 0);
      CHECK(ev[j - 1] == "before");
    }
  }

  SimRig flushing;
  auto k2 = constant_kernel(flushing.dev, 2000.0);
  auto fargs = flushing.args(1024);
  BenchOptions fopts = tiny_bench();
  fopts.cache = TimingCache::flush;
  REQUIRE(time_kernel(flushing.dev, *k2, LaunchDims{}, fargs, fopts).ok());
  CHECK(flushing.dev.flushes() == flushing.dev.timed_reps());
}

TEST_CASE("time_kernel: failures propagate with their code") {
  SimRig rig;
  auto args = rig.args(1024);
  SUBCASE("launch failure") {
    rig.dev.fail_launch_if([](const Config&) { return true; });
    auto k = constant_kernel(rig.dev, 1000.0);
    CHECK(time_kernel(rig.dev, *k, LaunchDims{}, args, tiny_bench()).status().code() ==
          StatusCode::launch_failed);
  }
  SUBCASE("timeout") {
    auto k = constant_kernel(rig.dev, 5e6);  // 5 ms per launch
    BenchOptions opts = tiny_bench();
    opts.timeout_ms = 1.0;
    CHECK(time_kernel(rig.dev, *k, LaunchDims{}, args, opts).status().code() ==
          StatusCode::timeout);
  }
  SUBCASE("host step failure") {
    auto k = constant_kernel(rig.dev, 1000.0);
    auto st = time_kernel(rig.dev, *k, LaunchDims{}, args, tiny_bench(),
                          [] { return Status(StatusCode::io_error, "hook broke"); });
    CHECK(st.status().code() == StatusCode::io_error);
  }
}

TEST_CASE("time_kernel: seeded noise is reproducible and centred on the model") {
  auto run = [](std::uint64_t seed) {
    SimRig rig;
    rig.dev.set_noise(0.05, seed);
    auto k = constant_kernel(rig.dev, 10000.0);
    auto args = rig.args(1024);
    BenchOptions opts = tiny_bench();
    opts.rep_ms = 10.0;
    opts.expert.max_reps = 200;
    return time_kernel(rig.dev, *k, LaunchDims{}, args, opts).value();
  };
  SampleStats a = run(1), b = run(1), c = run(2);
  CHECK(a.count == 200);
  CHECK(a.median == b.median);
  CHECK(a.p20 == b.p20);
  CHECK(a.median != c.median);
  CHECK(a.min < a.max);
  CHECK(a.median == doctest::Approx(10000.0).epsilon(0.03).scale(0));
}

TEST_CASE("settle_clocks: runs until the time per launch stops falling") {
  SimRig rig;
  auto k = constant_kernel(rig.dev, 10000.0);  // 10 us at full clock
  auto args = rig.args(1024);
  TimingPolicy opts = resolve_timing(tiny_bench(), Effort::standard);
  opts.settle_batch_ms = 0.1;  // about 10 launches per batch
  opts.settle_max_ms = 50.0;
  opts.settle_window_ms = 0;  // settle (batch to batch), though the simulated device needs not

  SUBCASE("a clock already up costs two batches") {
    auto m = settle_clocks(rig.dev, *k, LaunchDims{}, args, opts, 10000.0);
    REQUIRE(m.ok());
    CHECK(*m == 10000.0);
    CHECK(rig.dev.time_calls() == 2);
  }
  SUBCASE("an idle clock (4x slower, rising smoothly over 2 ms of work) is brought up") {
    rig.dev.set_clock_ramp(4.0, 2e6);
    auto m = settle_clocks(rig.dev, *k, LaunchDims{}, args, opts, 40000.0);
    REQUIRE(m.ok());
    CHECK(*m < 10000.0 * 1.02);
    CHECK(rig.dev.time_calls() > 2);
  }
  SUBCASE("a governor that holds each level for 1 ms needs a window longer than that") {
    rig.dev.set_clock_ramp(4.0, 3e6, 3);  // 4x, 3x, 2x for 1 ms of work each, then 1x
    auto batchwise = settle_clocks(rig.dev, *k, LaunchDims{}, args, opts, 40000.0);
    REQUIRE(batchwise.ok());
    CHECK(*batchwise > 10000.0 * 1.5);  // fooled by the first level: nothing fell yet
    rig.dev.idle_clock();
    opts.settle_window_ms = 1.5;
    auto windowed = settle_clocks(rig.dev, *k, LaunchDims{}, args, opts, 40000.0);
    REQUIRE(windowed.ok());
    CHECK(*windowed == 10000.0);
  }
  SUBCASE("settle_max_ms bounds the device time spent") {
    rig.dev.set_clock_ramp(4.0, 1e9);  // a ramp far longer than the cap
    opts.settle_max_ms = 1.0;
    auto m = settle_clocks(rig.dev, *k, LaunchDims{}, args, opts, 40000.0);
    REQUIRE(m.ok());
    CHECK(rig.dev.timed_reps() * 40000.0 <= 1e6 + 40000.0 * 10);  // cap plus one batch
  }
  SUBCASE("off: no launches, the estimate comes back") {
    opts.settle_max_ms = 0;
    auto m = settle_clocks(rig.dev, *k, LaunchDims{}, args, opts, 12345.0);
    REQUIRE(m.ok());
    CHECK(*m == 12345.0);
    CHECK(rig.dev.time_calls() == 0);
  }
  SUBCASE("by default only a device that asks for it (DeviceInfo::clock_settle_ms) settles") {
    opts.settle_window_ms = -1;
    auto m = settle_clocks(rig.dev, *k, LaunchDims{}, args, opts, 12345.0);
    REQUIRE(m.ok());
    CHECK(rig.dev.time_calls() == 0);  // the simulated device's clock_settle_ms is 0

    DeviceInfo idling = SimDevice::default_info();
    idling.clock_settle_ms = 1.5;
    SimRig idle_rig(idling);
    idle_rig.dev.set_clock_ramp(4.0, 3e6, 3);
    auto k2 = constant_kernel(idle_rig.dev, 10000.0);
    auto up = settle_clocks(idle_rig.dev, *k2, LaunchDims{}, idle_rig.args(1024), opts, 40000.0);
    REQUIRE(up.ok());
    CHECK(*up == 10000.0);
  }
}

TEST_CASE("time_kernel: a device that idles its clock is timed at full clock") {
  SimRig rig;
  auto k = constant_kernel(rig.dev, 10000.0);
  auto args = rig.args(1024);
  BenchOptions opts = tiny_bench();
  opts.expert.settle_batch_ms = 0.1;
  opts.rep_ms = 1.0;
  opts.expert.max_reps = 100;
  opts.expert.settle_window_ms = 1.5;  // longer than the governor's 1 ms steps
  rig.dev.set_clock_ramp(3.0, 2e6, 2);
  auto settled = time_kernel(rig.dev, *k, LaunchDims{}, args, opts);
  REQUIRE(settled.ok());
  CHECK(settled->median == 10000.0);

  // The same without settling measures the idle clock: the test above is not vacuous.
  rig.dev.idle_clock();
  opts.expert.settle_max_ms = 0;
  auto unsettled = time_kernel(rig.dev, *k, LaunchDims{}, args, opts);
  REQUIRE(unsettled.ok());
  CHECK(unsettled->median > 10000.0 * 1.5);
}

TEST_CASE("Race: a contestant that joins after the clock settled keeps its own estimate") {
  SimRig rig;
  auto k = constant_kernel(rig.dev, 10000.0);
  auto args = rig.args(1024);
  TimingPolicy opts = resolve_timing(tiny_bench(), Effort::standard);
  opts.racing = false;  // each contestant takes its whole budget in one round
  opts.rep_ms = 0.5;    // 50 repetitions at 10 us
  opts.max_reps = 1000;
  opts.settle_window_ms = 0;
  opts.settle_batch_ms = 0.1;
  rig.dev.set_clock_ramp(3.0, 1e6);
  Race race(rig.dev, args, opts);
  RaceEntry early;
  early.kernel = k.get();
  early.estimate_ns = 30000.0;  // estimated at the idle clock
  race.add(early);
  REQUIRE(race.round().value());
  // Settling brought the clock up and scaled the early estimate down with it.
  CHECK(race.entries()[0].estimate_ns < 10000.0 * 1.05);
  CHECK(race.entries()[0].samples.size() >= 45);
  RaceEntry late;
  late.kernel = k.get();
  late.estimate_ns = 10000.0;  // warmed up at the settled clock: already right
  race.add(late);
  REQUIRE(race.run().ok());
  CHECK(race.entries()[1].estimate_ns == 10000.0);
  CHECK(race.entries()[1].samples.size() == 50);
}
