// The misuse suite: one small program run per misuse (`misuse <case>`), each in its own
// process under CTest with a time limit, in the release and the ASan+UBSan builds. A case
// passes when it ends with a clear error (the expected code, a message naming the culprit) or
// a correct result; a crash, std::terminate, a hang (CTest's TIMEOUT) or a sanitizer report
// fails it. `misuse --list` prints the cases (CMake registers one test each).
#include <chrono>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>

#include "tune/testing/quick_options.hpp"
#include "tune/testing/sim_device.hpp"
#include "tune/tune.hpp"

using namespace tune;
using namespace tune::testing;

namespace {

// What a case ended with.
struct Outcome {
  Outcome(Status st, std::string text = {}, StatusCode code = StatusCode::ok)
      : status(std::move(st)), want_text(std::move(text)), want(code) {}
  Status status;
  std::string want_text;  // must appear in the message
  StatusCode want;
};

KernelDef kernel() {
  KernelDef def;
  def.name = "misuse_kernel";
  def.sources = {{Language::simulated, "sim_kernel", "// simulated"}};
  def.signature.buffer("x", ElemType::f32)
      .scalar("n", ElemType::i32)
      .scalar("alpha", ElemType::f32);
  def.space.param("BM", {1, 2, 4});
  def.key = {KeySpec::exact("n")};
  def.dims = [](const Config& c, ArgList) {
    return LaunchDims{{static_cast<std::uint32_t>(c.get_int("BM")), 1, 1}, {64, 1, 1}, 0};
  };
  return def;
}

AutotunerOptions options() { return quiet_options(); }

struct Rig {
  SimDevice dev;
  Buffer x = dev.alloc(1024 * sizeof(float)).value();
  std::vector<ArgValue> args(std::int32_t n = 100, float alpha = 1.0f) {
    return {ArgValue::buf(*x, ElemType::f32, 256), ArgValue(n), ArgValue(alpha)};
  }
};

Outcome run_with(KernelDef def, AutotunerOptions opts, float alpha = 1.0f) {
  Rig rig;
  auto tuner = Autotuner::make(std::move(def), std::move(opts));
  if (!tuner.ok()) return {tuner.status()};
  return {(*tuner)->run(rig.dev, rig.args(100, alpha))};
}

Outcome make_only(KernelDef def, AutotunerOptions opts) {
  auto tuner = Autotuner::make(std::move(def), std::move(opts));
  return {tuner.ok() ? Status() : tuner.status()};
}

const std::map<std::string, std::function<Outcome()>>& cases() {
  static const std::map<std::string, std::function<Outcome()>> all = {
      {"heuristic_throws",
       [] {
         auto d = kernel();
         d.heuristics = {{"H", [](ArgList, const DeviceInfo&) -> Value {
                            throw std::runtime_error("no heuristic today");
                          }}};
         auto o = run_with(std::move(d), options());
         o.want = StatusCode::callback_failed;
         o.want_text = "heuristic 'H'";
         return o;
       }},
      {"key_function_throws",
       [] {
         auto d = kernel();
         d.key = {KeySpec::custom("n", [](std::int64_t) -> std::int64_t { throw 42; })};
         auto o = run_with(std::move(d), options());
         o.want = StatusCode::callback_failed;
         o.want_text = "key function of 'n'";
         return o;
       }},
      {"dims_throws",
       [] {
         auto d = kernel();
         d.dims = [](const Config&, ArgList) -> LaunchDims { throw std::logic_error("dims"); };
         auto o = run_with(std::move(d), options());
         o.want = StatusCode::callback_failed;
         o.want_text = "dims for config";
         return o;
       }},
      {"dims_throws_on_a_hit",
       [] {
         Rig rig;
         auto d = kernel();
         auto calls = std::make_shared<int>(0);
         auto dims = d.dims;
         d.dims = [calls, dims](const Config& c, ArgList a) {
           if (++*calls > 50) throw std::logic_error("late");
           return dims(c, a);
         };
         auto tuner = Autotuner::make(std::move(d), options()).value();
         Status st;
         // Each call's alpha differs: the same key, but not the arguments the thread's memo
         // holds launch dims for (a repeat of the previous arguments calls no dims at all:
         // KernelDef::dims is promised pure), so every call asks dims again.
         for (int i = 0; i < 100 && st.ok(); ++i)
           st = tuner->run(rig.dev, rig.args(100, static_cast<float>(i)));
         return Outcome{st, "dims for config", StatusCode::callback_failed};
       }},
      {"background_callback_throws",
       [] {
         Rig rig;
         auto d = kernel();
         d.pre_hook = [](Device&, ArgList args, const Config&) {
           if (args[1].as_int() == 200) throw std::runtime_error("pre-hook");
           return Status();
         };
         auto opts = options();
         opts.mode = TuningMode::background;
         auto tuner = Autotuner::make(std::move(d), opts).value();
         if (Status st = tuner->run(rig.dev, rig.args(100)); !st.ok()) return Outcome{st};
         // Launches the nearest key at once; its background tuning fails and is logged.
         Status st = tuner->run(rig.dev, rig.args(200));
         tuner.reset();  // joins the background thread: no terminate
         return Outcome{st};
       }},
      {"destroy_while_tuning",
       [] {
         Rig rig;
         rig.dev.compile_delay_if([](const Config&) { return true; }, 200);
         auto tuner = Autotuner::make(kernel(), options()).value();
         Autotuner* raw = tuner.get();
         Status st(StatusCode::internal, "not run");
         std::thread t([&] { st = raw->run(rig.dev, rig.args()); });
         std::this_thread::sleep_for(std::chrono::milliseconds(50));
         tuner.reset();
         t.join();
         if (st.code() == StatusCode::unavailable) st = Status();
         return Outcome{st};
       }},
      {"zero_grid_everywhere",
       [] {
         // An empty problem: it launches nothing and succeeds (ResultSource::empty).
         auto d = kernel();
         d.dims = [](const Config&, ArgList) { return LaunchDims{{0, 1, 1}, {64, 1, 1}, 0}; };
         return Outcome{run_with(std::move(d), options()).status};
       }},
      {"early_prune_invents_a_config",
       [] {
         auto d = kernel();
         d.early_prune = [](std::vector<Config>, ArgList) {
           return std::vector<Config>{Config().set("BM", std::int64_t{3})};
         };
         return Outcome{run_with(std::move(d), options()).status, "early_prune returned config",
                        StatusCode::invalid_argument};
       }},
      {"nan_warmup",
       [] {
         auto o = options();
         o.bench.warmup_ms = std::numeric_limits<double>::quiet_NaN();
         return Outcome{make_only(kernel(), o).status, "warmup_ms", StatusCode::invalid_argument};
       }},
      {"nan_repetitions",
       [] {
         auto o = options();
         o.bench.rep_ms = std::numeric_limits<double>::quiet_NaN();
         return Outcome{make_only(kernel(), o).status, "rep_ms", StatusCode::invalid_argument};
       }},
      {"negative_budget",
       [] {
         auto o = options();
         o.tuning_budget_ms = -1;
         return Outcome{make_only(kernel(), o).status, "tuning_budget_ms",
                        StatusCode::invalid_argument};
       }},
      {"nan_float_key",
       [] {
         auto d = kernel();
         d.key = {KeySpec::exact("alpha")};
         return Outcome{
             run_with(std::move(d), options(), std::numeric_limits<float>::quiet_NaN()).status,
             "'alpha'", StatusCode::invalid_argument};
       }},
      {"listener_throws",
       [] {
         auto o = options();
         o.listener = [](const TuningReport&) { throw std::runtime_error("listener"); };
         return run_with(kernel(), o);  // ignored: the call succeeds
       }},
      {"strategy_throws",
       [] {
         struct Bad final : SearchStrategy {
           std::string_view name() const noexcept override { return "bad"; }
           Result<SearchResult> search(const ConfigSpace&, const DeviceInfo&, const Objective&,
                                       const SearchBudget&, std::uint64_t) const override {
             throw std::runtime_error("strategy");
           }
         };
         auto d = kernel();
         d.search.strategy = std::make_shared<Bad>();
         return Outcome{run_with(std::move(d), options()).status, "search strategy 'bad'",
                        StatusCode::callback_failed};
       }},
      {"post_hook_throws",
       [] {
         auto d = kernel();
         d.post_hook = [](Device&, ArgList, const Config&) -> Status { throw 1; };
         return Outcome{run_with(std::move(d), options()).status, "post_hook",
                        StatusCode::callback_failed};
       }},
      {"verify_throws",
       [] {
         auto d = kernel();
         d.verify = [](Device&, ArgList, const Config&) -> Status { throw std::bad_alloc(); };
         return Outcome{run_with(std::move(d), options()).status, "verify",
                        StatusCode::callback_failed};
       }},
  };
  return all;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--list") {
    for (const auto& [name, fn] : cases()) std::printf("%s\n", name.c_str());
    return 0;
  }
  if (argc != 2 || cases().count(argv[1]) == 0) {
    std::fprintf(stderr, "usage: misuse <case> | --list\n");
    return 2;
  }
  set_log_sink([](LogLevel, std::string_view m) {
    std::fprintf(stderr, "log: %.*s\n", static_cast<int>(m.size()), m.data());
  });
  const Outcome o = cases().at(argv[1])();
  std::printf("%s: %s\n", argv[1], o.status.to_string().c_str());
  if (o.status.code() != o.want) {
    std::printf("FAIL: expected %s\n", std::string(to_string(o.want)).c_str());
    return 1;
  }
  if (!o.want_text.empty() && o.status.message().find(o.want_text) == std::string::npos) {
    std::printf("FAIL: the message does not name '%s'\n", o.want_text.c_str());
    return 1;
  }
  return 0;
}
