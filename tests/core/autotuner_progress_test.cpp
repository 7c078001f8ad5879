// AutotunerOptions::progress on the simulated device: counts that only grow, a last event
// (done) with the report's totals, stored rows counted as stored, no events where nothing is
// tuned, a callback that throws ignored, and a search strategy's tuning reported as it
// evaluates.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim_fixture.hpp"
#include "tune/search.hpp"

namespace {

using namespace tune;
using namespace tune::testing;

// Every event of one tuning and the report that ended it.
struct Heard {
  std::vector<TuningProgress> events;
  TuningReport report;
};

AutotunerOptions recording(Heard& heard) {
  AutotunerOptions opts = quiet_options();
  opts.progress = [&heard](const TuningProgress& p) { heard.events.push_back(p); };
  opts.listener = [&heard](const TuningReport& r) { heard.report = r; };
  return opts;
}

std::size_t count_if_result(const TuningReport& r, bool (*pred)(const ConfigResult&)) {
  std::size_t n = 0;
  for (const auto& c : r.results) n += pred(c) ? 1 : 0;
  return n;
}

// Counts never shrink from one event to the next, and only the last event is done.
void check_monotonic(const std::vector<TuningProgress>& events) {
  REQUIRE(!events.empty());
  for (std::size_t i = 0; i < events.size(); ++i) {
    const TuningProgress& p = events[i];
    CAPTURE(i);
    CHECK(p.done == (i + 1 == events.size()));
    CHECK(p.compiled + p.stored <= p.candidates);
    CHECK(p.timed <= p.compiled);
    if (i == 0) continue;
    const TuningProgress& q = events[i - 1];
    CHECK(p.candidates == q.candidates);
    CHECK(p.stored == q.stored);
    CHECK(p.compiled >= q.compiled);
    CHECK(p.timed >= q.timed);
    CHECK(p.raced_out >= q.raced_out);
    CHECK(p.failed >= q.failed);
    CHECK(p.elapsed_ms >= q.elapsed_ms);
  }
}

TEST_CASE("progress: counts grow and the last event has the report's totals") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(64));
  // Slow compiles so that timing rounds and compiles interleave and several events come.
  rig.dev.compile_delay_if([](const Config&) { return true; }, 20);
  rig.dev.fail_compile_if([](const Config& c) { return c.get_int("BM") == 8; });
  rig.dev.fail_launch_if([](const Config& c) { return c.get_int("BM") == 16; });
  Heard heard;
  auto tuner =
      make_tuner(sim_kernel(bm_space({8, 16, 32, 48, 64, 96, 128, 256})), recording(heard));
  auto args = rig.args(1000);
  auto best = tuner->tune(rig.dev, args);
  REQUIRE_MESSAGE(best.ok(), best.status().to_string());
  check_monotonic(heard.events);

  const TuningReport& r = heard.report;
  const TuningProgress& last = heard.events.back();
  CHECK(last.kernel == "sim_kernel");
  CHECK(last.key == r.key);
  CHECK(last.candidates == r.results.size());
  CHECK(last.candidates == 8);
  CHECK(last.stored == 0);
  CHECK(last.compiled == 8);  // no budget: every candidate compiled
  CHECK(last.failed == count_if_result(r, [](const ConfigResult& c) { return !c.status.ok(); }));
  CHECK(last.failed == 2);
  CHECK(last.raced_out == count_if_result(r, [](const ConfigResult& c) { return c.raced_out; }));
  CHECK(last.timed == count_if_result(r, [](const ConfigResult& c) {
          return c.status.ok() && c.stats.count > 0;
        }));
  CHECK(last.best == r.winner);
  CHECK(last.best.get_int("BM") == 64);
  const ConfigResult* win = nullptr;
  for (const auto& c : r.results)
    if (c.config == r.winner) win = &c;
  REQUIRE(win != nullptr);
  CHECK(last.best_ns == win->stats.median);
  CHECK(last.elapsed_ms <= r.wall_ms);
}

TEST_CASE("progress: rows read from the store count as stored, and a known key is silent") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(32));
  auto store = std::make_shared<MemoryStore>();
  Heard first;
  {
    AutotunerOptions opts = recording(first);
    opts.store = store;
    auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64})), opts);
    REQUIRE(tuner->tune(rig.dev, rig.args(500)).ok());
    const std::size_t events = first.events.size();
    REQUIRE(tuner->tune(rig.dev, rig.args(500)).ok());  // remembered in memory: no events
    CHECK(first.events.size() == events);
  }
  check_monotonic(first.events);
  CHECK(first.events.back().stored == 0);

  Heard second;  // a new Autotuner: every row comes from the store
  AutotunerOptions opts = recording(second);
  opts.store = store;
  auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64})), opts);
  REQUIRE(tuner->tune(rig.dev, rig.args(500)).ok());
  REQUIRE(second.report.source == ResultSource::disk);
  REQUIRE(second.events.size() == 1);
  const TuningProgress& p = second.events.front();
  CHECK(p.done);
  CHECK(p.candidates == 3);
  CHECK(p.stored == 3);
  CHECK(p.compiled == 0);
  CHECK(p.timed == 0);
  CHECK(p.best == second.report.winner);
  CHECK(p.best.get_int("BM") == 32);
}

TEST_CASE("progress: a callback that throws is ignored and the tuning succeeds") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(64));
  AutotunerOptions opts = quiet_options();
  int calls = 0;
  opts.progress = [&calls](const TuningProgress&) {
    ++calls;
    throw std::runtime_error("progress callback broke");
  };
  auto tuner = make_tuner(sim_kernel(bm_space({32, 64, 128})), opts);
  auto best = tuner->tune(rig.dev, rig.args(1000));
  REQUIRE_MESSAGE(best.ok(), best.status().to_string());
  CHECK(best->get_int("BM") == 64);
  CHECK(calls >= 1);
}

TEST_CASE("progress: no events when tuning is disabled or one candidate remains") {
  SimRig rig;
  Heard heard;
  AutotunerOptions opts = recording(heard);
  opts.disable = true;
  auto off = make_tuner(sim_kernel(bm_space({32, 64})), opts);
  REQUIRE(off->tune(rig.dev, rig.args(100)).ok());
  CHECK(heard.events.empty());

  Heard one;
  auto single = make_tuner(sim_kernel(bm_space({32})), recording(one));
  REQUIRE(single->tune(rig.dev, rig.args(100)).ok());
  CHECK(one.events.empty());
}

TEST_CASE("progress: a search strategy's tuning reports each stretch of evaluations") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(48));
  // Slow compiles (over the 100 ms interval between events) so that events come during the
  // search, not only its last one.
  rig.dev.compile_delay_if([](const Config&) { return true; }, 120);
  rig.dev.fail_compile_if([](const Config& c) { return c.get_int("BM") == 8; });
  Heard heard;
  KernelDef def = sim_kernel(bm_space({8, 16, 32, 48, 64, 96, 128, 256}));
  def.search.strategy = make_search("exhaustive");
  def.search.budget.max_evaluations = 5;
  auto tuner = make_tuner(std::move(def), recording(heard));
  auto best = tuner->tune(rig.dev, rig.args(1000));
  REQUIRE_MESSAGE(best.ok(), best.status().to_string());
  const TuningReport& r = heard.report;
  REQUIRE(r.results.size() == 5);

  // Several events; counts only grow; the number of points grows with the search.
  REQUIRE(heard.events.size() >= 2);
  for (std::size_t i = 0; i < heard.events.size(); ++i) {
    const TuningProgress& p = heard.events[i];
    CAPTURE(i);
    CHECK(p.kernel == "sim_kernel");
    CHECK(p.key == r.key);
    CHECK(p.done == (i + 1 == heard.events.size()));
    CHECK(p.compiled + p.stored <= p.candidates);
    CHECK(p.timed <= p.compiled);
    CHECK(p.raced_out == 0);
    if (i == 0) continue;
    const TuningProgress& q = heard.events[i - 1];
    CHECK(p.candidates >= q.candidates);
    CHECK(p.compiled >= q.compiled);
    CHECK(p.timed >= q.timed);
    CHECK(p.failed >= q.failed);
    CHECK(p.elapsed_ms >= q.elapsed_ms);
    if (!p.done) CHECK(p.best_ns <= q.best_ns);  // best so far never gets worse
  }
  CHECK(heard.events.front().candidates < 5);

  // The last event has the report's totals and its winner.
  const TuningProgress& last = heard.events.back();
  CHECK(last.candidates == 5);
  CHECK(last.stored == 0);
  CHECK(last.compiled == 5);
  CHECK(last.failed == count_if_result(r, [](const ConfigResult& c) { return !c.status.ok(); }));
  CHECK(last.timed == count_if_result(r, [](const ConfigResult& c) { return c.status.ok(); }));
  CHECK(last.best == r.winner);
  CHECK(last.best == *best);
  for (const auto& c : r.results)
    if (c.config == r.winner) CHECK(last.best_ns == c.stats.median);
  CHECK(last.elapsed_ms <= r.wall_ms);
}

}  // namespace
