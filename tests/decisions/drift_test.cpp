// Drift re-validation (AutotunerOptions::drift) on the simulated device, whose run times the
// tests change between calls: one hit in sample_period is timed; a sample beyond the threshold
// re-validates the key exactly once (the stored record counts one more tuning), flipping the
// decision when the runner-up is now faster; no drift, no re-validation; the option off times
// nothing; the unsampled hits allocate nothing.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../cache/cache_test_util.hpp"
#include "../core/sim_fixture.hpp"
#include "../support/allocation_counter.hpp"
#include "tune/sqlite_store.hpp"

using namespace tune;
using namespace tune::testing;

namespace {

// Run times of BM=64 and BM=32 that a test changes between calls: BM=64 wins at first.
struct Times {
  std::atomic<double> bm64{1000.0};
  std::atomic<double> bm32{1320.0};
};

SimDevice::CostModel model_of(const std::shared_ptr<Times>& t) {
  return [t](const Config& c, ArgList) {
    return c.get_int("BM") == 64 ? t->bm64.load() : t->bm32.load();
  };
}

AutotunerOptions drift_options(const std::string& db, std::uint32_t period) {
  AutotunerOptions o = quiet_options();
  o.store = SqliteStore::open(db);
  o.drift.sample_period = period;
  o.drift.threshold = 1.5;
  return o;
}

// The stored row carrying the key's decision record (its config and record).
std::pair<std::string, DecisionRecord> stored_decision(const std::string& db) {
  auto rows = SqliteStore::open(db, {CacheMode::readonly})->rows();
  REQUIRE(rows.ok());
  for (const CacheRow& r : *rows)
    if (r.result.decision) return {r.result.config, *r.result.decision};
  FAIL("no stored row carries a decision record");
  throw;
}

// Waits (up to a minute, then fails) until the key's record counts `tunings` tunings.
void wait_for_tunings(const std::string& db, std::uint32_t tunings) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (stored_decision(db).second.tunings < tunings) {
    REQUIRE(std::chrono::steady_clock::now() < until);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

struct DriftRig {
  cache_test::TempDir dir;
  const std::string db = dir.file("tune.db");
  std::shared_ptr<Times> times = std::make_shared<Times>();
  SimRig rig;
  DriftRig() { rig.dev.set_cost_model(model_of(times)); }
};

Status hits(Autotuner& tuner, SimRig& rig, int count) {
  auto args = rig.args(1000);
  for (int i = 0; i < count; ++i) TUNE_RETURN_IF_ERROR(tuner.run(rig.dev, args));
  return {};
}

}  // namespace

TEST_CASE("a drifting key is re-validated once and flips when the runner-up is now faster") {
  DriftRig r;
  auto tuner = make_tuner(sim_kernel(bm_space({32, 64})), drift_options(r.db, 4));
  auto args = r.rig.args(1000);
  REQUIRE(tuner->run(r.rig.dev, args).ok());
  REQUIRE(best_of(*tuner, r.rig.dev, args) == "BM=64");
  REQUIRE(stored_decision(r.db).second.runner_up == "BM=32");
  r.times->bm64 = 3000.0;  // BM=64 now three times slower: beyond 1.5x, and behind BM=32
  REQUIRE(hits(*tuner, r.rig, 40).ok());
  wait_for_tunings(r.db, 2);
  REQUIRE(hits(*tuner, r.rig, 40).ok());
  tuner.reset();  // joins the re-validation
  const auto [config, record] = stored_decision(r.db);
  CHECK(config == "BM=32");
  CHECK(record.runner_up == "BM=64");
  CHECK(record.tunings == 2);  // the tuning and exactly one re-validation
  CHECK(record.flips == 1);
}

TEST_CASE("a drift that keeps the order re-validates once and never again for that decision") {
  DriftRig r;
  auto tuner = make_tuner(sim_kernel(bm_space({32, 64})), drift_options(r.db, 4));
  auto args = r.rig.args(1000);
  REQUIRE(tuner->run(r.rig.dev, args).ok());
  r.times->bm64 = 3000.0;  // both slower, BM=64 still ahead: every sample keeps drifting
  r.times->bm32 = 4000.0;
  REQUIRE(hits(*tuner, r.rig, 40).ok());
  wait_for_tunings(r.db, 2);
  REQUIRE(hits(*tuner, r.rig, 80).ok());  // 20 more drifting samples after it finished
  tuner.reset();
  const auto [config, record] = stored_decision(r.db);
  CHECK(config == "BM=64");
  CHECK(record.tunings == 2);
  CHECK(record.flips == 0);
}

TEST_CASE("without drift one hit in sample_period is timed and nothing is re-validated") {
  DriftRig r;
  auto tuner = make_tuner(sim_kernel(bm_space({32, 64})), drift_options(r.db, 4));
  REQUIRE(hits(*tuner, r.rig, 1).ok());
  r.rig.dev.reset_counters();
  REQUIRE(hits(*tuner, r.rig, 40).ok());
  CHECK(r.rig.dev.time_calls() == 10);  // the sampled hits: one repetition each, no flush
  CHECK(r.rig.dev.timed_reps() == 10);
  CHECK(r.rig.dev.flushes() == 0);
  CHECK(r.rig.dev.launches() == 30);
  tuner.reset();
  CHECK(stored_decision(r.db).second.tunings == 1);
}

TEST_CASE("drift sampling off (the default) times no hit") {
  DriftRig r;
  auto tuner = make_tuner(sim_kernel(bm_space({32, 64})), drift_options(r.db, 0));
  REQUIRE(hits(*tuner, r.rig, 1).ok());
  r.times->bm64 = 3000.0;
  r.rig.dev.reset_counters();
  REQUIRE(hits(*tuner, r.rig, 40).ok());
  CHECK(r.rig.dev.time_calls() == 0);
  CHECK(r.rig.dev.launches() == 40);
  tuner.reset();
  CHECK(stored_decision(r.db).second.tunings == 1);
  CHECK(AutotunerOptions{}.drift.sample_period == 0);
}

TEST_CASE("drift options are checked") {
  AutotunerOptions o = quiet_options();
  o.drift.sample_period = 8;
  o.drift.threshold = 0.9;
  auto made = Autotuner::make(sim_kernel(bm_space({32, 64})), o);
  REQUIRE_FALSE(made.ok());
  CHECK(made.status().message().find("drift.threshold") != std::string::npos);
}

#ifndef TUNE_TEST_SANITIZED
TEST_CASE("with drift sampling on, the unsampled hits allocate nothing") {
  DriftRig r;
  r.rig.dev.set_fast_launch(true);
  auto tuner = make_tuner(sim_kernel(bm_space({32, 64})), drift_options(r.db, 1000));
  auto args = r.rig.args(1000);
  REQUIRE(tuner->run(r.rig.dev, args).ok());
  REQUIRE(tuner->run(r.rig.dev, args).ok());  // the thread's memo filled
  Status st;
  // 500 hits from the second: none is the 1000th.
  const std::size_t allocs = allocations_of([&] {
    for (int i = 0; i < 500 && st.ok(); ++i) st = tuner->run(r.rig.dev, args);
  });
  REQUIRE(st.ok());
  CHECK(allocs == 0);
  CHECK(r.rig.dev.time_calls() > 0);  // the tuning's
}
#endif
