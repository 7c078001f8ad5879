// Conformance: destroying an Autotuner (then its device) while the work it started still runs,
// on every backend. A tuning budget of 1 ms leaves compiles running behind a call; a
// background tuning runs on its own thread; a search stops at its budget. Each thread lives
// through many such lives on a device of its own, under a watchdog: a crash or a hang fails.
// Real compiles (shaderc, NVRTC, hiprtc) make the window wide; the binary cache is off so that
// every life compiles for real.
#include <doctest/doctest.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "many_lives.hpp"
#include "scoped_env.hpp"
#include "skip.hpp"
#include "tune/kernels/bundled.hpp"
#include "tune/tune.hpp"
#include "vulkan_env.hpp"
#include "watchdog.hpp"

namespace {

using namespace tune;

constexpr const char* kBackend = TUNE_CONFORMANCE_BACKEND;

enum class Life { budget, background, search };

const char* name_of(Life l) {
  switch (l) {
    case Life::budget:
      return "tuning_budget_ms = 1";
    case Life::background:
      return "background";
    case Life::search:
      return "search, tuning_budget_ms = 1";
  }
  return "?";
}

// The reason no device opens here, or empty.
std::string cannot_open() {
  (void)tune::testing::use_lavapipe_unless_asked();
  auto dev = open_device(kBackend);
  if (dev.ok()) return {};
  return "cannot open a " + std::string(kBackend) + " device: " + dev.status().to_string();
}

// One life; returns the first call's status (ok, or timeout when nothing was timed in time).
Status one_life(Life life) {
  auto dev = open_device(kBackend);
  if (!dev.ok()) return dev.status();
  auto k = kernels::bundled_kernel((*dev)->language(), "vector_add");
  if (!k) return Status(StatusCode::unavailable, "vector_add is not bundled");
  AutotunerOptions opts;
  opts.persistent = false;
  opts.print = false;
  opts.gpu_lock = false;
  opts.bench.warmup_ms = 0.5;
  opts.bench.rep_ms = 1;
  if (life == Life::background) opts.mode = TuningMode::background;
  if (life != Life::background) opts.tuning_budget_ms = 1;
  KernelDef def = k->def;
  if (life == Life::search) {
    def.search.strategy = make_search("random");
    def.search.budget.max_evaluations = 6;
  }
  auto tuner = Autotuner::make(def, opts);
  if (!tuner.ok()) return tuner.status();
  Status first;
  {
    auto w = k->workload(std::vector<std::int64_t>{4096});
    if (Status st = w->setup(**dev, 5); !st.ok()) return st;
    first = (*tuner)->run(**dev, w->args());
    if (life == Life::background) {
      auto w2 = k->workload(std::vector<std::int64_t>{8192});
      if (Status st = w2->setup(**dev, 6); st.ok()) (void)(*tuner)->run(**dev, w2->args());
    }
  }
  tuner->reset();  // compiles (or the background tuning) may still run here
  dev->reset();
  return first;
}

void many_lives(Life life, int threads, int lives_each) {
  if (std::string why = cannot_open(); !why.empty()) TUNE_SKIP(why);
  tune::testing::ScopedEnv no_binary_cache("TUNE_CACHE", "off");
  tune::testing::Watchdog dog(std::string("teardown on ") + kBackend + ": " + name_of(life), 240);
  tune::testing::check_many_lives(name_of(life), threads, lives_each,
                                  [&] { return one_life(life); });
}

}  // namespace

TEST_CASE("teardown: a tuner and its device destroyed while budget-cut compiles run") {
  many_lives(Life::budget, 4, 3);
}

TEST_CASE("teardown: a tuner and its device destroyed while a background tuning runs") {
  many_lives(Life::background, 4, 3);
}

TEST_CASE("teardown: a search tuner and its device destroyed while compiles run") {
  many_lives(Life::search, 4, 3);
}
