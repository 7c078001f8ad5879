// An empty problem (n = 0: KernelDef::dims gives a grid with a zero dimension for every
// configuration) launches nothing and succeeds, in every mode, without tuning or storing
// anything; and a LaunchDims::block that dims() leaves unset is the configuration's block.
#include <doctest/doctest.h>

#include <string>

#include "sim_fixture.hpp"

using namespace tune;
using namespace tune::testing;

namespace {

// sim_kernel, with a grid of n / BM blocks rounded up: 0 blocks for n = 0.
KernelDef empty_capable_kernel() {
  KernelDef def = sim_kernel(bm_space({16, 32, 64, 128}));
  def.dims = [](const Config& c, ArgList args) {
    const auto bm = static_cast<std::uint32_t>(c.get_int("BM"));
    const auto n = static_cast<std::uint32_t>(args[1].as_int());
    return LaunchDims{{(n + bm - 1) / bm, 1, 1}, {128, 1, 1}};
  };
  return def;
}

int count_prefix(const std::vector<std::string>& events, const std::string& prefix) {
  return static_cast<int>(events_with(events, prefix).size());
}

}  // namespace

TEST_CASE("empty problem: n = 0 launches nothing and succeeds, untimed and never stored") {
  enum class Way { sync, background, search, strict, disabled };
  for (Way way : {Way::sync, Way::background, Way::search, Way::strict, Way::disabled}) {
    CAPTURE(static_cast<int>(way));
    SimRig rig;
    rig.dev.set_record_events(true);
    int body_runs = 0;
    rig.dev.set_kernel_body([&](const Config&, ArgList, SimDevice&) { ++body_runs; });
    auto store = std::make_shared<MemoryStore>();
    AutotunerOptions o = quiet_options();
    o.store = store;
    if (way == Way::background) o.mode = TuningMode::background;
    if (way == Way::strict) o.strict = true;
    if (way == Way::disabled) o.disable = true;
    KernelDef def = empty_capable_kernel();
    if (way == Way::search) def.search.strategy = make_search("random");
    TuningReport seen;
    int reports = 0;
    o.listener = [&](const TuningReport& r) {
      seen = r;
      ++reports;
    };
    auto tuner = make_tuner(def, o);
    for (int call = 0; call < 3; ++call) {
      const Status st = tuner->run(rig.dev, rig.args(0));
      REQUIRE_MESSAGE(st.ok(), st.to_string());
    }
    CHECK(body_runs == 0);  // nothing ran
    const auto ev = rig.dev.events();
    CHECK(count_prefix(ev, "time ") == 0);               // nothing was timed
    CHECK(count_prefix(ev, "launch_empty BM=16") == 3);  // the first candidate, each call
    CHECK(count_prefix(ev, "launch BM") == 0);
    CHECK(store->saves == 0);  // and nothing stored
    if (way != Way::disabled) {
      CHECK(reports == 1);  // decided once, then a hit
      CHECK(seen.source == ResultSource::empty);
      CHECK(to_string(seen.source) == "empty");
    }
    auto best = tuner->tune(rig.dev, rig.args(0));
    REQUIRE_MESSAGE(best.ok(), best.status().to_string());
    CHECK(best->to_string() == "BM=16");
    // A call with work afterwards tunes as usual and runs.
    REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok() == (way != Way::strict));
  }
}

TEST_CASE("empty problem: a grid empty for some configurations only is no empty problem") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(16));
  KernelDef def = sim_kernel(bm_space({16, 32, 2048}));
  // BM = 2048 gets n / BM = 0 blocks for n = 1000 (a dims() that rounds down): that config
  // fails (it would launch nothing and look fastest); the others are tuned.
  def.dims = [](const Config& c, ArgList args) {
    const auto bm = static_cast<std::uint32_t>(c.get_int("BM"));
    return LaunchDims{{static_cast<std::uint32_t>(args[1].as_int()) / bm, 1, 1}, {128, 1, 1}};
  };
  TuningReport seen;
  AutotunerOptions o = quiet_options();
  o.listener = [&](const TuningReport& r) { seen = r; };
  auto tuner = make_tuner(def, o);
  auto best = tuner->tune(rig.dev, rig.args(1000));
  REQUIRE_MESSAGE(best.ok(), best.status().to_string());
  CHECK(best->to_string() == "BM=16");
  CHECK(seen.source == ResultSource::tuned);
  bool refused = false;
  for (const auto& r : seen.results)
    if (r.config.to_string() == "BM=2048")
      refused = r.status.code() == StatusCode::invalid_argument &&
                r.status.message().find("launches nothing") != std::string::npos;
  CHECK(refused);
}

TEST_CASE("launch block: a block dims() leaves unset is the configuration's block") {
  SimRig rig;
  rig.dev.set_record_events(true);
  KernelDef def = sim_kernel(ConfigSpace().param("BM", {16, 32}).param("block.x", {64, 256}));
  def.dims = [](const Config&, ArgList args) {
    LaunchDims d;
    d.grid = {static_cast<std::uint32_t>(args[1].as_int()), 1, 1};
    d.block = {0, 0, 0};  // unset: the configuration's block.x decides
    return d;
  };
  auto tuner = make_tuner(def);
  auto best = tuner->tune(rig.dev, rig.args(1000));
  REQUIRE_MESSAGE(best.ok(), best.status().to_string());  // every config used to fail here
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());      // a hit
  const Dim3 want = best->launch().block;
  CHECK(to_string(rig.dev.last_launch_dims().block) == to_string(want));
  CHECK((want.x == 64 || want.x == 256));
}
