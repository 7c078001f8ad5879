// The device-family fallback chain (tune/fallback.hpp) on simulated devices of other
// fingerprints: each level serves (same device with another toolchain, same architecture, same
// vendor, nearest key, default configuration), the closest first; a pick that fails here
// (compile, output check) gives way to the next; keep never tunes, tune (the default) tunes as
// before, background serves then switches; the report and the TUNE_PRINT_AUTOTUNING text name
// the level.
#include <doctest/doctest.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "../cache/cache_test_util.hpp"
#include "../core/sim_fixture.hpp"
#include "../support/scoped_env.hpp"
#include "tune/sqlite_store.hpp"

using namespace tune;
using namespace tune::testing;

namespace {

DeviceInfo sim_info(std::string name, std::string arch, std::string driver,
                    std::string compiler = "simcc-1") {
  DeviceInfo d = SimDevice::default_info();
  d.name = std::move(name);
  d.arch = std::move(arch);
  d.driver_version = std::move(driver);
  d.compiler_version = std::move(compiler);
  return d;
}
// Fingerprints around SimDevice::default_info() ("simulated|simulated device|sim|sim-1").
DeviceInfo same_arch() { return sim_info("simulated board 2", "sim", "sim-2"); }
DeviceInfo same_vendor() { return sim_info("simulated device", "sim2", "sim-1"); }
DeviceInfo other_toolchain() { return sim_info("simulated device", "sim", "sim-1", "simcc-2"); }

// Tunes n=1000 on a device `info` whose best is BM=`best`, into `store`.
void tune_on(const DeviceInfo& info, std::int64_t best, std::shared_ptr<TuningStore> store) {
  SimRig rig(info);
  rig.dev.set_cost_model(bm_model(best));
  AutotunerOptions o = quiet_options();
  o.store = std::move(store);
  auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64})), o);
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
}

AutotunerOptions keep_over(std::shared_ptr<TuningStore> store) {
  AutotunerOptions o = quiet_options();
  o.store = std::move(store);
  o.fallback = FallbackPolicy::keep;
  return o;
}

// The report of a keep run of n=1000 on the default simulated device (its best: BM=48, which
// no tuning here picks: the space has 16, 32, 64; each pick is told apart by its value).
TuningReport served(std::shared_ptr<TuningStore> store, KernelDef def = {}) {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(48));
  if (def.name.empty()) def = sim_kernel(bm_space({16, 32, 64}));
  auto tuner = make_tuner(std::move(def), keep_over(std::move(store)));
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  auto report = tuner->last_report(rig.dev, rig.args(1000));
  REQUIRE(report.has_value());
  return *report;
}

}  // namespace

TEST_CASE("each level of the chain serves, the closest first") {
  cache_test::TempDir dir;
  auto store = SqliteStore::open(dir.file("user.db"));

  // Nothing stored: the default configuration (the first candidate).
  TuningReport r = served(store);
  CHECK(r.source == ResultSource::fallback);
  CHECK(r.fallback == FallbackLevel::default_config);
  CHECK(r.winner.to_string() == "BM=16");
  REQUIRE(r.results.size() == 1);  // served, not tuned
  CHECK(r.results[0].fallback == FallbackLevel::default_config);

  tune_on(same_vendor(), 32, store);
  r = served(store);
  CHECK(r.fallback == FallbackLevel::same_vendor);
  CHECK(r.fallback_device == same_vendor().fingerprint());
  CHECK(r.winner.to_string() == "BM=32");

  tune_on(same_arch(), 64, store);
  r = served(store);
  CHECK(r.fallback == FallbackLevel::same_architecture);
  CHECK(r.winner.to_string() == "BM=64");
  CHECK(r.results.size() == 1);

  tune_on(other_toolchain(), 16, store);
  r = served(store);
  CHECK(r.fallback == FallbackLevel::same_device);
  CHECK(r.winner.to_string() == "BM=16");

  // This device's own decision is no fallback.
  tune_on(SimDevice::default_info(), 32, store);
  r = served(store);
  CHECK(r.source == ResultSource::disk);
  CHECK(r.fallback == FallbackLevel::none);
  CHECK(r.winner.to_string() == "BM=32");
}

TEST_CASE("the nearest key tuned in this process comes before the default configuration") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(48));
  auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64})), keep_over(nullptr));
  // Decided elsewhere for n=1000 (Autotuner::adopt): the nearest key of n=1200.
  REQUIRE(tuner->adopt(rig.dev, rig.args(1000), Config().set("BM", 32)).ok());
  REQUIRE(tuner->run(rig.dev, rig.args(1200)).ok());
  auto r = tuner->last_report(rig.dev, rig.args(1200)).value();
  CHECK(r.fallback == FallbackLevel::nearest_key);
  CHECK(r.winner.to_string() == "BM=32");
  CHECK(best_of(*tuner, rig.dev, rig.args(1200)) == "BM=32");
}

TEST_CASE("a pick that fails here gives way to the next level") {
  cache_test::TempDir dir;
  auto store = SqliteStore::open(dir.file("user.db"));
  tune_on(same_arch(), 64, store);
  tune_on(same_vendor(), 32, store);

  SUBCASE("it does not compile here") {
    SimRig rig;
    rig.dev.set_cost_model(bm_model(48));
    rig.dev.fail_compile_if([](const Config& c) { return c.get_int("BM") == 64; });
    auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64})), keep_over(store));
    REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
    auto r = tuner->last_report(rig.dev, rig.args(1000)).value();
    CHECK(r.fallback == FallbackLevel::same_vendor);
    CHECK(r.winner.to_string() == "BM=32");
    REQUIRE(r.results.size() == 2);
    CHECK(r.results[0].fallback == FallbackLevel::same_architecture);
    CHECK(r.results[0].status.code() == StatusCode::compile_error);
  }
  SUBCASE("its output is wrong here") {
    KernelDef def = sim_kernel(bm_space({16, 32, 64}));
    def.verify = [](Device&, ArgList, const Config& c) {
      return c.get_int("BM") == 64 ? Status(StatusCode::wrong_output, "BM=64 is wrong here")
                                   : Status();
    };
    TuningReport r = served(store, def);
    CHECK(r.fallback == FallbackLevel::same_vendor);
    REQUIRE(r.results.size() == 2);
    CHECK(r.results[0].status.code() == StatusCode::wrong_output);
    CHECK(r.results[1].verified);
  }
  SUBCASE("nothing works here: the error names every level") {
    SimRig rig;
    rig.dev.fail_compile_if([](const Config&) { return true; });
    auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64})), keep_over(store));
    Status st = tuner->run(rig.dev, rig.args(1000));
    CHECK(st.code() == StatusCode::failed_precondition);
    CHECK(st.message().find("same architecture") != std::string::npos);
    CHECK(st.message().find("same vendor") != std::string::npos);
    CHECK(st.message().find("default config") != std::string::npos);
  }
}

TEST_CASE("policies: tune (the default) tunes, keep never does, background serves then switches") {
  cache_test::TempDir dir;
  auto store = SqliteStore::open(dir.file("user.db"));
  tune_on(same_arch(), 64, store);

  SUBCASE("tune: the chain is not consulted") {
    SimRig rig;
    rig.dev.set_cost_model(bm_model(16));
    AutotunerOptions o = quiet_options();
    o.store = store;
    auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64})), o);
    REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
    auto r = tuner->last_report(rig.dev, rig.args(1000)).value();
    CHECK(r.source == ResultSource::tuned);
    CHECK(r.fallback == FallbackLevel::none);
    CHECK(r.winner.to_string() == "BM=16");
  }
  SUBCASE("TUNE_FALLBACK=keep, with strict mode: served, never tuned, nothing refused") {
    ScopedEnv env("TUNE_FALLBACK", "keep");
    SimRig rig;
    rig.dev.set_cost_model(bm_model(16));
    AutotunerOptions o = quiet_options();
    o.store = store;
    o.strict = true;
    auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64})), o);
    REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
    REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());  // a hit
    auto r = tuner->last_report(rig.dev, rig.args(1000)).value();
    CHECK(r.fallback == FallbackLevel::same_architecture);
    CHECK(best_of(*tuner, rig.dev, rig.args(1000)) == "BM=64");
    // The fallback is not stored as this device's decision.
    CHECK(store->find_rows(CacheFilter{"", "", SimDevice::default_info().fingerprint()}).empty());
  }
  SUBCASE("background: the fallback launches, the tuned winner replaces it") {
    SimRig rig;
    rig.dev.set_cost_model(bm_model(16));
    AutotunerOptions o = quiet_options();
    o.store = store;
    o.fallback = FallbackPolicy::background;
    std::mutex mu;
    std::condition_variable cv;
    std::vector<TuningReport> heard;
    o.listener = [&](const TuningReport& r) {
      std::lock_guard lock(mu);
      heard.push_back(r);
      cv.notify_all();
    };
    auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64})), o);
    REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return heard.size() == 2; });
      CHECK(heard[0].fallback == FallbackLevel::same_architecture);
      CHECK(heard[0].winner.to_string() == "BM=64");
      CHECK(heard[1].source == ResultSource::tuned);
      CHECK(heard[1].winner.to_string() == "BM=16");
    }
    CHECK(best_of(*tuner, rig.dev, rig.args(1000)) == "BM=16");
    CHECK(tuner->last_report(rig.dev, rig.args(1000))->fallback == FallbackLevel::none);
  }
}

TEST_CASE("the report's text names the level and the device whose decision served") {
  cache_test::TempDir dir;
  auto store = SqliteStore::open(dir.file("user.db"));
  tune_on(same_arch(), 64, store);
  const std::string text = served(store).to_string();
  CHECK(text.find(": fallback in") != std::string::npos);
  CHECK(text.find("served by fallback level 'same architecture' (decision of " +
                  same_arch().fingerprint() + ")") != std::string::npos);
  CHECK(text.find("(fallback: same architecture)") != std::string::npos);
}
