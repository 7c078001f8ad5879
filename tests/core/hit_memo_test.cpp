// The Autotuner's per-thread memory of its last hit (core/src/hit_memo.hpp): a call repeating
// the previous hit's arguments skips the key. These cases check that the shortcut never
// launches what the full path would not: changed scalars, another device, a released device,
// a destroyed Autotuner whose address a new one reuses, and keys that call user code.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "sim_fixture.hpp"

using namespace tune;
using namespace tune::testing;

namespace {

// The config of the last "launch" event, "" when none.
std::string last_launch(const SimDevice& dev) {
  const auto launches = events_with(dev.events(), "launch ");
  return launches.empty() ? std::string() : launches.back().substr(7);
}

// Best BM is 16 below n = 2000 and 64 from there on.
SimDevice::CostModel n_dependent_model() {
  return [](const Config& c, ArgList args) {
    const std::int64_t best = args[1].as_int() < 2000 ? 16 : 64;
    return 1000.0 + 10.0 * static_cast<double>(std::llabs(c.get_int("BM") - best));
  };
}

}  // namespace

TEST_CASE("hit memo: alternating keys launch each key's own winner") {
  SimRig rig;
  rig.dev.set_cost_model(n_dependent_model());
  auto tuner = make_tuner(sim_kernel(bm_space({16, 64})));
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  REQUIRE(tuner->run(rig.dev, rig.args(5000)).ok());
  for (int i = 0; i < 4; ++i) {
    REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
    CHECK(last_launch(rig.dev) == "BM=16");
    REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());  // a repeat: the memo's path
    CHECK(last_launch(rig.dev) == "BM=16");
    REQUIRE(tuner->run(rig.dev, rig.args(5000)).ok());
    CHECK(last_launch(rig.dev) == "BM=64");
  }
}

TEST_CASE("hit memo: the same arguments on another device use that device's entry") {
  SimRig a;
  SimDevice b;  // same model: its own results all the same
  a.dev.set_cost_model(bm_model(16));
  b.set_cost_model(bm_model(64));
  auto tuner = make_tuner(sim_kernel(bm_space({16, 64})));
  const auto args = a.args(1000);  // a's buffer: SimDevice does not check ownership
  REQUIRE(tuner->run(a.dev, args).ok());
  REQUIRE(tuner->run(a.dev, args).ok());  // remembered as this thread's last hit
  REQUIRE(tuner->run(b, args).ok());      // b: a new key there, tuned on b
  CHECK(best_of(*tuner, b, args) == "BM=64");
  CHECK(last_launch(b) == "BM=64");
  REQUIRE(tuner->run(a.dev, args).ok());
  CHECK(last_launch(a.dev) == "BM=16");
}

TEST_CASE("hit memo: after release the same call tunes again") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(32));
  auto tuner = make_tuner(sim_kernel(bm_space({16, 32})));
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());  // a hit: remembered
  CHECK(rig.dev.compiles() == 2);
  tuner->release(rig.dev);
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  CHECK(rig.dev.compiles() == 4);  // tuned again, not launched from the released entry
  CHECK(best_of(*tuner, rig.dev, rig.args(1000)) == "BM=32");
}

TEST_CASE("hit memo: a configuration adopted for a known key is launched from then on") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(32));
  auto tuner = make_tuner(sim_kernel(bm_space({16, 32})));
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());  // a hit: remembered
  CHECK(last_launch(rig.dev) == "BM=32");
  REQUIRE(tuner->adopt(rig.dev, rig.args(1000), Config().set("BM", 16), {}).ok());
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  CHECK(last_launch(rig.dev) == "BM=16");  // the adopted entry, not the replaced one
}

TEST_CASE("hit memo: a new Autotuner where a destroyed one lived tunes its own kernel") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(128));
  // Allocators hand a freed block of the same size back: try a few times to get the address
  // of the destroyed tuner's state; the promise holds either way.
  bool reused = false;
  for (int round = 0; round < 8 && !reused; ++round) {
    auto first = make_tuner(sim_kernel(bm_space({16, 32})));
    REQUIRE(first->run(rig.dev, rig.args(1000)).ok());
    REQUIRE(first->run(rig.dev, rig.args(1000)).ok());  // remembered as the last hit
    const void* old_address = first.get();
    first.reset();
    auto second = make_tuner(sim_kernel(bm_space({64, 128})));
    reused = second.get() == old_address;
    const auto compiles = rig.dev.compiles();
    REQUIRE(second->run(rig.dev, rig.args(1000)).ok());
    CHECK(rig.dev.compiles() == compiles + 2);  // second's own space, tuned
    CHECK(last_launch(rig.dev) == "BM=128");
    CHECK(best_of(*second, rig.dev, rig.args(1000)) == "BM=128");
  }
  MESSAGE(
      "a new Autotuner reused a destroyed one's address: " << std::string(reused ? "yes" : "no"));
}

TEST_CASE("hit memo: heuristics and custom buckets run on every call") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(32));
  KernelDef def = sim_kernel(bm_space({16, 32}));
  int heuristic_calls = 0;
  def.heuristics.push_back({"H", [&](ArgList, const DeviceInfo&) {
                              ++heuristic_calls;
                              return Value(std::int64_t{1});
                            }});
  int bucket_calls = 0;
  def.key = {KeySpec::custom("n", [&](std::int64_t v) {
    ++bucket_calls;
    return v;
  })};
  auto tuner = make_tuner(std::move(def));
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  const int h0 = heuristic_calls, b0 = bucket_calls;
  for (int i = 0; i < 3; ++i) REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  CHECK(heuristic_calls == h0 + 3);
  CHECK(bucket_calls == b0 + 3);
}
