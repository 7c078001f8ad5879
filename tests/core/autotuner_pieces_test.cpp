// The pieces of a tuning that tuning across processes and devices is built from:
// Autotuner::key_text, candidates, measure and adopt, on the simulated device.
#include <doctest/doctest.h>

#include <set>
#include <stdexcept>

#include "sim_fixture.hpp"

using namespace tune;
using namespace tune::testing;

namespace {

// Configs that time() ran on `dev`, from its "time <config> reps=<n>" events.
std::multiset<std::string> timed_configs(const SimDevice& dev) {
  std::multiset<std::string> out;
  for (const auto& e : events_with(dev.events(), "time "))
    out.insert(e.substr(5, e.find(" reps=") - 5));
  return out;
}

std::vector<std::string> texts(const std::vector<Config>& configs) {
  std::vector<std::string> out;
  for (const auto& c : configs) out.push_back(c.to_string());
  return out;
}

// BM over 16..256 with BM=128 rejected by a constraint.
KernelDef constrained_kernel() {
  ConfigSpace space = bm_space({16, 32, 64, 128, 256});
  space.constrain("not128",
                  [](const Config& c, const DeviceInfo&) { return c.get_int("BM") != 128; });
  return sim_kernel(std::move(space));
}

// A tuner of BM over 16..256 on the simulated device (modelled best BM=64) with a memory store
// that counts loads and saves, and the arguments of key n = 1000.
struct StoredTuning {
  SimRig rig;
  std::shared_ptr<MemoryStore> store = std::make_shared<MemoryStore>();
  std::unique_ptr<Autotuner> tuner;
  std::vector<ArgValue> args = rig.args(1000);

  StoredTuning() {
    rig.dev.set_cost_model(bm_model(64));
    AutotunerOptions opts = quiet_options();
    opts.store = store;
    tuner = make_tuner(sim_kernel(bm_space({16, 32, 64, 128, 256})), opts);
  }
};

}  // namespace

TEST_CASE("Autotuner::candidates: the constrained space in space order, equal on equal devices") {
  SimRig a, b;
  auto tuner = make_tuner(constrained_kernel());
  auto ca = tuner->candidates(a.dev, a.args(1000));
  REQUIRE_MESSAGE(ca.ok(), ca.status().to_string());
  CHECK(texts(*ca) == std::vector<std::string>{"BM=16", "BM=32", "BM=64", "BM=256"});
  auto cb = tuner->candidates(b.dev, b.args(1000));
  REQUIRE(cb.ok());
  CHECK(texts(*cb) == texts(*ca));
  // Nothing was compiled or timed to answer.
  CHECK(a.dev.compiles() == 0);
  CHECK(a.dev.timed_reps() == 0);
}

TEST_CASE("Autotuner::key_text: the text a tuning reports for the key") {
  SimRig rig;
  auto tuner = make_tuner(sim_kernel(bm_space({16, 32})));
  auto args = rig.args(777);
  auto text = tuner->key_text(rig.dev, args);
  REQUIRE(text.ok());
  REQUIRE(tuner->tune(rig.dev, args).ok());
  CHECK(*text == tuner->last_report(rig.dev, args)->key);
  auto other = tuner->key_text(rig.dev, rig.args(778));
  REQUIRE(other.ok());
  CHECK(*other != *text);
}

TEST_CASE("Autotuner::measure: times exactly the configs given, remembers and stores nothing") {
  StoredTuning t;
  SimRig& rig = t.rig;
  auto& store = t.store;
  auto& tuner = t.tuner;
  auto& args = t.args;
  const std::vector<Config> some = {Config().set("BM", 256), Config().set("BM", 32)};
  auto res = tuner->measure(rig.dev, args, some);
  REQUIRE_MESSAGE(res.ok(), res.status().to_string());
  REQUIRE(res->size() == 2);
  CHECK((*res)[0].config.to_string() == "BM=256");
  CHECK((*res)[1].config.to_string() == "BM=32");
  for (const auto& r : *res) {
    CAPTURE(r.config.to_string());
    CHECK(r.status.ok());
    CHECK(r.stats.count >= 1);
    CHECK(r.stats.median == rig.dev.modelled_ns(r.config, args));
  }
  const auto timed = timed_configs(rig.dev);
  CHECK(std::set<std::string>(timed.begin(), timed.end()) ==
        std::set<std::string>{"BM=256", "BM=32"});
  CHECK_FALSE(tuner->best(rig.dev, args).has_value());
  CHECK_FALSE(tuner->last_report(rig.dev, args).has_value());
  CHECK(store->loads == 0);
  CHECK(store->saves == 0);

  SUBCASE("a config outside the space is refused, naming it") {
    const std::vector<Config> bad = {Config().set("BM", 48)};
    auto r = tuner->measure(rig.dev, args, bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::invalid_argument);
    CHECK(r.status().message().find("BM=48") != std::string::npos);
  }
  SUBCASE("a failing config has its reason, the others their timings") {
    rig.dev.fail_launch_if([](const Config& c) { return c.get_int("BM") == 32; });
    auto r = tuner->measure(rig.dev, args, some);
    REQUIRE(r.ok());
    CHECK((*r)[0].status.ok());
    CHECK((*r)[1].status.code() == StatusCode::launch_failed);
    CHECK(std::isinf((*r)[1].stats.median));
  }
}

TEST_CASE("Autotuner::measure: a callback that throws ends it as callback_failed") {
  SimRig rig;
  KernelDef def = sim_kernel(bm_space({16, 32, 64}));
  auto dims = def.dims;
  def.dims = [dims](const Config& c, ArgList a) {
    if (c.get_int("BM") == 32) throw std::runtime_error("dims refuses BM=32");
    return dims(c, a);
  };
  auto tuner = make_tuner(std::move(def));
  auto args = rig.args(1000);
  const std::vector<Config> all = {Config().set("BM", 16), Config().set("BM", 32)};
  auto r = tuner->measure(rig.dev, args, all);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::callback_failed);
  CHECK(r.status().message().find("dims refuses BM=32") != std::string::npos);
}

TEST_CASE("Autotuner::adopt: a configuration decided elsewhere becomes a memory hit") {
  StoredTuning t;
  SimRig& rig = t.rig;
  auto& store = t.store;
  auto& tuner = t.tuner;
  auto& args = t.args;

  SUBCASE("adopted, then run() launches it without timing anything") {
    ConfigResult row;
    row.config = Config().set("BM", 32);
    row.stats.count = 5;
    row.stats.min = row.stats.p20 = row.stats.median = row.stats.p80 = row.stats.max =
        row.stats.mean = 1100;
    const std::vector<ConfigResult> rows = {row};
    REQUIRE(tuner->adopt(rig.dev, args, Config().set("BM", 32), rows).ok());
    CHECK(best_of(*tuner, rig.dev, args) == "BM=32");
    rig.dev.clear_events();
    REQUIRE(tuner->run(rig.dev, args).ok());
    CHECK(timed_configs(rig.dev).empty());
    CHECK(rig.dev.events().back() == "launch BM=32");
    auto report = tuner->last_report(rig.dev, args);
    REQUIRE(report.has_value());
    CHECK(report->source == ResultSource::shared);
    CHECK(report->winner.to_string() == "BM=32");
    CHECK(to_string(ResultSource::shared) == "shared");
    // The given rows went to the store, under this key.
    auto saved = store->all_rows();
    REQUIRE(saved.size() == 1);
    CHECK(saved[0].config == "BM=32");
    CHECK(saved[0].stats.median == 1100);
    CHECK(store->saves == 1);
  }
  SUBCASE("it replaces a configuration tuned before") {
    REQUIRE(tuner->run(rig.dev, args).ok());
    CHECK(best_of(*tuner, rig.dev, args) == "BM=64");
    REQUIRE(tuner->adopt(rig.dev, args, Config().set("BM", 128)).ok());
    CHECK(best_of(*tuner, rig.dev, args) == "BM=128");
    REQUIRE(tuner->run(rig.dev, args).ok());
    CHECK(rig.dev.events().back() == "launch BM=128");
    // Other keys are still found.
    REQUIRE(tuner->run(rig.dev, rig.args(5)).ok());
    CHECK(best_of(*tuner, rig.dev, rig.args(5)) == "BM=64");
    CHECK(best_of(*tuner, rig.dev, args) == "BM=128");
  }
  SUBCASE("a config the space does not accept is refused, naming it") {
    Status st = tuner->adopt(rig.dev, args, Config().set("BM", 48));
    CHECK(st.code() == StatusCode::invalid_argument);
    CHECK(st.message().find("BM=48") != std::string::npos);
    CHECK_FALSE(tuner->best(rig.dev, args).has_value());
    CHECK(store->saves == 0);
  }
  SUBCASE("a config that does not compile is refused with its compile error") {
    rig.dev.fail_compile_if([](const Config& c) { return c.get_int("BM") == 16; });
    Status st = tuner->adopt(rig.dev, args, Config().set("BM", 16));
    CHECK(st.code() == StatusCode::compile_error);
    CHECK(st.message().find("BM=16") != std::string::npos);
    CHECK_FALSE(tuner->best(rig.dev, args).has_value());
  }
}
