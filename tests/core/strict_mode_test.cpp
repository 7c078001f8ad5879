// Strict mode (AutotunerOptions::strict, TUNE_STRICT): a key without a stored winner is an
// error naming kernel, key and device; stored keys work; interplay with disable, single
// candidates, background mode, warmup and search strategies.
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "../support/scoped_env.hpp"
#include "sim_fixture.hpp"
#include "tune/search.hpp"

using namespace tune;
using namespace tune::testing;

namespace {

AutotunerOptions strict_options(std::shared_ptr<MemoryStore> store = nullptr) {
  AutotunerOptions o = quiet_options();
  o.strict = true;
  o.store = std::move(store);
  return o;
}

void check_refusal(const Status& st, const Device& dev, const std::string& key = "n=1000") {
  CHECK(st.code() == StatusCode::failed_precondition);
  CHECK(st.message().find("strict mode") != std::string::npos);
  CHECK(st.message().find("sim_kernel") != std::string::npos);
  CHECK(st.message().find(key) != std::string::npos);
  CHECK(st.message().find(dev.info().name) != std::string::npos);
  CHECK(st.message().find("tune it first") != std::string::npos);
}

// A measured row as a store holds it: 20 samples, all at `median` ns.
StoredResult stored_ok(const std::string& config, double median) {
  StoredResult r;
  r.config = config;
  r.stats.count = 20;
  r.stats.min = r.stats.p20 = r.stats.median = r.stats.p80 = r.stats.max = r.stats.mean = median;
  r.unix_time = 1700000000;
  return r;
}

// Tunes n=1000 without strict mode into `store`; returns the winner.
std::string tune_into(const std::shared_ptr<MemoryStore>& store, SimRig& rig, KernelDef def) {
  AutotunerOptions o = quiet_options();
  o.store = store;
  auto tuner = make_tuner(std::move(def), o);
  auto best = tuner->tune(rig.dev, rig.args(1000));
  REQUIRE_MESSAGE(best.ok(), best.status().to_string());
  return best->to_string();
}

}  // namespace

TEST_CASE("strict mode: a key with no stored winner fails and times nothing") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(64));
  auto store = std::make_shared<MemoryStore>();
  auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64})), strict_options(store));
  Status st = tuner->run(rig.dev, rig.args(1000));
  check_refusal(st, rig.dev);
  CHECK(rig.dev.time_calls() == 0);
  CHECK(rig.dev.launches() == 0);
  CHECK(store->saves == 0);
  auto best = tuner->tune(rig.dev, rig.args(1000));
  REQUIRE_FALSE(best.ok());
  check_refusal(best.status(), rig.dev);
  CHECK_FALSE(tuner->best(rig.dev, rig.args(1000)).has_value());
}

TEST_CASE("strict mode: a stored key is read as usual, with no timing") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(32));
  auto store = std::make_shared<MemoryStore>();
  const std::string tuned = tune_into(store, rig, sim_kernel(bm_space({16, 32, 64})));
  CHECK(tuned == "BM=32");
  rig.dev.reset_counters();
  auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64})), strict_options(store));
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  CHECK(rig.dev.time_calls() == 0);
  CHECK(best_of(*tuner, rig.dev, rig.args(1000)) == tuned);
  CHECK(tuner->last_report(rig.dev, rig.args(1000))->source == ResultSource::disk);
  // Another key of the same tuner is still refused.
  check_refusal(tuner->run(rig.dev, rig.args(2000)), rig.dev, "n=2000");
}

TEST_CASE("strict mode: rows covering part of the candidates decide among themselves") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(64));
  auto store = std::make_shared<MemoryStore>();
  store->serve_everything = true;
  store->seeded = {stored_ok("BM=16", 1500), stored_ok("BM=32", 1200)};
  auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64})), strict_options(store));
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  CHECK(rig.dev.time_calls() == 0);
  CHECK(best_of(*tuner, rig.dev, rig.args(1000)) == "BM=32");
  // Failed rows only: no winner.
  StoredResult f;
  f.config = "BM=64";
  f.status = StatusCode::compile_error;
  f.reason = "broken";
  store->seeded = {f};
  auto other = make_tuner(sim_kernel(bm_space({16, 32, 64})), strict_options(store));
  check_refusal(other->run(rig.dev, rig.args(1000)), rig.dev);
}

TEST_CASE("strict mode: disable wins, a single candidate needs no winner, warmup compiles") {
  SimRig rig;
  {
    AutotunerOptions o = strict_options();
    o.disable = true;
    auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64})), o);
    REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
    CHECK(tuner->last_report(rig.dev, rig.args(1000))->source == ResultSource::disabled);
  }
  {
    auto tuner = make_tuner(sim_kernel(bm_space({64})), strict_options());
    REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
    CHECK(tuner->last_report(rig.dev, rig.args(1000))->source == ResultSource::single);
  }
  {
    rig.dev.reset_counters();
    auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64})), strict_options());
    REQUIRE(tuner->warmup(rig.dev).ok());
    CHECK(rig.dev.compiles() == 3);
    CHECK(rig.dev.time_calls() == 0);
  }
  CHECK(rig.dev.time_calls() == 0);
}

TEST_CASE("strict mode: background mode refuses a new key instead of launching the nearest") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(32));
  auto store = std::make_shared<MemoryStore>();
  tune_into(store, rig, sim_kernel(bm_space({16, 32, 64})));  // n=1000 stored
  rig.dev.reset_counters();
  AutotunerOptions o = strict_options(store);
  o.mode = TuningMode::background;
  auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64})), o);
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());  // stored: read on this thread
  CHECK(best_of(*tuner, rig.dev, rig.args(1000)) == "BM=32");
  Status st = tuner->run(rig.dev, rig.args(1001));  // new: its nearest key is n=1000
  CHECK(st.code() == StatusCode::failed_precondition);
  CHECK(st.message().find("n=1001") != std::string::npos);
  CHECK(rig.dev.time_calls() == 0);
}

TEST_CASE("strict mode: TUNE_STRICT sets the default; the option wins") {
  SimRig rig;
  ScopedEnv env("TUNE_STRICT", "1");
  {
    auto tuner = make_tuner(sim_kernel(bm_space({16, 32})));  // quiet_options: strict unset
    CHECK(tuner->run(rig.dev, rig.args(1000)).code() == StatusCode::failed_precondition);
  }
  {
    AutotunerOptions o = quiet_options();
    o.strict = false;
    auto tuner = make_tuner(sim_kernel(bm_space({16, 32})), o);
    CHECK(tuner->run(rig.dev, rig.args(1000)).ok());
  }
}

TEST_CASE("strict mode with a search strategy: the stored winner, or the refusal") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(64));
  auto def = [] {
    KernelDef d = sim_kernel(bm_space({16, 32, 64, 128}));
    d.search.strategy = make_search("random");
    d.search.budget.max_evaluations = 4;
    return d;
  };
  auto store = std::make_shared<MemoryStore>();
  auto refused = make_tuner(def(), strict_options(store));
  check_refusal(refused->run(rig.dev, rig.args(1000)), rig.dev);
  CHECK(rig.dev.time_calls() == 0);
  const std::string tuned = tune_into(store, rig, def());
  CHECK(tuned == "BM=64");
  rig.dev.reset_counters();
  auto tuner = make_tuner(def(), strict_options(store));
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  CHECK(rig.dev.time_calls() == 0);
  CHECK(best_of(*tuner, rig.dev, rig.args(1000)) == tuned);
  CHECK(tuner->last_report(rig.dev, rig.args(1000))->source == ResultSource::disk);
}
