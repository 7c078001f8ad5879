// The same decision everywhere (winner_rule.hpp): near-ties within tie_tolerance go to the
// configuration first in canonical order, whatever the evaluation order, the space's order or
// the noise; a winner read back from stored rows is the one they were tuned to.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "sim_fixture.hpp"
#include "tune/benchmark.hpp"
#include "tuning/session_kit.hpp"
#include "tuning/winner_rule.hpp"

using namespace tune;
using namespace tune::testing;

namespace {

ConfigResult result(int bm, double median, Status st = {}) {
  ConfigResult r;
  r.config.set("BM", bm);
  r.stats.median = median;
  r.status = std::move(st);
  return r;
}

std::string winner_of(const std::vector<ConfigResult>& rs, double tol) {
  auto order = detail::rank_by_winner_rule(rs, tol);
  return order.empty() ? std::string("<none>") : rs[order.front()].config.to_string();
}

// Timings in ns by BM: 64 fastest, 128 and 32 within 1% of it, 16 at +1.5%, 8 failed.
SimDevice::CostModel near_tie_model() {
  return [](const Config& c, ArgList) {
    switch (c.get_int("BM")) {
      case 64:
        return 1000.0;
      case 128:
        return 1004.0;
      case 32:
        return 1008.0;
      case 16:
        return 1015.0;
      default:
        return 2000.0;
    }
  };
}

}  // namespace

TEST_CASE("winner rule: within the tolerance canonical order decides, beyond it the median") {
  // BM=128 sorts first as text ("BM=128" < "BM=32" < "BM=64").
  std::vector<ConfigResult> rs = {result(64, 1000), result(32, 1008), result(128, 1004),
                                  result(16, 1015),
                                  result(8, 1, Status(StatusCode::launch_failed, "x"))};
  CHECK(winner_of(rs, 0.01) == "BM=128");
  // No tolerance: the strictly fastest.
  CHECK(winner_of(rs, 0.0) == "BM=64");
  CHECK(winner_of(rs, -1.0) == "BM=64");
  // Exact ties without tolerance: canonical order.
  std::vector<ConfigResult> exact = {result(64, 1000), result(32, 1000), result(128, 1001)};
  CHECK(winner_of(exact, 0.0) == "BM=32");
  // The full order: the tied group by text, then the rest by median; failures left out.
  auto order = detail::rank_by_winner_rule(rs, 0.01);
  std::vector<std::string> texts;
  for (auto i : order) texts.push_back(rs[i].config.to_string());
  CHECK(texts == std::vector<std::string>{"BM=128", "BM=32", "BM=64", "BM=16"});
  // Infinite medians are not candidates.
  std::vector<ConfigResult> none = {result(64, detail::kInf)};
  CHECK(winner_of(none, 0.01) == "<none>");
}

TEST_CASE("winner rule: every permutation of the results gives the same winner and order") {
  std::vector<ConfigResult> rs = {result(64, 1000), result(32, 1008), result(128, 1004),
                                  result(16, 1015), result(256, 1000)};
  std::vector<int> perm = {0, 1, 2, 3, 4};
  std::vector<std::string> first;
  int seen = 0;
  do {
    std::vector<ConfigResult> p;
    for (int i : perm) p.push_back(rs[static_cast<std::size_t>(i)]);
    std::vector<std::string> texts;
    for (auto i : detail::rank_by_winner_rule(p, 0.01)) texts.push_back(p[i].config.to_string());
    if (first.empty()) first = texts;
    CHECK(texts == first);
    ++seen;
  } while (std::next_permutation(perm.begin(), perm.end()));
  CHECK(seen == 120);
  CHECK(first.front() == "BM=128");
}

TEST_CASE("Autotuner: a near-tie goes to the canonical first, whatever the space order or noise") {
  for (const auto& values : {std::vector<int>{64, 32, 128, 16}, std::vector<int>{16, 128, 32, 64},
                             std::vector<int>{128, 64, 16, 32}}) {
    for (std::uint64_t seed : {1u, 2u, 3u}) {
      SimRig rig;
      rig.dev.set_cost_model(near_tie_model());
      rig.dev.set_noise(0.0005, seed);  // far below the 1% tolerance
      ConfigSpace space;
      space.param("BM", std::vector<Value>(values.begin(), values.end()));
      auto tuner = make_tuner(sim_kernel(std::move(space)));
      auto best = tuner->tune(rig.dev, rig.args(1000));
      REQUIRE_MESSAGE(best.ok(), best.status().to_string());
      CAPTURE(seed);
      CHECK(best->to_string() == "BM=128");
    }
  }
}

TEST_CASE("Autotuner: tie_tolerance 0 makes the strictly fastest win") {
  SimRig rig;
  rig.dev.set_cost_model(near_tie_model());
  AutotunerOptions opts = quiet_options();
  opts.bench.expert.tie_tolerance = 0;
  auto tuner = make_tuner(sim_kernel(bm_space({128, 64, 32, 16})), opts);
  auto best = tuner->tune(rig.dev, rig.args(1000));
  REQUIRE_MESSAGE(best.ok(), best.status().to_string());
  CHECK(best->to_string() == "BM=64");
}

TEST_CASE("tie_tolerance is validated, naming the field") {
  for (double bad : {-0.01, 1.0, 2.0, static_cast<double>(NAN), static_cast<double>(INFINITY)}) {
    BenchOptions o;
    o.expert.tie_tolerance = bad;
    const Status st = validate(o);
    CAPTURE(bad);
    CHECK(st.code() == StatusCode::invalid_argument);
    CHECK(st.message().find("tie_tolerance") != std::string::npos);
  }
  BenchOptions zero;
  zero.expert.tie_tolerance = 0;
  CHECK(validate(zero).ok());
}

TEST_CASE("Autotuner: the stored rows give back the winner they were tuned to") {
  auto store = std::make_shared<MemoryStore>();
  AutotunerOptions opts = quiet_options();
  opts.store = store;
  SimRig rig;
  rig.dev.set_cost_model(near_tie_model());
  rig.dev.set_noise(0.0005, 7);
  std::string tuned;
  {
    auto first = make_tuner(sim_kernel(bm_space({64, 32, 128, 16})), opts);
    auto best = first->tune(rig.dev, rig.args(1000));
    REQUIRE_MESSAGE(best.ok(), best.status().to_string());
    tuned = best->to_string();
  }
  CHECK(tuned == "BM=128");
  // New tuners (new processes, in effect) with the space in other orders: nothing is timed
  // and the winner is the stored one.
  for (const auto& values :
       {std::vector<Value>{std::int64_t{16}, std::int64_t{32}, std::int64_t{64}, std::int64_t{128}},
        std::vector<Value>{std::int64_t{128}, std::int64_t{16}, std::int64_t{64},
                           std::int64_t{32}}}) {
    rig.dev.reset_counters();
    ConfigSpace space;
    space.param("BM", values);
    auto again = make_tuner(sim_kernel(std::move(space)), opts);
    auto best = again->tune(rig.dev, rig.args(1000));
    REQUIRE_MESSAGE(best.ok(), best.status().to_string());
    CHECK(best->to_string() == tuned);
    CHECK(rig.dev.time_calls() == 0);
    auto report = again->last_report(rig.dev, rig.args(1000));
    REQUIRE(report.has_value());
    CHECK(report->source == ResultSource::disk);
  }
}
