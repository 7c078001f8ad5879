// Exception safety: every user callback throws in turn, in sync, background and search modes,
// with 1 and 8 threads. Each case asserts: the call that ran it returns callback_failed naming
// the callback (or, where the callback ran off the caller's thread, a warning names it), no
// call hangs (watchdog), no other caller inherits the error, and the key tunes afterwards.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "sim_fixture.hpp"
#include "watchdog.hpp"

using namespace tune;
using namespace tune::testing;

namespace {

enum class Cb {
  dims,
  heuristic,
  key_fn,
  constraint,
  derive,
  early_prune,
  perf_model,
  pre_hook,
  post_hook,
  verify,
  listener,
  strategy
};
constexpr Cb kAll[] = {Cb::dims,      Cb::heuristic,   Cb::key_fn,     Cb::constraint,
                       Cb::derive,    Cb::early_prune, Cb::perf_model, Cb::pre_hook,
                       Cb::post_hook, Cb::verify,      Cb::listener,   Cb::strategy};

// The name the error or warning must carry.
const char* name_of(Cb c) {
  switch (c) {
    case Cb::dims:
      return "dims";
    case Cb::heuristic:
      return "heuristic 'H'";
    case Cb::key_fn:
      return "key function of 'n'";
    case Cb::constraint:
      return "constraint 'any'";
    case Cb::derive:
      return "derive";
    case Cb::early_prune:
      return "early_prune";
    case Cb::perf_model:
      return "perf_model";
    case Cb::pre_hook:
      return "pre_hook";
    case Cb::post_hook:
      return "post_hook";
    case Cb::verify:
      return "verify";
    case Cb::listener:
      return "listener";
    case Cb::strategy:
      return "search strategy 'throwing'";
  }
  return "?";
}

enum class Mode { sync, background, search };
const char* name_of(Mode m) {
  return m == Mode::sync ? "sync" : m == Mode::background ? "background" : "search";
}

// Throws once from the armed callback, then lets every call through.
struct Thrower {
  std::atomic<int> armed{-1};
  std::atomic<int> left{0};
  std::atomic<int> fired{0};
  void arm(Cb c) {
    left = 1;
    armed = static_cast<int>(c);
  }
  void maybe(Cb c) {
    if (armed.load() != static_cast<int>(c)) return;
    if (left.fetch_sub(1) > 0) {
      ++fired;
      throw std::runtime_error("boom");  // names nothing: the Status must
    }
  }
};

class ThrowingStrategy final : public SearchStrategy {
 public:
  explicit ThrowingStrategy(Thrower& t) : t_(t), inner_(make_exhaustive_search()) {}
  std::string_view name() const noexcept override { return "throwing"; }
  Result<SearchResult> search(const ConfigSpace& space, const DeviceInfo& dev, const Objective& f,
                              const SearchBudget& budget, std::uint64_t seed) const override {
    t_.maybe(Cb::strategy);
    return inner_->search(space, dev, f, budget, seed);
  }

 private:
  Thrower& t_;
  std::unique_ptr<SearchStrategy> inner_;
};

// Whether the callback runs at all in this mode (search mode skips early_prune and the perf
// model; only search mode has a strategy).
bool exercised(Cb c, Mode m) {
  // A search runs early_prune and the perf model too: they choose its first point.
  if (c == Cb::strategy) return m == Mode::search;
  return true;
}

// Where the throw surfaces: as the caller's error, as a warning (off the caller's thread, or
// from the listener, whose exceptions are ignored), or either (background mode: dims runs
// both in the caller's launch of the nearest key's config and in the background tuning).
enum class Surfaces { error, warning, either };
Surfaces surfaces(Cb c, Mode m) {
  if (c == Cb::listener) return Surfaces::warning;
  if (m != Mode::background) return Surfaces::error;
  if (c == Cb::dims) return Surfaces::either;
  return c == Cb::heuristic || c == Cb::key_fn ? Surfaces::error : Surfaces::warning;
}

struct Case {
  Thrower thrower;
  SimRig rig;
  std::mutex mu;
  std::condition_variable cv;
  int reports = 0;
  std::vector<std::string> warnings;
  std::unique_ptr<Autotuner> tuner;

  Case(Mode mode) {
    rig.dev.set_cost_model(bm_model(3));
    KernelDef def = sim_kernel(bm_space({1, 2, 3, 4}));
    def.key = {KeySpec::custom("n", [this](std::int64_t v) {
      thrower.maybe(Cb::key_fn);
      return v;
    })};
    auto dims = def.dims;
    def.dims = [this, dims](const Config& c, ArgList args) {
      thrower.maybe(Cb::dims);
      return dims(c, args);
    };
    def.heuristics = {{"H", [this](ArgList, const DeviceInfo&) -> Value {
                         thrower.maybe(Cb::heuristic);
                         return std::int64_t{1};
                       }}};
    def.space.derive([this](Config&) { thrower.maybe(Cb::derive); });
    def.space.constrain("any", [this](const Config&, const DeviceInfo&) {
      thrower.maybe(Cb::constraint);
      return true;
    });
    def.early_prune = [this](std::vector<Config> c, ArgList) {
      thrower.maybe(Cb::early_prune);
      return c;
    };
    def.perf_model.estimate = [this](const Config&, ArgList, const DeviceInfo&) {
      thrower.maybe(Cb::perf_model);
      return 1.0;
    };
    def.perf_model.top_k = 4;
    def.pre_hook = [this](Device&, ArgList, const Config&) {
      thrower.maybe(Cb::pre_hook);
      return Status();
    };
    def.post_hook = [this](Device&, ArgList, const Config&, const Status&) {
      thrower.maybe(Cb::post_hook);
      return Status();
    };
    def.verify = [this](Device&, ArgList, const Config&) {
      thrower.maybe(Cb::verify);
      return Status();
    };
    if (mode == Mode::search) {
      def.search.strategy = std::make_shared<ThrowingStrategy>(thrower);
      def.search.budget.max_evaluations = 4;
    }
    auto opts = quiet_options();
    if (mode == Mode::background) opts.mode = TuningMode::background;
    opts.listener = [this](const TuningReport&) {
      // Counted once the listener is done, also when it throws.
      struct Heard {
        Case& c;
        ~Heard() {
          {
            std::lock_guard lock(c.mu);
            ++c.reports;
          }
          c.cv.notify_all();
        }
      } heard{*this};
      thrower.maybe(Cb::listener);
    };
    tuner = Autotuner::make(std::move(def), opts).value();
  }

  // Waits until `n` reports were heard (background tunings end with one).
  bool wait_reports(int n) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(20), [&] { return reports >= n; });
  }
  int report_count() {
    std::lock_guard lock(mu);
    return reports;
  }
};

void exercise(Cb cb, Mode mode, int threads) {
  const std::string cb_name = name_of(cb), mode_name = name_of(mode);
  CAPTURE(cb_name);
  CAPTURE(mode_name);
  CAPTURE(threads);
  Watchdog dog(std::string("callback ") + name_of(cb) + " in " + name_of(mode), 60);
  std::vector<std::string> warnings;
  std::mutex log_mu;
  auto old_sink = set_log_sink([&](LogLevel, std::string_view m) {
    std::lock_guard lock(log_mu);
    warnings.emplace_back(m);
  });
  Case c(mode);
  // Background mode borrows the nearest tuned key: tune one first, with nothing armed.
  if (mode == Mode::background) {
    REQUIRE(c.tuner->run(c.rig.dev, c.rig.args(50)).ok());
    REQUIRE(c.wait_reports(1));
  }
  const int before = c.report_count();
  c.thrower.arm(cb);
  auto args = c.rig.args(100);
  std::vector<Status> results(static_cast<std::size_t>(threads));
  {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back(
          [&, t] { results[static_cast<std::size_t>(t)] = c.tuner->run(c.rig.dev, args); });
    for (auto& th : pool) th.join();
  }
  int errors = 0;
  for (const Status& st : results) {
    if (st.ok()) continue;
    ++errors;
    CHECK(st.code() == StatusCode::callback_failed);
    CHECK_MESSAGE(st.message().find(name_of(cb)) != std::string::npos, st.to_string());
    CHECK(st.message().find("boom") != std::string::npos);
  }
  // A background tuning was started unless the key itself could not be built by any caller.
  const bool key_failed = cb == Cb::key_fn || cb == Cb::heuristic;
  if (mode == Mode::background && (threads > 1 || !key_failed)) CHECK(c.wait_reports(before + 1));
  // Exactly one call met the throw; no other caller inherited it.
  const bool fires = exercised(cb, mode);
  CHECK(c.thrower.fired.load() == (fires ? 1 : 0));
  // A warning from the background thread or the listener may follow its report by a moment.
  bool warned = false;
  for (int i = 0; i < 200 && !warned; ++i) {
    {
      std::lock_guard lock(log_mu);
      for (const auto& w : warnings) warned = warned || w.find(name_of(cb)) != std::string::npos;
    }
    if (!warned && fires && surfaces(cb, mode) != Surfaces::error)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    else
      break;
  }
  if (!fires) {
    CHECK(errors == 0);
  } else if (surfaces(cb, mode) == Surfaces::error) {
    CHECK(errors == 1);
  } else if (surfaces(cb, mode) == Surfaces::warning) {
    CHECK(errors == 0);
    CHECK_MESSAGE(warned, "no warning names " << cb_name);
  } else {
    CHECK(errors + (warned ? 1 : 0) >= 1);
    CHECK(errors <= 1);
  }
  // The key is not stuck in flight: later calls tune it (background: in the background).
  for (int attempt = 0; attempt < 3 && !c.tuner->best(c.rig.dev, args); ++attempt) {
    const int seen = c.report_count();
    REQUIRE(c.tuner->run(c.rig.dev, args).ok());
    if (mode == Mode::background) c.wait_reports(seen + 1);
  }
  CHECK(c.tuner->best(c.rig.dev, args).has_value());
  set_log_sink(old_sink);
}

}  // namespace

TEST_CASE("every callback throwing in turn: sync, background and search, 1 and 8 threads") {
  for (Mode mode : {Mode::sync, Mode::background, Mode::search})
    for (int threads : {1, 8})
      for (Cb cb : kAll) exercise(cb, mode, threads);
}

TEST_CASE("a definition error is shared by concurrent waiters; the key is tuned once") {
  SimRig rig;
  rig.dev.fail_compile_if([](const Config&) { return true; }, "no such instruction");
  rig.dev.compile_delay_if([](const Config&) { return true; }, 50);
  auto opts = quiet_options();
  std::atomic<int> tunings{0};
  opts.listener = [&](const TuningReport& r) {
    ++tunings;
    CHECK(r.status.code() == StatusCode::all_failed);
  };
  auto tuner = Autotuner::make(sim_kernel(bm_space({1, 2})), opts).value();
  Watchdog dog("definition error with 8 threads", 60);
  auto args = rig.args(100);
  std::vector<Status> results(8);
  std::vector<std::thread> pool;
  for (int t = 0; t < 8; ++t) pool.emplace_back([&, t] { results[t] = tuner->run(rig.dev, args); });
  for (auto& th : pool) th.join();
  for (const Status& st : results) {
    CHECK(st.code() == StatusCode::all_failed);
    CHECK(st.message().find("no such instruction") != std::string::npos);
  }
  // One tuning for the 8 callers that met it together (a caller arriving after it ended
  // tunes again, finding every variant already compiled: no compile is repeated).
  CHECK(tunings.load() <= 8);
  CHECK(rig.dev.compiles() == 2);
  CHECK(tuner->run(rig.dev, args).code() == StatusCode::all_failed);
}

TEST_CASE("a listener that blocks holds up no other key and no other caller") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(2));
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  auto opts = quiet_options();
  opts.listener = [&](const TuningReport& r) {
    if (r.key.find("n=100") == std::string::npos) return;
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return release; });
  };
  auto tuner = Autotuner::make(sim_kernel(bm_space({1, 2, 3})), opts).value();
  Watchdog dog("blocking listener", 60);
  auto a = rig.args(100);
  std::thread blocked([&] { CHECK(tuner->run(rig.dev, a).ok()); });
  // The key n=100 is published before its listener runs: another caller gets it at once.
  for (int i = 0; i < 2000 && !tuner->best(rig.dev, a); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  REQUIRE(tuner->best(rig.dev, a).has_value());
  CHECK(tuner->run(rig.dev, a).ok());
  CHECK(tuner->run(rig.dev, rig.args(200)).ok());  // another key tunes meanwhile
  {
    std::lock_guard lock(mu);
    release = true;
  }
  cv.notify_all();
  blocked.join();
}
