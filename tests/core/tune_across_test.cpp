// tune_across (several devices of one process share one key's candidates) and
// pick_shared_winner (the finalist rule it shares with tune::mpi), on simulated devices.
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <stdexcept>

#include "sim_fixture.hpp"

using namespace tune;
using namespace tune::testing;

namespace {

std::set<std::string> timed_configs(const SimDevice& dev) {
  std::set<std::string> out;
  for (const auto& e : events_with(dev.events(), "time "))
    out.insert(e.substr(5, e.find(" reps=") - 5));
  return out;
}

ConfigResult measured(int bm, double ns) {
  ConfigResult r;
  r.config = Config().set("BM", bm);
  r.stats.count = 5;
  r.stats.min = r.stats.p20 = r.stats.median = r.stats.p80 = r.stats.max = r.stats.mean = ns;
  return r;
}

}  // namespace

TEST_CASE("pick_shared_winner: finalists within the margin are timed again; ties by text") {
  std::vector<ConfigResult> rs = {measured(64, 1000), measured(16, 1000), measured(32, 1020),
                                  measured(8, 1500)};
  rs.push_back(measured(128, 0));
  rs.back().status = Status(StatusCode::compile_error, "no");
  rs.back().stats.median = std::numeric_limits<double>::infinity();
  std::vector<std::string> asked;
  auto won = pick_shared_winner(rs, ShareOptions{}, [&](std::span<const Config> fin) {
    std::vector<ConfigResult> out;
    for (const Config& c : fin) {
      asked.push_back(c.to_string());
      out.push_back(measured(static_cast<int>(c.get_int("BM")), 900));  // all tie again
    }
    return Result<std::vector<ConfigResult>>(out);
  });
  REQUIRE_MESSAGE(won.ok(), won.status().to_string());
  // Fastest first, a tie in text order; BM=8 is 50% slower: not a finalist.
  CHECK(asked == std::vector<std::string>{"BM=16", "BM=64", "BM=32"});
  CHECK(won->config.to_string() == "BM=16");
  REQUIRE(won->finalists.size() == 3);
  CHECK(won->finalists[0].to_string() == "BM=16");
  REQUIRE(won->results.size() == 5);
  CHECK(won->results[0].stats.median == 900);  // the finalists' second timing is kept
  CHECK(won->results[3].stats.median == 1500);

  SUBCASE("at most max_finalists; one finalist is not timed again") {
    ShareOptions one;
    one.max_finalists = 1;
    bool called = false;
    auto w = pick_shared_winner(rs, one, [&](std::span<const Config>) {
      called = true;
      return Result<std::vector<ConfigResult>>(std::vector<ConfigResult>{});
    });
    REQUIRE(w.ok());
    CHECK_FALSE(called);
    CHECK(w->config.to_string() == "BM=16");
  }
  SUBCASE("nothing usable: all_failed listing each reason") {
    std::vector<ConfigResult> bad = {rs.back()};
    auto w = pick_shared_winner(bad, ShareOptions{}, nullptr);
    CHECK(w.status().code() == StatusCode::all_failed);
    CHECK(w.status().message().find("{BM=128}") != std::string::npos);
  }
  SUBCASE("options that make no sense are refused") {
    ShareOptions o;
    o.max_finalists = 0;
    CHECK(pick_shared_winner(rs, o, nullptr).status().code() == StatusCode::invalid_argument);
    ShareOptions t;
    t.tie_tolerance = -0.5;
    CHECK(pick_shared_winner(rs, t, nullptr).status().code() == StatusCode::invalid_argument);
  }
  SUBCASE("second timings within tie_tolerance decide by text, as the winner rule does") {
    auto w = pick_shared_winner(rs, ShareOptions{}, [&](std::span<const Config> fin) {
      std::vector<ConfigResult> out;  // BM=64 0.5% faster than BM=16: a tie under 1%
      for (const Config& c : fin) {
        const int bm = static_cast<int>(c.get_int("BM"));
        out.push_back(measured(bm, bm == 64 ? 995.0 : bm == 16 ? 1000.0 : 1100.0));
      }
      return Result<std::vector<ConfigResult>>(out);
    });
    REQUIRE(w.ok());
    CHECK(w->config.to_string() == "BM=16");
    ShareOptions strict;
    strict.tie_tolerance = 0;
    auto s = pick_shared_winner(rs, strict, [&](std::span<const Config> fin) {
      std::vector<ConfigResult> out;
      for (const Config& c : fin) {
        const int bm = static_cast<int>(c.get_int("BM"));
        out.push_back(measured(bm, bm == 64 ? 995.0 : bm == 16 ? 1000.0 : 1100.0));
      }
      return Result<std::vector<ConfigResult>>(out);
    });
    REQUIRE(s.ok());
    CHECK(s->config.to_string() == "BM=64");
  }
}

TEST_CASE("tune_across: each device times its share once, the winner is adopted on all") {
  SimRig a, b, c;
  for (SimRig* r : {&a, &b, &c}) r->dev.set_cost_model(bm_model(64));
  auto tuner = make_tuner(sim_kernel(bm_space({8, 16, 32, 48, 64, 96, 128, 256})));
  auto aa = a.args(1000), ba = b.args(1000), ca = c.args(1000);
  const std::vector<DeviceCall> calls = {{&a.dev, aa}, {&b.dev, ba}, {&c.dev, ca}};
  auto won = tune_across(*tuner, calls);
  REQUIRE_MESSAGE(won.ok(), won.status().to_string());
  CHECK(won->config.to_string() == "BM=64");
  CHECK(won->finalists.size() == 1);
  // Round-robin: candidate j on device j % 3, each exactly once.
  CHECK(timed_configs(a.dev) == std::set<std::string>{"BM=8", "BM=48", "BM=128"});
  CHECK(timed_configs(b.dev) == std::set<std::string>{"BM=16", "BM=64", "BM=256"});
  CHECK(timed_configs(c.dev) == std::set<std::string>{"BM=32", "BM=96"});
  for (SimRig* r : {&a, &b, &c}) {
    auto args = r->args(1000);
    CHECK(best_of(*tuner, r->dev, args) == "BM=64");
    CHECK(tuner->last_report(r->dev, args)->source == ResultSource::shared);
    r->dev.clear_events();
    REQUIRE(tuner->run(r->dev, args).ok());
    CHECK(r->dev.events().back() == "launch BM=64");
    CHECK(timed_configs(r->dev).empty());
  }
}

TEST_CASE("tune_across: near-ties are timed again on the first device") {
  SimRig a, b;
  const auto model = [](const Config& cfg, ArgList) {
    return cfg.get_int("BM") == 32 || cfg.get_int("BM") == 16 ? 1000.0 : 3000.0;
  };
  a.dev.set_cost_model(model);
  b.dev.set_cost_model(model);
  auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64, 128})));
  auto aa = a.args(7), ba = b.args(7);
  const std::vector<DeviceCall> calls = {{&a.dev, aa}, {&b.dev, ba}};
  auto won = tune_across(*tuner, calls);
  REQUIRE(won.ok());
  CHECK(won->config.to_string() == "BM=16");
  REQUIRE(won->finalists.size() == 2);
  // BM=32 was b's in the first round; a timed it again as a finalist.
  CHECK(timed_configs(a.dev).count("BM=32") == 1);
  CHECK(timed_configs(b.dev).count("BM=16") == 0);
}

TEST_CASE("tune_across: refusals and errors name the call") {
  SimRig a, b;
  auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64})));
  auto aa = a.args(100);

  SUBCASE("another key") {
    auto ba = b.args(200);
    const std::vector<DeviceCall> calls = {{&a.dev, aa}, {&b.dev, ba}};
    auto r = tune_across(*tuner, calls);
    CHECK(r.status().code() == StatusCode::invalid_argument);
    CHECK(r.status().message().find("call 1") != std::string::npos);
  }
  SUBCASE("another device model") {
    DeviceInfo other = SimDevice::default_info();
    other.name = "another sim";
    SimRig c(other);
    auto cargs = c.args(100);
    const std::vector<DeviceCall> calls = {{&a.dev, aa}, {&c.dev, cargs}};
    auto r = tune_across(*tuner, calls);
    CHECK(r.status().code() == StatusCode::invalid_argument);
    CHECK(r.status().message().find("fingerprint") != std::string::npos);
  }
  SUBCASE("a device whose measuring fails: its error, nothing adopted") {
    KernelDef def = sim_kernel(bm_space({16, 32, 64}));
    const Device* bad = &b.dev;
    def.pre_hook = [bad](Device& d, ArgList, const Config&) -> Status {
      if (&d == bad) throw std::runtime_error("pre_hook fails on the second device");
      return {};
    };
    auto t = make_tuner(def);
    auto ba = b.args(100);
    const std::vector<DeviceCall> calls = {{&a.dev, aa}, {&b.dev, ba}};
    auto r = tune_across(*t, calls);
    CHECK(r.status().code() == StatusCode::callback_failed);
    CHECK(r.status().message().find("call 1") != std::string::npos);
    CHECK(r.status().message().find("pre_hook fails on the second device") != std::string::npos);
    CHECK_FALSE(t->best(a.dev, aa).has_value());
  }
}
