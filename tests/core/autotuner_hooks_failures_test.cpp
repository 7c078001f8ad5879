// Autotuner hooks (reset_to_zero, restore_value, pre/post, verify) with real buffer effects,
// and failures recorded per configuration while tuning goes on.
#include <doctest/doctest.h>

#include <cmath>
#include <mutex>

#include "acc_rig.hpp"
#include "sim_fixture.hpp"

using namespace tune;
using namespace tune::testing;

namespace {

bool is_execution(const std::string& e) {
  return e.rfind("rep ", 0) == 0 || e.rfind("launch ", 0) == 0;
}

// The config label of an execution event.
std::string exec_config(const std::string& e) { return e.substr(e.find(' ') + 1); }

DeviceHook recording_hook(std::string what) {
  return [what](Device& dev, ArgList, const Config& c) {
    static_cast<SimDevice&>(dev).record(what + " " + c.to_string());
    return Status();
  };
}

}  // namespace

TEST_CASE("Autotuner hooks: reset, restore, pre and post run around every timed launch") {
  AccRig rig;
  KernelDef def = acc_kernel(bm_space({32, 64, 128}));
  def.reset_to_zero = {"acc"};
  def.restore_value = {"x"};
  def.pre_hook = recording_hook("pre");
  def.post_hook = recording_hook("post");
  auto tuner = make_tuner(std::move(def));
  auto args = rig.args();
  REQUIRE(tuner->run(rig.dev, args).ok());

  auto ev = rig.dev.events();
  REQUIRE_FALSE(ev.empty());
  REQUIRE(ev.back() == "launch BM=64");  // the call's own launch, after tuning
  // Every execution while tuning: since the previous execution, acc was zeroed, x restored
  // and the pre hook ran for this config; before the next one, the post hook ran.
  std::size_t segment_start = 0;
  int executions = 0;
  std::string previous;
  for (std::size_t i = 0; i + 1 < ev.size(); ++i) {
    if (!is_execution(ev[i])) continue;
    ++executions;
    const std::string cfg = exec_config(ev[i]);
    std::vector<std::string> seg(ev.begin() + static_cast<std::ptrdiff_t>(segment_start),
                                 ev.begin() + static_cast<std::ptrdiff_t>(i));
    CAPTURE(ev[i]);
    CAPTURE(i);
    CHECK(has_event(seg, "fill acc"));
    CHECK(has_event(seg, "pre " + cfg));
    bool restored = false;
    for (const auto& e : seg) restored |= e.rfind("copy x<-", 0) == 0;
    CHECK(restored);
    if (!previous.empty()) CHECK(has_event(seg, "post " + previous));
    // The pre hook sees the buffers already reset: it comes after the fill.
    auto fill = std::find(seg.begin(), seg.end(), "fill acc");
    auto pre = std::find(seg.begin(), seg.end(), "pre " + cfg);
    CHECK(fill < pre);
    previous = cfg;
    segment_start = i + 1;
  }
  CHECK(executions >= 3 * 3);
  // The last timed launch's post hook ran before the call's own launch.
  std::vector<std::string> tail(ev.begin() + static_cast<std::ptrdiff_t>(segment_start),
                                ev.end() - 1);
  CHECK(has_event(tail, "post " + previous));
}

TEST_CASE("Autotuner hooks: timed runs see the caller's buffers; the call applies once") {
  AccRig rig;
  KernelDef def = acc_kernel(bm_space({32, 64, 128}));
  def.reset_to_zero = {"acc"};
  def.restore_value = {"x"};
  auto tuner = make_tuner(std::move(def));
  auto args = rig.args();
  REQUIRE(tuner->run(rig.dev, args).ok());

  REQUIRE(rig.seen.size() > 3);
  for (const auto& [x0, acc0] : rig.seen) {
    CHECK(x0 == 1.0f);    // restored before every execution
    CHECK(acc0 == 0.0f);  // zeroed before every execution
  }
  // Without a pre- or post-hook the resets travel in the timing plan: a batch of timed reps is
  // one time() call, and each of its reps is preceded by the fill and the restore.
  const auto ev = rig.dev.events();
  int batches = 0;
  for (std::size_t i = 0; i < ev.size(); ++i) {
    if (ev[i].rfind("time ", 0) != 0) continue;
    const int reps = std::stoi(ev[i].substr(ev[i].find(" reps=") + 6));
    if (reps > 1) ++batches;
    std::size_t j = i + 1;
    for (int r = 0; r < reps; ++r) {
      CAPTURE(ev[i]);
      CAPTURE(r);
      REQUIRE(j + 1 < ev.size());
      CHECK(ev[j] == "fill acc");
      CHECK(ev[j + 1].rfind("copy x<-", 0) == 0);
      j += 2;
      while (j < ev.size() && ev[j].rfind("rep ", 0) != 0) ++j;  // the flush
      ++j;
    }
  }
  CHECK(batches > 0);
  // After the call, the buffers hold exactly one launch's effect on the caller's data.
  CHECK(rig.dev.read<float>(*rig.acc) == std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8});
  CHECK(rig.dev.read<float>(*rig.x) == std::vector<float>{3, 5, 7, 9, 11, 13, 15, 17});

  // A hit launches once more with no hooks: the effects compound as the caller asked.
  rig.seen.clear();
  REQUIRE(tuner->run(rig.dev, args).ok());
  REQUIRE(rig.seen.size() == 1);
  CHECK(rig.dev.read<float>(*rig.acc) == std::vector<float>{4, 7, 10, 13, 16, 19, 22, 25});
}

TEST_CASE("Autotuner hooks: without reset/restore an in-place kernel compounds") {
  // The control experiment for the test above: the simulated body really mutates buffers.
  AccRig rig;
  auto tuner = make_tuner(acc_kernel(bm_space({32, 64})));
  REQUIRE(tuner->run(rig.dev, rig.args()).ok());
  CHECK(rig.dev.read<float>(*rig.x)[0] > 1000.0f);
}

TEST_CASE("Autotuner hooks: verify drops a configuration with wrong output") {
  AccRig rig;
  // BM=64 is the fastest but writes garbage into acc.
  rig.dev.set_kernel_body([](const Config& c, ArgList args, SimDevice&) {
    auto xv = SimDevice::view<float>(args[0]);
    auto av = SimDevice::view<float>(args[1]);
    for (std::size_t i = 0; i < xv.size(); ++i) av[i] = c.get_int("BM") == 64 ? -1.0f : xv[i];
  });
  KernelDef def = acc_kernel(bm_space({32, 64, 128}));
  int verified = 0;
  def.verify = [&](Device& dev, ArgList args, const Config& c) {
    ++verified;
    auto acc = static_cast<SimDevice&>(dev).read<float>(*args[1].buffer);
    if (acc[0] != 1.0f)
      return Status(StatusCode::wrong_output,
                    "acc[0] = " + std::to_string(acc[0]) + " for " + c.to_string());
    return Status();
  };
  auto tuner = make_tuner(std::move(def));
  REQUIRE(tuner->run(rig.dev, rig.args()).ok());
  CHECK(verified == 2);  // only what can win: BM=64 (the fastest, wrong), then BM=32
  auto report = tuner->last_report(rig.dev, rig.args());
  REQUIRE(report.has_value());
  CHECK(report->winner.to_string() == "BM=32");
  for (const auto& r : report->results) {
    if (r.config.get_int("BM") != 64) continue;
    CHECK(r.status.code() == StatusCode::wrong_output);
    CHECK(r.status.message().find("acc[0]") != std::string::npos);
    CHECK(std::isinf(r.stats.median));
  }
}

namespace {

// Tunes BM in {8, 16, 32, 64, 128} with the model's best at 64 after `inject` broke BM=64;
// checks that 64 is recorded with `code` and +inf, and that 32 (the next best) wins.
void check_dropped(const std::function<void(SimDevice&)>& inject, StatusCode code,
                   const std::string& reason_part) {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(64));
  inject(rig.dev);
  auto tuner = make_tuner(sim_kernel(bm_space({8, 16, 32, 64, 128})));
  std::vector<ArgValue> args = rig.args(1000);
  Status st = tuner->run(rig.dev, args);
  REQUIRE_MESSAGE(st.ok(), st.to_string());
  auto report = tuner->last_report(rig.dev, args);
  REQUIRE(report.has_value());
  CHECK(report->winner.to_string() == "BM=32");
  CHECK(report->results.size() == 5);
  int dropped = 0;
  for (const auto& r : report->results) {
    CAPTURE(r.config.to_string());
    if (r.config.get_int("BM") == 64) {
      ++dropped;
      CHECK(r.status.code() == code);
      CHECK(r.status.message().find(reason_part) != std::string::npos);
      CHECK(std::isinf(r.stats.median));
      CHECK(r.stats.median > 0);
    } else {
      CHECK(r.status.ok());
      CHECK(std::isfinite(r.stats.median));
    }
  }
  CHECK(dropped == 1);
  CHECK(rig.dev.events().back() == "launch BM=32");
}

bool is64(const Config& c) { return c.get_int("BM") == 64; }

}  // namespace

TEST_CASE("Autotuner failures: a compile error is recorded with the compiler log") {
  check_dropped([](SimDevice& d) { d.fail_compile_if(is64, "BM=64 needs too many registers"); },
                StatusCode::compile_error, "needs too many registers");
}

TEST_CASE("Autotuner failures: a resource limit is recorded") {
  check_dropped([](SimDevice& d) { d.out_of_resources_if(is64); }, StatusCode::out_of_resources,
                "resource");
}

TEST_CASE("Autotuner failures: a launch failure is recorded") {
  check_dropped([](SimDevice& d) { d.fail_launch_if(is64); }, StatusCode::launch_failed, "launch");
}

TEST_CASE("Autotuner failures: a timeout is recorded") {
  check_dropped([](SimDevice& d) { d.timeout_if(is64); }, StatusCode::timeout, "BM=64");
}

TEST_CASE("Autotuner failures: a modelled time over the timeout is a timeout") {
  SimRig rig;
  rig.dev.set_cost_model([](const Config& c, ArgList) {
    return c.get_int("BM") == 16 ? 5e6 : 1000.0 + static_cast<double>(c.get_int("BM"));
  });
  AutotunerOptions opts = quiet_options();
  opts.bench.timeout_ms = 1.0;  // BM=16 takes 5 ms
  auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64})), opts);
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  auto report = tuner->last_report(rig.dev, rig.args(1000));
  REQUIRE(report.has_value());
  CHECK(report->winner.to_string() == "BM=32");
  CHECK(report->results.front().status.code() == StatusCode::timeout);
}

TEST_CASE("Autotuner failures: when every config fails, the error lists each reason") {
  SimRig rig;
  rig.dev.fail_compile_if([](const Config& c) { return c.get_int("BM") == 8; }, "syntax error");
  rig.dev.fail_launch_if([](const Config& c) { return c.get_int("BM") == 16; });
  rig.dev.timeout_if([](const Config& c) { return c.get_int("BM") == 32; });
  rig.dev.out_of_resources_if([](const Config& c) { return c.get_int("BM") == 64; });
  KernelDef def = sim_kernel(bm_space({8, 16, 32, 64, 128}));
  def.verify = [](Device&, ArgList, const Config& c) {
    return c.get_int("BM") == 128 ? Status(StatusCode::wrong_output, "mismatch at 3") : Status();
  };
  int listener_calls = 0;
  AutotunerOptions opts = quiet_options();
  opts.listener = [&](const TuningReport&) { ++listener_calls; };
  auto tuner = make_tuner(std::move(def), opts);
  Status st = tuner->run(rig.dev, rig.args(1000));
  CHECK(st.code() == StatusCode::all_failed);
  const std::string& msg = st.message();
  INFO(msg);
  CHECK(msg.find("sim_kernel") != std::string::npos);
  // One line per config, each with its reason.
  auto line_of = [&](const std::string& cfg) {
    auto at = msg.find("{" + cfg + "}");
    REQUIRE(at != std::string::npos);
    return msg.substr(at, msg.find('\n', at) - at);
  };
  CHECK(line_of("BM=8").find("compile_error") != std::string::npos);
  CHECK(line_of("BM=8").find("syntax error") != std::string::npos);
  CHECK(line_of("BM=16").find("launch_failed") != std::string::npos);
  CHECK(line_of("BM=32").find("timeout") != std::string::npos);
  CHECK(line_of("BM=64").find("out_of_resources") != std::string::npos);
  CHECK(line_of("BM=128").find("wrong_output") != std::string::npos);
  CHECK(line_of("BM=128").find("mismatch at 3") != std::string::npos);
  CHECK_FALSE(tuner->best(rig.dev, rig.args(1000)).has_value());
  CHECK(rig.dev.launches() + rig.dev.timed_reps() >= 1);  // verify ran BM=128 once
}

TEST_CASE("Autotuner failures: a block over the device limit is out_of_resources") {
  ConfigSpace space;
  space.param("BM", {32}).param(std::string(kBlockX), {256, 4096});
  SimRig rig;
  auto tuner = make_tuner(sim_kernel(space));
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  auto report = tuner->last_report(rig.dev, rig.args(1000));
  REQUIRE(report.has_value());
  CHECK(report->winner.to_string() == "BM=32;block=256x1x1");
  REQUIRE(report->results.size() == 2);
  CHECK(report->results[1].status.code() == StatusCode::out_of_resources);
}

TEST_CASE("Autotuner: user mistakes are invalid_argument naming the culprit") {
  SUBCASE("unknown key argument") {
    KernelDef def = sim_kernel(bm_space({32}));
    def.key = {KeySpec::exact("m")};
    auto t = Autotuner::make(std::move(def), quiet_options());
    CHECK(t.status().code() == StatusCode::invalid_argument);
    CHECK(t.status().message().find("'m'") != std::string::npos);
  }
  SUBCASE("empty space") {
    auto t = Autotuner::make(sim_kernel(ConfigSpace{}), quiet_options());
    CHECK(t.status().code() == StatusCode::invalid_argument);
    CHECK(t.status().message().find("empty") != std::string::npos);
    CHECK(t.status().message().find("sim_kernel") != std::string::npos);
  }
  SUBCASE("empty domain") {
    ConfigSpace s;
    s.param("BM", {32}).param("BK", std::vector<Value>{});
    auto t = Autotuner::make(sim_kernel(s), quiet_options());
    CHECK(t.status().code() == StatusCode::invalid_argument);
    CHECK(t.status().message().find("BK") != std::string::npos);
  }
  SUBCASE("unknown hook argument") {
    KernelDef def = sim_kernel(bm_space({32}));
    def.reset_to_zero = {"out"};
    auto t = Autotuner::make(std::move(def), quiet_options());
    CHECK(t.status().code() == StatusCode::invalid_argument);
    CHECK(t.status().message().find("'out'") != std::string::npos);
  }
  SUBCASE("hook on a scalar") {
    KernelDef def = sim_kernel(bm_space({32}));
    def.restore_value = {"n"};
    auto t = Autotuner::make(std::move(def), quiet_options());
    CHECK(t.status().code() == StatusCode::invalid_argument);
    CHECK(t.status().message().find("'n'") != std::string::npos);
  }
  SUBCASE("no dims") {
    KernelDef def = sim_kernel(bm_space({32}));
    def.dims = nullptr;
    CHECK(Autotuner::make(std::move(def), quiet_options()).status().code() ==
          StatusCode::invalid_argument);
  }
  SUBCASE("no source") {
    KernelDef def = sim_kernel(bm_space({32}));
    def.sources.clear();
    CHECK(Autotuner::make(std::move(def), quiet_options()).status().code() ==
          StatusCode::invalid_argument);
  }
}

TEST_CASE("Autotuner: wrong arguments at call time are invalid_argument") {
  SimRig rig;
  auto tuner = make_tuner(sim_kernel(bm_space({32, 64})));
  SUBCASE("wrong count") {
    std::vector<ArgValue> args = {ArgValue::buf(*rig.x, ElemType::f32, 16)};
    Status st = tuner->run(rig.dev, args);
    CHECK(st.code() == StatusCode::invalid_argument);
    CHECK(st.message().find("expected 2 arguments, got 1") != std::string::npos);
  }
  SUBCASE("wrong scalar type") {
    Status st = tuner->run(rig.dev, {ArgValue::buf(*rig.x, ElemType::f32, 16), ArgValue(1.5)});
    CHECK(st.code() == StatusCode::invalid_argument);
    CHECK(st.message().find("'n'") != std::string::npos);
  }
  SUBCASE("wrong buffer element type") {
    Status st = tuner->run(rig.dev, {ArgValue::buf(*rig.x, ElemType::f16, 16), ArgValue(16)});
    CHECK(st.code() == StatusCode::invalid_argument);
    CHECK(st.message().find("'x'") != std::string::npos);
  }
  SUBCASE("scalar for a buffer") {
    Status st = tuner->run(rig.dev, {ArgValue(16), ArgValue(16)});
    CHECK(st.code() == StatusCode::invalid_argument);
    CHECK(st.message().find("'x'") != std::string::npos);
  }
  CHECK(rig.dev.compiles() == 0);
  CHECK(rig.dev.launches() == 0);
}

TEST_CASE("Autotuner: a device without a source in its language is an error") {
  SimRig rig;
  KernelDef def = sim_kernel(bm_space({32, 64}));
  def.sources[0].language = Language::glsl;
  auto tuner = make_tuner(std::move(def));
  Status st = tuner->run(rig.dev, rig.args(1000));
  CHECK_FALSE(st.ok());
  CHECK(st.message().find("simulated") != std::string::npos);
  CHECK(rig.dev.compiles() == 0);
}
