// Promises that must hold when things go wrong or options are extreme: Triton's reset/restore
// semantics in every mode, hooks paired through failures, budgets and options that mean what
// they say, misuse refused with a message naming the culprit, and a key whose best
// configuration is already stored.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <thread>

#include "acc_rig.hpp"
#include "scoped_env.hpp"
#include "sim_fixture.hpp"
#include "timing_policy.hpp"
#include "watchdog.hpp"

using namespace tune;
using namespace tune::testing;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const std::vector<float> kX0 = {1, 2, 3, 4, 5, 6, 7, 8};
const std::vector<float> kXAfterOne = {3, 5, 7, 9, 11, 13, 15, 17};

// acc pre-filled with 7: a leftover that must not show through.
void prefill(AccRig& rig) {
  const std::vector<float> sevens(AccRig::kN, 7.0f);
  REQUIRE(rig.dev.upload(*rig.acc, sevens.data(), sevens.size() * sizeof(float)).ok());
}

// A strategy that ignores its budget: evaluates every point it can, three times over.
class GreedyStrategy final : public SearchStrategy {
 public:
  std::string_view name() const noexcept override { return "greedy"; }
  Result<SearchResult> search(const ConfigSpace& space, const DeviceInfo&, const Objective& f,
                              const SearchBudget&, std::uint64_t) const override {
    SearchResult r;
    for (int round = 0; round < 3; ++round)
      for (std::uint64_t i = 0; i < space.raw_size(); ++i) {
        r.best_value = f(space.at(i));
        ++r.evaluations;
      }
    r.best_value = -1;  // nonsense: the Autotuner must not trust it
    return r;
  }
};

}  // namespace

TEST_CASE(
    "reset_to_zero and restore_value: after the tuning call, exactly one launch on zeroed "
    "outputs and the caller's inputs, in every mode") {
  struct Variant {
    const char* name;
    std::function<void(KernelDef&, AutotunerOptions&)> set;
  };
  const Variant variants[] = {
      {"racing", [](KernelDef&, AutotunerOptions&) {}},
      {"exhaustive", [](KernelDef&, AutotunerOptions& o) { o.bench.racing = false; }},
      {"fixed counts",
       [](KernelDef&, AutotunerOptions& o) {
         o.bench.warmup_count = 2;
         o.bench.rep_count = 5;
       }},
      {"budgeted", [](KernelDef&, AutotunerOptions& o) { o.tuning_budget_ms = 5000; }},
      {"background (first key: tuned in the call)",
       [](KernelDef&, AutotunerOptions& o) { o.mode = TuningMode::background; }},
      {"verify",
       [](KernelDef& d, AutotunerOptions&) {
         d.verify = [](Device&, ArgList, const Config&) { return Status(); };
       }},
      {"search",
       [](KernelDef& d, AutotunerOptions&) {
         d.search.strategy = make_search("random");
         d.search.budget.max_evaluations = 2;
       }},
  };
  for (const auto& v : variants) {
    CAPTURE(std::string(v.name));
    AccRig rig;
    prefill(rig);
    KernelDef def = acc_kernel(bm_space({32, 64, 128}));
    def.reset_to_zero = {"acc"};
    def.restore_value = {"x"};
    auto opts = quiet_options();
    v.set(def, opts);
    auto tuner = make_tuner(std::move(def), opts);
    auto args = rig.args();
    REQUIRE(tuner->run(rig.dev, args).ok());
    CHECK(rig.dev.read<float>(*rig.acc) == kX0);  // 7 + ... would show as 8, 9, ...
    CHECK(rig.dev.read<float>(*rig.x) == kXAfterOne);
  }
}

TEST_CASE("tune() leaves every buffer as the caller had it") {
  AccRig rig;
  prefill(rig);
  KernelDef def = acc_kernel(bm_space({32, 64, 128}));
  def.reset_to_zero = {"acc"};
  def.restore_value = {"x"};
  auto tuner = make_tuner(std::move(def));
  REQUIRE(tuner->tune(rig.dev, rig.args()).ok());
  CHECK(rig.dev.read<float>(*rig.acc) == std::vector<float>(AccRig::kN, 7.0f));
  CHECK(rig.dev.read<float>(*rig.x) == kX0);
}

TEST_CASE("pre and post hooks are strictly paired, and the post hook hears every failure") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(4));
  rig.dev.fail_launch_if([](const Config& c) { return c.get_int("BM") == 2; });
  rig.dev.timeout_if([](const Config& c) { return c.get_int("BM") == 3; });
  KernelDef def = sim_kernel(bm_space({1, 2, 3, 4, 5}));
  std::mutex mu;
  std::map<std::string, int> pre, post;
  std::map<std::string, std::vector<StatusCode>> heard;
  def.pre_hook = [&](Device&, ArgList, const Config& c) {
    std::lock_guard lock(mu);
    ++pre[c.to_string()];
    if (c.get_int("BM") == 5) return Status(StatusCode::invalid_argument, "pre-hook refuses BM=5");
    return Status();
  };
  def.post_hook = [&](Device&, ArgList, const Config& c, const Status& outcome) {
    std::lock_guard lock(mu);
    ++post[c.to_string()];
    heard[c.to_string()].push_back(outcome.code());
    return Status();
  };
  def.verify = [](Device&, ArgList, const Config&) { return Status(); };
  auto tuner = make_tuner(std::move(def));
  REQUIRE(tuner->run(rig.dev, rig.args(100)).ok());
  CHECK(pre == post);  // every pre has its post, the last one too
  CHECK(pre.size() == 5);
  auto has = [&](const char* cfg, StatusCode code) {
    const auto& v = heard[cfg];
    return std::find(v.begin(), v.end(), code) != v.end();
  };
  CHECK(has("BM=2", StatusCode::launch_failed));
  CHECK(has("BM=3", StatusCode::timeout));
  CHECK(has("BM=5", StatusCode::invalid_argument));
  CHECK(has("BM=4", StatusCode::ok));
  auto report = tuner->last_report(rig.dev, rig.args(100)).value();
  CHECK(report.winner.get_int("BM") == 4);
}

TEST_CASE("options are validated in make, naming the option") {
  struct Bad {
    const char* expect;
    std::function<void(KernelDef&, AutotunerOptions&)> set;
  };
  const Bad bad[] = {
      {"tuning_budget_ms", [](KernelDef&, AutotunerOptions& o) { o.tuning_budget_ms = -1; }},
      {"tuning_budget_ms", [](KernelDef&, AutotunerOptions& o) { o.tuning_budget_ms = kNaN; }},
      {"warmup_ms", [](KernelDef&, AutotunerOptions& o) { o.bench.warmup_ms = kNaN; }},
      {"warmup_ms", [](KernelDef&, AutotunerOptions& o) { o.bench.warmup_ms = -5; }},
      {"rep_ms", [](KernelDef&, AutotunerOptions& o) { o.bench.rep_ms = kNaN; }},
      {"rep_ms",
       [](KernelDef&, AutotunerOptions& o) {
         o.bench.rep_ms = std::numeric_limits<double>::infinity();
       }},
      {"timeout_ms", [](KernelDef&, AutotunerOptions& o) { o.bench.timeout_ms = 0; }},
      {"race_confidence",
       [](KernelDef&, AutotunerOptions& o) { o.bench.expert.race_confidence = 1.5; }},
      {"min_reps", [](KernelDef&, AutotunerOptions& o) { o.bench.expert.min_reps = 0; }},
      {"max_reps", [](KernelDef&, AutotunerOptions& o) { o.bench.expert.max_reps = 2; }},
      {"rep_count", [](KernelDef&, AutotunerOptions& o) { o.bench.rep_count = -1; }},
      {"warmup_count", [](KernelDef&, AutotunerOptions& o) { o.bench.warmup_count = 3; }},
      {"top_fraction",
       [](KernelDef& d, AutotunerOptions&) {
         d.perf_model.estimate = [](const Config&, ArgList, const DeviceInfo&) { return 1.0; };
         d.perf_model.top_fraction = 1.5;
       }},
      {"top_k",
       [](KernelDef& d, AutotunerOptions&) {
         d.perf_model.estimate = [](const Config&, ArgList, const DeviceInfo&) { return 1.0; };
         d.perf_model.top_k = -2;
       }},
      {"search.budget.max_ms",
       [](KernelDef& d, AutotunerOptions&) {
         d.search.strategy = make_search("random");
         d.search.budget.max_ms = kNaN;
       }},
  };
  for (const auto& b : bad) {
    CAPTURE(std::string(b.expect));
    KernelDef def = sim_kernel(bm_space({1, 2}));
    auto opts = quiet_options();
    b.set(def, opts);
    auto t = Autotuner::make(std::move(def), opts);
    REQUIRE_FALSE(t.ok());
    CHECK(t.status().code() == StatusCode::invalid_argument);
    CHECK_MESSAGE(t.status().message().find(b.expect) != std::string::npos, t.status().message());
  }
}

TEST_CASE("the Autotuner enforces a strategy's evaluation budget and keeps its own books") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(7));
  KernelDef def = sim_kernel(bm_space({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  def.search.strategy = std::make_shared<GreedyStrategy>();
  def.search.budget.max_evaluations = 4;
  auto tuner = make_tuner(std::move(def));
  REQUIRE(tuner->run(rig.dev, rig.args(100)).ok());
  auto report = tuner->last_report(rig.dev, rig.args(100)).value();
  CHECK(report.results.size() == 4);  // not 30
  // The winner is the best of what was measured, not the strategy's claim: by the winner
  // rule, the canonical first (Config text) of those within tie_tolerance of the fastest.
  double best = std::numeric_limits<double>::infinity();
  for (const auto& r : report.results) best = std::min(best, r.stats.median);
  const double bound = best * (1.0 + TimingPolicy{}.tie_tolerance);
  std::string first;
  for (const auto& r : report.results)
    if (r.stats.median <= bound && (first.empty() || r.config.to_string() < first))
      first = r.config.to_string();
  CHECK(report.winner.to_string() == first);
}

TEST_CASE("built-in strategies make progress on a space whose neighbours are all rejected") {
  // BM == BN: moving one dimension by one step never lands on an accepted point.
  ConfigSpace space;
  space.param("BM", {1, 2, 4, 8, 16, 32}).param("BN", {1, 2, 4, 8, 16, 32});
  space.constrain("square", [](const Config& c, const DeviceInfo&) {
    return c.get_int("BM") == c.get_int("BN");
  });
  for (const char* name : {"annealing", "genetic", "random", "exhaustive"}) {
    CAPTURE(std::string(name));
    int evaluations = 0;
    Objective f = [&](const Config& c) {
      ++evaluations;
      return std::fabs(static_cast<double>(c.get_int("BM")) - 8.0) + 1.0;
    };
    SearchBudget budget;
    budget.max_evaluations = 5;
    auto r = make_search(name)->search(space, SimDevice::default_info(), f, budget, 42);
    REQUIRE(r.ok());
    CHECK(evaluations == 5);
    CHECK(r->accepted_points == 6);
  }
  // Asking for more distinct samples than the space holds is capped at the accepted points.
  int evaluations = 0;
  Objective f = [&](const Config&) { return 1.0 + evaluations++; };
  SearchBudget budget;
  budget.max_evaluations = 100;
  auto r = make_search("random")->search(space, SimDevice::default_info(), f, budget, 1);
  REQUIRE(r.ok());
  CHECK(evaluations == 6);
}

TEST_CASE("fixed repetition counts: exactly the launches asked for") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(2));
  auto opts = quiet_options();
  opts.bench.racing = false;
  opts.bench.warmup_count = 3;
  opts.bench.rep_count = 7;
  auto tuner = make_tuner(sim_kernel(bm_space({1, 2, 3})), opts);
  REQUIRE(tuner->tune(rig.dev, rig.args(100)).ok());
  auto ev = rig.dev.events();
  for (const char* cfg : {"BM=1", "BM=2", "BM=3"}) {
    CAPTURE(std::string(cfg));
    CHECK(events_with(ev, std::string("launch ") + cfg).size() == 3);
    CHECK(events_with(ev, std::string("rep ") + cfg).size() == 7);
  }
}

TEST_CASE("the report accounts for the wall time") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(2));
  rig.dev.compile_delay_if([](const Config&) { return true; }, 20);
  KernelDef def = sim_kernel(bm_space({1, 2, 3}));
  def.verify = [](Device&, ArgList, const Config&) { return Status(); };
  auto tuner = make_tuner(std::move(def));
  REQUIRE(tuner->run(rig.dev, rig.args(100)).ok());
  auto r = tuner->last_report(rig.dev, rig.args(100)).value();
  const TuningTimes& t = r.times;
  const double sum =
      t.candidates + t.store + t.compile + t.verify + t.benchmark + t.strategy + t.overhead;
  CHECK(sum == doctest::Approx(r.wall_ms).epsilon(1e-9).scale(0));
  CHECK(t.overhead >= 0);
  CHECK(t.compile > 0);  // the tuning thread waited for the 20 ms compiles
  CHECK(t.benchmark > 0);
  CHECK(t.verify > 0);
  CHECK(r.to_string().find("compile wait") != std::string::npos);
}

TEST_CASE("dims() that launches nothing is refused for that configuration, never chosen") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(1));  // BM=1 would look fastest
  KernelDef def = sim_kernel(bm_space({1, 2, 3}));
  auto dims = def.dims;
  def.dims = [dims](const Config& c, ArgList args) {
    LaunchDims d = dims(c, args);
    if (c.get_int("BM") == 1) d.grid = {0, 1, 1};
    return d;
  };
  auto tuner = make_tuner(std::move(def));
  REQUIRE(tuner->tune(rig.dev, rig.args(100)).ok());
  auto r = tuner->last_report(rig.dev, rig.args(100)).value();
  CHECK(r.winner.get_int("BM") != 1);
  for (const auto& res : r.results) {
    if (res.config.get_int("BM") != 1) continue;
    CHECK(res.status.code() == StatusCode::invalid_argument);
    CHECK(res.status.message().find("zero dimension") != std::string::npos);
  }
}

TEST_CASE("early_prune output is checked against the space, naming the culprit") {
  SimRig rig;
  for (int which = 0; which < 2; ++which) {
    KernelDef def = sim_kernel(bm_space({1, 2, 3}));
    def.early_prune = [which](std::vector<Config> c, ArgList) {
      Config bad;
      if (which == 0)
        bad.set("BM", std::int64_t{99});  // outside the domain
      else
        bad.set("BM", std::int64_t{1}).set("SNEAKY", std::int64_t{1});  // undeclared
      c.push_back(bad);
      return c;
    };
    auto tuner = make_tuner(std::move(def));
    Status st = tuner->run(rig.dev, rig.args(100));
    CHECK(st.code() == StatusCode::invalid_argument);
    CHECK(st.message().find("early_prune returned config") != std::string::npos);
    CHECK(st.message().find(which == 0 ? "BM" : "SNEAKY") != std::string::npos);
  }
}

TEST_CASE("a NaN or infinite float key argument is refused, naming it") {
  SimRig rig;
  KernelDef def = sim_kernel(bm_space({1, 2}));
  def.signature = KernelSignature()
                      .buffer("x", ElemType::f32)
                      .scalar("n", ElemType::i32)
                      .scalar("alpha", ElemType::f32);
  def.key = {KeySpec::exact("alpha")};
  auto tuner = make_tuner(std::move(def));
  for (float bad :
       {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    std::vector<ArgValue> args = {ArgValue::buf(*rig.x, ElemType::f32, 1024),
                                  ArgValue(std::int32_t{100}), ArgValue(bad)};
    Status st = tuner->run(rig.dev, args);
    CHECK(st.code() == StatusCode::invalid_argument);
    CHECK(st.message().find("'alpha'") != std::string::npos);
  }
  std::vector<ArgValue> ok = {ArgValue::buf(*rig.x, ElemType::f32, 1024),
                              ArgValue(std::int32_t{100}), ArgValue(1.5f)};
  CHECK(tuner->run(rig.dev, ok).ok());
}

TEST_CASE("boolean environment flags parse alike and warn once on nonsense") {
  SimRig rig;
  for (const char* yes : {"1", "true", "TRUE", "yes", "On", " on "}) {
    CAPTURE(std::string(yes));
    ScopedEnv env("TUNE_DISABLE", yes);
    auto tuner = make_tuner(sim_kernel(bm_space({1, 2})), [] {
      auto o = quiet_options();
      o.disable.reset();
      return o;
    }());
    REQUIRE(tuner->run(rig.dev, rig.args(100)).ok());
    CHECK(tuner->last_report(rig.dev, rig.args(100))->source == ResultSource::disabled);
  }
  std::vector<std::string> warnings;
  auto old = set_log_sink([&](LogLevel, std::string_view m) { warnings.emplace_back(m); });
  {
    ScopedEnv env("TUNE_DISABLE", "maybe");
    for (int i = 0; i < 3; ++i) {
      auto o = quiet_options();
      o.disable.reset();
      auto tuner = make_tuner(sim_kernel(bm_space({1, 2})), o);
      REQUIRE(tuner->run(rig.dev, rig.args(100)).ok());
      CHECK(tuner->last_report(rig.dev, rig.args(100))->source == ResultSource::tuned);
    }
  }
  set_log_sink(old);
  int named = 0;
  for (const auto& w : warnings) named += w.find("TUNE_DISABLE='maybe'") != std::string::npos;
  CHECK(named == 1);
}

TEST_CASE("destroying the Autotuner while another thread tunes waits for that call") {
  Watchdog dog("destroy while tuning", 60);
  SimRig rig;
  rig.dev.set_cost_model(bm_model(2));
  rig.dev.compile_delay_if([](const Config&) { return true; }, 200);
  auto tuner = make_tuner(sim_kernel(bm_space({1, 2, 3})));
  Autotuner* raw = tuner.get();
  std::atomic<bool> started{false};
  Status result(StatusCode::internal, "not run");
  std::thread caller([&] {
    started = true;
    result = raw->run(rig.dev, rig.args(100));
  });
  while (!started) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  tuner.reset();  // waits for the call in flight (ASan: no use after free)
  caller.join();
  // The call either finished its tuning first or was told the tuner is going away.
  CHECK((result.ok() || result.code() == StatusCode::unavailable));
}

TEST_CASE("a key whose best configuration is already stored: compiled and launched") {
  // The flows that leave a key partly stored: a configuration added to the space, a budgeted
  // run, a row dropped by validation, a deleted row. In each the stored winner was never
  // compiled by this process.
  SimRig rig;
  rig.dev.set_cost_model(bm_model(4));  // timed configs cost >= 1000 ns
  auto store = std::make_shared<MemoryStore>();
  auto opts = quiet_options();
  opts.store = store;
  auto args = rig.args(100);
  {
    // A first process tuned BM in {1, 2}.
    auto first = make_tuner(sim_kernel(bm_space({1, 2})), opts);
    REQUIRE(first->run(rig.dev, args).ok());
  }
  // Forge the stored BM=1 row to be the fastest of all (as a faster GPU state would have).
  auto rows = store->all_rows();
  REQUIRE(rows.size() == 2);
  auto key = store->last_key;
  StoredResult fast = stored_ok(Config().set("BM", std::int64_t{1}), 10.0);
  store->save(key, std::span<const StoredResult>(&fast, 1));

  SUBCASE("a configuration added to the space") {
    SimRig fresh;  // a new process: nothing compiled
    fresh.dev.set_cost_model(bm_model(4));
    auto tuner = make_tuner(sim_kernel(bm_space({1, 2, 3})), opts);
    REQUIRE(tuner->run(fresh.dev, fresh.args(100)).ok());
    CHECK(best_of(*tuner, fresh.dev, fresh.args(100)) == "BM=1");
    CHECK(has_event(fresh.dev.events(), "compile BM=1"));
    CHECK(has_event(fresh.dev.events(), "launch BM=1"));
  }
  SUBCASE("a deleted row, then the stored winner no longer compiles") {
    SimRig fresh;
    fresh.dev.set_cost_model(bm_model(4));
    fresh.dev.fail_compile_if([](const Config& c) { return c.get_int("BM") == 1; }, "gone");
    auto tuner = make_tuner(sim_kernel(bm_space({1, 2, 3})), opts);
    REQUIRE(tuner->run(fresh.dev, fresh.args(100)).ok());
    CHECK(best_of(*tuner, fresh.dev, fresh.args(100)) != "BM=1");
    // The failure is stored, so later processes do not pick it either.
    bool stored_failure = false;
    for (const auto& r : store->all_rows())
      stored_failure =
          stored_failure || (r.config == "BM=1" && r.status == StatusCode::compile_error);
    CHECK(stored_failure);
  }
  SUBCASE("a stored row dropped by validation (damaged text)") {
    StoredResult broken = stored_ok(Config().set("BM", std::int64_t{2}), 5.0);
    broken.config = "BM=2,BOGUS=";  // fails to parse: dropped with a warning, BM=2 retimed
    store->save(key, std::span<const StoredResult>(&broken, 1));
    SimRig fresh;
    fresh.dev.set_cost_model(bm_model(4));
    auto old = set_log_sink([](LogLevel, std::string_view) {});
    auto tuner = make_tuner(sim_kernel(bm_space({1, 2, 3})), opts);
    REQUIRE(tuner->run(fresh.dev, fresh.args(100)).ok());
    set_log_sink(old);
    CHECK(best_of(*tuner, fresh.dev, fresh.args(100)) == "BM=1");
    CHECK(has_event(fresh.dev.events(), "launch BM=1"));
  }
  SUBCASE("every configuration stored, the winner never compiled here") {
    SimRig fresh;
    fresh.dev.set_cost_model(bm_model(4));
    auto tuner = make_tuner(sim_kernel(bm_space({1, 2})), opts);
    REQUIRE(tuner->run(fresh.dev, fresh.args(100)).ok());
    CHECK(tuner->last_report(fresh.dev, fresh.args(100))->source == ResultSource::disk);
    CHECK(has_event(fresh.dev.events(), "launch BM=1"));
  }
}

TEST_CASE("a budgeted run followed by later processes: every one of them tunes") {
  auto store = std::make_shared<MemoryStore>();
  auto opts = quiet_options();
  opts.store = store;
  opts.tuning_budget_ms = 100;
  for (int process = 0; process < 5; ++process) {
    CAPTURE(process);
    SimRig rig;  // a new process each time: nothing compiled yet
    rig.dev.set_cost_model(bm_model(1));
    // BM=1 (the fastest) compiles slowly: the first processes time the others; whoever
    // stores BM=1's timing, later processes must compile it to launch it.
    rig.dev.compile_delay_if(
        [process](const Config& c) { return process == 0 && c.get_int("BM") == 1; }, 400);
    auto tuner = make_tuner(sim_kernel(bm_space({1, 2, 3, 4})), opts);
    REQUIRE(tuner->run(rig.dev, rig.args(100)).ok());
    CHECK(tuner->best(rig.dev, rig.args(100)).has_value());
  }
  // By now every configuration was timed once and BM=1 won.
  auto rig = SimRig();
  auto tuner = make_tuner(sim_kernel(bm_space({1, 2, 3, 4})), opts);
  REQUIRE(tuner->run(rig.dev, rig.args(100)).ok());
  CHECK(best_of(*tuner, rig.dev, rig.args(100)) == "BM=1");
}
