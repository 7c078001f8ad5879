// A cached winner that fails to launch for a new member of its bucket, on the simulated device:
// the call launches the key's next stored candidate (the winner rule's order) instead of
// failing, the event is in the key's report (once per distinct event) and the log; a failure
// no other configuration can cure (every candidate fails) is still the call's error.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "../support/log_capture.hpp"
#include "bucketed_kernel.hpp"

using namespace tune;
using namespace tune::testing;

namespace {

AutotunerOptions no_edge_checks() {
  AutotunerOptions o = quiet_options();
  o.check_bucket_edges = false;  // so the bucket stays whole and the winner meets n=7000 cold
  return o;
}

// BM=64 fastest, then 32, then 16.
double cost(const Config& c, ArgList) {
  return 1000.0 + 10.0 * static_cast<double>(64 - c.get_int("BM"));
}

// Tunes n=5000 (bucket 8192), then makes the configurations in `fail` fail to launch, as a
// winner does at a member of its bucket it was never launched at (the simulated device's
// launch failures are per configuration, so they are switched on after the tuning).
std::unique_ptr<Autotuner> tuned_then_failing(SimRig& rig, std::vector<std::int64_t> fail) {
  rig.dev.set_cost_model(cost);
  auto tuner = make_tuner(bucketed_kernel(), no_edge_checks());
  REQUIRE(tuner->run(rig.dev, rig.args(5000)).ok());
  REQUIRE(best_of(*tuner, rig.dev, rig.args(5000)) == "BM=64");
  rig.dev.fail_launch_if([fail](const Config& c) {
    return std::find(fail.begin(), fail.end(), c.get_int("BM")) != fail.end();
  });
  return tuner;
}

}  // namespace

TEST_CASE("a winner failing at a new member of its bucket falls back to the next candidate") {
  SimRig rig;
  auto tuner = tuned_then_failing(rig, {64});
  rig.dev.clear_events();
  LogCapture log;
  for (int i = 0; i < 3; ++i) CHECK(tuner->run(rig.dev, rig.args(7000)).ok());
  CHECK(events_with(rig.dev.events(), "launch BM=32").size() == 3);
  CHECK(events_with(rig.dev.events(), "launch BM=16").empty());
  auto report = tuner->last_report(rig.dev, rig.args(7000));
  REQUIRE(report.has_value());
  REQUIRE(report->launch_fallbacks.size() == 1);  // three calls, one distinct event
  CHECK(report->launch_fallbacks[0].find("{BM=64} failed at n=7000 (launch_failed") == 0);
  CHECK(report->launch_fallbacks[0].find("{BM=32} launched instead") != std::string::npos);
  CHECK(log.count(LogLevel::warning, "{BM=64} failed at n=7000") == 1);
}

TEST_CASE("the fallback goes down the winner rule's order") {
  SimRig rig;
  auto tuner = tuned_then_failing(rig, {64, 32});
  CHECK(tuner->run(rig.dev, rig.args(7000)).ok());
  auto report = tuner->last_report(rig.dev, rig.args(7000));
  REQUIRE(report.has_value());
  REQUIRE(report->launch_fallbacks.size() == 1);
  CHECK(report->launch_fallbacks[0].find("{BM=16} launched instead") != std::string::npos);
}

TEST_CASE("when every stored candidate fails too, the call fails with the winner's error") {
  SimRig rig;
  auto tuner = tuned_then_failing(rig, {64, 32, 16});
  Status st = tuner->run(rig.dev, rig.args(7000));
  CHECK(st.code() == StatusCode::launch_failed);
  CHECK(st.message().find("BM=64") != std::string::npos);
}
