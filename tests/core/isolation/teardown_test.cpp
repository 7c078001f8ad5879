// Destroying an Autotuner while the work it started is still running: compiles a tuning budget
// left behind, a background tuning, an isolated worker, a search. Every object that starts
// background work owns its end, so destroying the tuner and then the device must never let a
// kernel outlive its device (SimDevice aborts the process, naming the count, when one does).
//
// Each case runs many short lives on 8 threads at once, under a watchdog: a hang is a failure.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "many_lives.hpp"
#include "program_paths.hpp"
#include "sim_fixture.hpp"
#include "watchdog.hpp"

namespace {

using namespace tune;
using namespace tune::testing;

enum class Life { budget, background, isolated, search };

const char* name_of(Life l) {
  switch (l) {
    case Life::budget:
      return "sync, tuning_budget_ms = 1";
    case Life::background:
      return "background";
    case Life::isolated:
      return "isolated";
    case Life::search:
      return "search, tuning_budget_ms = 1";
  }
  return "?";
}

AutotunerOptions options_for(Life life) {
  AutotunerOptions o = quiet_options();
  o.gpu_lock = false;
  if (life == Life::budget || life == Life::search) o.tuning_budget_ms = 1;
  if (life == Life::background) o.mode = TuningMode::background;
  if (life == Life::isolated) {
    o.isolation.enabled = true;
    o.isolation.worker = tune_test_programs::sim_worker;
    o.isolation.device = "sim";
    o.tuning_budget_ms = 1;
  }
  return o;
}

KernelDef def_for(Life life) {
  KernelDef def = sim_kernel(bm_space({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}));
  if (life == Life::search) {
    def.search.strategy = make_search("random");
    def.search.budget.max_evaluations = 12;
  }
  return def;
}

// One life: a device whose compiles take a while, a tuner, one or two calls, then the tuner
// and the device destroyed at once, compiles still running. Returns what the first call said.
Status one_life(Life life) {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(7));
  rig.dev.compile_delay_if([](const Config&) { return true; }, 2.0);
  auto tuner = Autotuner::make(def_for(life), options_for(life));
  if (!tuner.ok()) return tuner.status();
  auto args = rig.args(1024);
  Status st = (*tuner)->run(rig.dev, args);
  if (life == Life::background) {
    // A tuned key first, so the next new key launches its config and tunes in the background.
    (void)(*tuner)->run(rig.dev, rig.args(2048));
  }
  tuner->reset();  // compiles (and a background tuning) still running
  return st;       // rig.dev is destroyed here: it aborts if a kernel of it is still alive
}

void many_lives(Life life, int threads, int lives_each) {
  Watchdog dog(std::string("teardown: ") + name_of(life), 120);
  check_many_lives(name_of(life), threads, lives_each, [&] { return one_life(life); });
}

}  // namespace

TEST_CASE("teardown: a tuner destroyed while its budget left compiles running (8 threads)") {
  many_lives(Life::budget, 8, 40);
}

TEST_CASE("teardown: a tuner destroyed while a background tuning runs (8 threads)") {
  many_lives(Life::background, 8, 40);
}

TEST_CASE("teardown: a search tuner destroyed while its compiles run (8 threads)") {
  many_lives(Life::search, 8, 40);
}

TEST_CASE("teardown: an isolated tuner destroyed while its worker compiles (8 threads)") {
  many_lives(Life::isolated, 8, 4);
}

TEST_CASE("teardown: release(dev) leaves no kernel of dev behind while the tuner lives on") {
  Watchdog dog("teardown: release", 120);
  auto tuner = make_tuner(def_for(Life::budget), options_for(Life::budget));
  for (int i = 0; i < 40; ++i) {
    SimRig rig;
    rig.dev.set_cost_model(bm_model(7));
    rig.dev.compile_delay_if([](const Config&) { return true; }, 2.0);
    auto args = rig.args(1024);
    const Status st = tuner->run(rig.dev, args);
    CHECK_MESSAGE((st.ok() || st.code() == StatusCode::timeout), st.to_string());
    tuner->release(rig.dev);
    CHECK(rig.dev.live_kernels() == 0);
  }
}
