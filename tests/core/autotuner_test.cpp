// Autotuner on the simulated device: winners, the memory cache, keys, pruning, heuristics,
// warmup/release, reports. Every tuner here is memory-only (quiet_options: persistent = false).
#include <doctest/doctest.h>

#include <cmath>
#include <set>

#include "sim_fixture.hpp"

using namespace tune;
using namespace tune::testing;

namespace {

// The configs compiled so far, from "compile <config>" events (compile order is not fixed:
// variants may compile in parallel).
std::set<std::string> compiled(const SimDevice& dev) {
  std::set<std::string> out;
  for (const auto& e : events_with(dev.events(), "compile ")) out.insert(e.substr(8));
  return out;
}

}  // namespace

TEST_CASE("Autotuner: picks the config with the lowest modelled time") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(64));
  auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64, 128, 256})));
  auto args = rig.args(1000);
  REQUIRE(tuner->run(rig.dev, args).ok());

  auto best = tuner->best(rig.dev, args);
  REQUIRE(best.has_value());
  CHECK(best->to_string() == "BM=64");
  CHECK(rig.dev.compiles() == 5);
  CHECK(compiled(rig.dev) == std::set<std::string>{"BM=16", "BM=32", "BM=64", "BM=128", "BM=256"});
  // The call's own launch is the last thing that happened, with the winner.
  CHECK(rig.dev.events().back() == "launch BM=64");

  auto report = tuner->last_report(rig.dev, args);
  REQUIRE(report.has_value());
  CHECK(report->kernel == "sim_kernel");
  CHECK(report->source == ResultSource::tuned);
  CHECK(report->winner.to_string() == "BM=64");
  CHECK(report->device == rig.dev.info().fingerprint());
  CHECK(report->key.find("n=1000") != std::string::npos);
  CHECK(report->pruned == 0);
  CHECK(report->wall_ms >= 0);
  REQUIRE(report->results.size() == 5);
  for (const auto& r : report->results) {
    CAPTURE(r.config.to_string());
    CHECK(r.status.ok());
    CHECK_FALSE(r.from_store);
    CHECK(r.stats.count >= 3);
    // No noise: every repetition is the model's value exactly.
    CHECK(r.stats.median == rig.dev.modelled_ns(r.config, args));
    CHECK(r.stats.min == r.stats.max);
  }
  CHECK(to_string(ResultSource::tuned) == "tuned");
  CHECK(to_string(ResultSource::single) == "single");
}

TEST_CASE("Autotuner: a second call with the same key hits memory") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(32));
  auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64})));
  auto args = rig.args(512);
  REQUIRE(tuner->run(rig.dev, args).ok());
  const auto compiles = rig.dev.compiles();
  const auto time_calls = rig.dev.time_calls();
  const auto launches = rig.dev.launches();
  rig.dev.clear_events();

  for (int i = 0; i < 10; ++i) REQUIRE(tuner->run(rig.dev, args).ok());
  CHECK(rig.dev.compiles() == compiles);
  CHECK(rig.dev.time_calls() == time_calls);
  CHECK(rig.dev.launches() == launches + 10);
  CHECK(rig.dev.events() == std::vector<std::string>(10, "launch BM=32"));

  // tune() on a known key returns the remembered config without any device work.
  auto cfg = tuner->tune(rig.dev, args);
  REQUIRE(cfg.ok());
  CHECK(cfg->to_string() == "BM=32");
  CHECK(rig.dev.launches() == launches + 10);
}

TEST_CASE("Autotuner: a different key retunes") {
  SimRig rig;
  // The best BM follows n: BM == n / 16.
  rig.dev.set_cost_model([](const Config& c, ArgList args) {
    return 1000.0 + std::fabs(static_cast<double>(c.get_int("BM") - args[1].as_int() / 16));
  });
  auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64, 128})));
  REQUIRE(tuner->run(rig.dev, rig.args(512)).ok());
  const auto time_calls = rig.dev.time_calls();
  REQUIRE(tuner->run(rig.dev, rig.args(2048)).ok());
  CHECK(rig.dev.time_calls() > time_calls);
  CHECK(rig.dev.compiles() <= 8);
  CHECK(best_of(*tuner, rig.dev, rig.args(512)) == "BM=32");
  CHECK(best_of(*tuner, rig.dev, rig.args(2048)) == "BM=128");
  CHECK_FALSE(tuner->best(rig.dev, rig.args(1024)).has_value());
  CHECK_FALSE(tuner->last_report(rig.dev, rig.args(1024)).has_value());
}

TEST_CASE("Autotuner: next_pow2 bucketing shares one tuning between nearby sizes") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(64));
  KernelDef def = sim_kernel(bm_space({32, 64, 128}));
  def.key = {KeySpec::pow2("n")};
  auto tuner = make_tuner(std::move(def));
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());  // bucket 1024
  const auto time_calls = rig.dev.time_calls();
  REQUIRE(tuner->run(rig.dev, rig.args(600)).ok());   // bucket 1024
  REQUIRE(tuner->run(rig.dev, rig.args(1024)).ok());  // bucket 1024
  CHECK(rig.dev.time_calls() == time_calls);
  REQUIRE(tuner->run(rig.dev, rig.args(1025)).ok());  // bucket 2048: retunes
  CHECK(rig.dev.time_calls() > time_calls);
  auto report = tuner->last_report(rig.dev, rig.args(700));
  REQUIRE(report.has_value());
  CHECK(report->key.find("n=1024") != std::string::npos);
}

TEST_CASE("Autotuner: custom bucketing") {
  SimRig rig;
  KernelDef def = sim_kernel(bm_space({32, 64}));
  def.key = {KeySpec::custom("n", [](std::int64_t n) { return n < 100 ? 0 : 1; })};
  auto tuner = make_tuner(std::move(def));
  REQUIRE(tuner->run(rig.dev, rig.args(5)).ok());
  const auto time_calls = rig.dev.time_calls();
  REQUIRE(tuner->run(rig.dev, rig.args(99)).ok());
  CHECK(rig.dev.time_calls() == time_calls);
  REQUIRE(tuner->run(rig.dev, rig.args(100)).ok());
  CHECK(rig.dev.time_calls() > time_calls);
}

TEST_CASE("Autotuner: each device tunes for itself") {
  DeviceInfo other = SimDevice::default_info();
  other.name = "a second simulated device";
  SimRig a, b(other);
  a.dev.set_cost_model(bm_model(32));
  b.dev.set_cost_model(bm_model(128));
  auto tuner = make_tuner(sim_kernel(bm_space({32, 64, 128})));
  REQUIRE(tuner->run(a.dev, a.args(1000)).ok());
  REQUIRE(tuner->run(b.dev, b.args(1000)).ok());
  CHECK(a.dev.compiles() == 3);
  CHECK(b.dev.compiles() == 3);
  CHECK(best_of(*tuner, a.dev, a.args(1000)) == "BM=32");
  CHECK(best_of(*tuner, b.dev, b.args(1000)) == "BM=128");
  auto report = tuner->last_report(b.dev, b.args(1000));
  REQUIRE(report.has_value());
  CHECK(report->device == other.fingerprint());
}

TEST_CASE("Autotuner: constraints over DeviceInfo prune before compiling") {
  ConfigSpace space;
  space.param("BM", {32, 64, 128, 256})
      .derive([](Config& c) { c.set(kBlockX, static_cast<int>(c.get_int("BM") * 2)); })
      .constrain("threads per block", [](const Config& c, const DeviceInfo& d) {
        return c.launch().block.product() <= d.max_threads_per_block;
      });
  DeviceInfo small = SimDevice::default_info();
  small.max_threads_per_block = 128;  // only BM=32, 64 fit
  SimRig rig(small);
  rig.dev.set_cost_model(bm_model(256));  // the fastest config does not fit this device
  SimRig big;                             // a device must outlive the tuner that compiled for it
  auto tuner = make_tuner(sim_kernel(space));
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  CHECK(compiled(rig.dev) == std::set<std::string>{"BM=32;block=64x1x1", "BM=64;block=128x1x1"});
  CHECK(best_of(*tuner, rig.dev, rig.args(1000)) == "BM=64;block=128x1x1");

  big.dev.set_cost_model(bm_model(256));
  REQUIRE(tuner->run(big.dev, big.args(1000)).ok());
  CHECK(big.dev.compiles() == 4);
  CHECK(best_of(*tuner, big.dev, big.args(1000)) == "BM=256;block=512x1x1");
}

TEST_CASE("Autotuner: constraints rejecting everything are a clear error") {
  ConfigSpace space;
  space.param("BM", {32, 64}).constrain("never", [](const Config&, const DeviceInfo&) {
    return false;
  });
  SimRig rig;
  auto tuner = make_tuner(sim_kernel(space));
  Status st = tuner->run(rig.dev, rig.args(1000));
  CHECK_FALSE(st.ok());
  CHECK(st.message().find("never") != std::string::npos);
  CHECK(rig.dev.compiles() == 0);
}

TEST_CASE("Autotuner: early_prune sees the candidates and the arguments") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(64));
  KernelDef def = sim_kernel(bm_space({16, 32, 64, 128}));
  std::size_t seen_candidates = 0;
  std::int64_t seen_n = 0;
  def.early_prune = [&](std::vector<Config> configs, ArgList args) {
    seen_candidates = configs.size();
    seen_n = args[1].as_int();
    std::vector<Config> kept;
    for (auto& c : configs)
      if (c.get_int("BM") != 64) kept.push_back(std::move(c));
    return kept;
  };
  auto tuner = make_tuner(std::move(def));
  REQUIRE(tuner->run(rig.dev, rig.args(777)).ok());
  CHECK(seen_candidates == 4);
  CHECK(seen_n == 777);
  CHECK(compiled(rig.dev).count("BM=64") == 0);
  CHECK(best_of(*tuner, rig.dev, rig.args(777)) == "BM=32");
  auto report = tuner->last_report(rig.dev, rig.args(777));
  REQUIRE(report.has_value());
  CHECK(report->pruned == 1);
  CHECK(report->results.size() == 3);
}

TEST_CASE("Autotuner: early_prune returning nothing is a clear error") {
  SimRig rig;
  KernelDef def = sim_kernel(bm_space({16, 32}));
  def.early_prune = [](std::vector<Config>, ArgList) { return std::vector<Config>{}; };
  auto tuner = make_tuner(std::move(def));
  Status st = tuner->run(rig.dev, rig.args(1000));
  CHECK(st.code() == StatusCode::invalid_argument);
  CHECK(st.message().find("early_prune") != std::string::npos);
  CHECK(st.message().find("sim_kernel") != std::string::npos);
  CHECK(rig.dev.compiles() == 0);
  CHECK(rig.dev.launches() == 0);
}

TEST_CASE("Autotuner: perf model keeps the top_k estimates") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(64));
  KernelDef def = sim_kernel(bm_space({8, 16, 32, 64, 128, 256}));
  // The estimate ranks 128 and 256 best (wrongly); only those two are compiled and timed.
  def.perf_model.estimate = [](const Config& c, ArgList, const DeviceInfo&) {
    return -static_cast<double>(c.get_int("BM"));
  };
  def.perf_model.top_k = 2;
  auto tuner = make_tuner(std::move(def));
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  CHECK(compiled(rig.dev) == std::set<std::string>{"BM=128", "BM=256"});
  CHECK(best_of(*tuner, rig.dev, rig.args(1000)) == "BM=128");
  auto report = tuner->last_report(rig.dev, rig.args(1000));
  REQUIRE(report.has_value());
  CHECK(report->pruned == 4);
}

TEST_CASE("Autotuner: perf model keeps the top_fraction, at least one") {
  SUBCASE("half of six") {
    SimRig rig;
    rig.dev.set_cost_model(bm_model(64));
    KernelDef def = sim_kernel(bm_space({8, 16, 32, 64, 128, 256}));
    def.perf_model.estimate = [](const Config& c, ArgList, const DeviceInfo&) {
      return static_cast<double>(c.get_int("BM"));  // ranks small BM best
    };
    def.perf_model.top_fraction = 0.5;
    auto tuner = make_tuner(std::move(def));
    REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
    CHECK(compiled(rig.dev) == std::set<std::string>{"BM=8", "BM=16", "BM=32"});
    CHECK(best_of(*tuner, rig.dev, rig.args(1000)) == "BM=32");
  }
  SUBCASE("a tiny fraction keeps one, which is not benchmarked") {
    SimRig rig;
    KernelDef def = sim_kernel(bm_space({8, 16, 32, 64, 128, 256}));
    def.perf_model.estimate = [](const Config& c, ArgList, const DeviceInfo&) {
      return std::fabs(static_cast<double>(c.get_int("BM") - 128));
    };
    def.perf_model.top_fraction = 0.01;
    auto tuner = make_tuner(std::move(def));
    REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
    CHECK(rig.dev.compiles() == 1);
    CHECK(rig.dev.time_calls() == 0);
    auto report = tuner->last_report(rig.dev, rig.args(1000));
    REQUIRE(report.has_value());
    CHECK(report->source == ResultSource::single);
    CHECK(report->winner.to_string() == "BM=128");
  }
}

TEST_CASE("Autotuner: a single remaining config is compiled and launched, not benchmarked") {
  SimRig rig;
  auto tuner = make_tuner(sim_kernel(ConfigSpace::list({Config{{"BM", std::int64_t{64}}}})));
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  CHECK(rig.dev.compiles() == 1);
  CHECK(rig.dev.time_calls() == 0);
  CHECK(rig.dev.timed_reps() == 0);
  CHECK(rig.dev.launches() == 1);
  auto report = tuner->last_report(rig.dev, rig.args(1000));
  REQUIRE(report.has_value());
  CHECK(report->source == ResultSource::single);
  CHECK(report->winner.to_string() == "BM=64");
}

TEST_CASE("Autotuner: heuristics join the key and are visible to compile") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(64));
  KernelDef def = sim_kernel(bm_space({32, 64}));
  // Every n shares one key bucket; only the heuristic value separates calls.
  def.key = {KeySpec::custom("n", [](std::int64_t) { return 0; })};
  int heuristic_calls = 0;
  def.heuristics.push_back({"EVEN", [&](ArgList args, const DeviceInfo& info) {
                              ++heuristic_calls;
                              CHECK(info.backend == "simulated");
                              return Value{args[1].as_int() % 2 == 0};
                            }});
  auto tuner = make_tuner(std::move(def));
  REQUIRE(tuner->run(rig.dev, rig.args(4)).ok());
  CHECK(compiled(rig.dev) == std::set<std::string>{"BM=32,EVEN=true", "BM=64,EVEN=true"});
  CHECK(best_of(*tuner, rig.dev, rig.args(4)) == "BM=64,EVEN=true");
  CHECK(heuristic_calls > 0);

  const auto time_calls = rig.dev.time_calls();
  REQUIRE(tuner->run(rig.dev, rig.args(6)).ok());  // same heuristic value: a hit
  CHECK(rig.dev.time_calls() == time_calls);
  CHECK(rig.dev.events().back() == "launch BM=64,EVEN=true");

  REQUIRE(tuner->run(rig.dev, rig.args(5)).ok());  // EVEN=false: a new key
  CHECK(rig.dev.time_calls() > time_calls);
  CHECK(compiled(rig.dev).count("BM=64,EVEN=false") == 1);
  CHECK(best_of(*tuner, rig.dev, rig.args(7)) == "BM=64,EVEN=false");
  auto report = tuner->last_report(rig.dev, rig.args(5));
  REQUIRE(report.has_value());
  CHECK(report->key.find("EVEN=false") != std::string::npos);
}

TEST_CASE("Autotuner: warmup compiles every accepted config once") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(64));
  auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64, 128})));
  REQUIRE(tuner->warmup(rig.dev).ok());
  CHECK(rig.dev.compiles() == 4);
  CHECK(rig.dev.time_calls() == 0);
  CHECK(rig.dev.launches() == 0);
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  CHECK(rig.dev.compiles() == 4);
  CHECK(rig.dev.time_calls() > 0);
  CHECK(best_of(*tuner, rig.dev, rig.args(1000)) == "BM=64");
}

TEST_CASE("Autotuner: warmup with every config failing reports all_failed") {
  SimRig rig;
  rig.dev.fail_compile_if([](const Config&) { return true; }, "nothing compiles");
  auto tuner = make_tuner(sim_kernel(bm_space({16, 32})));
  Status st = tuner->warmup(rig.dev);
  CHECK(st.code() == StatusCode::all_failed);
  CHECK(st.message().find("BM=16") != std::string::npos);
  CHECK(st.message().find("BM=32") != std::string::npos);
}

TEST_CASE("Autotuner: release forgets a device's results and variants") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(32));
  auto tuner = make_tuner(sim_kernel(bm_space({16, 32})));
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  CHECK(tuner->best(rig.dev, rig.args(1000)).has_value());
  tuner->release(rig.dev);
  CHECK_FALSE(tuner->best(rig.dev, rig.args(1000)).has_value());
  CHECK_FALSE(tuner->last_report(rig.dev, rig.args(1000)).has_value());
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  CHECK(rig.dev.compiles() == 4);
  CHECK(best_of(*tuner, rig.dev, rig.args(1000)) == "BM=32");
  CHECK(tuner->kernel().name == "sim_kernel");
}

TEST_CASE("Autotuner: seeded noise does not change a clear winner and is reproducible") {
  auto medians = [](std::uint64_t seed) {
    SimRig rig;
    rig.dev.set_cost_model([](const Config& c, ArgList) {
      return 1000.0 * (1.0 + 0.3 * std::fabs(std::log2(static_cast<double>(c.get_int("BM"))) - 6));
    });
    rig.dev.set_noise(0.03, seed);
    auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64, 128, 256})));
    REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
    CHECK(best_of(*tuner, rig.dev, rig.args(1000)) == "BM=64");
    std::vector<double> out;
    auto report = tuner->last_report(rig.dev, rig.args(1000));
    REQUIRE(report.has_value());
    for (const auto& r : report->results) out.push_back(r.stats.median);
    return out;
  };
  auto a = medians(3);
  CHECK(a == medians(3));
  CHECK(a != medians(4));
}
