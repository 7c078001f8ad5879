// Launch targets on the simulated device: a call on an application's stream or command buffer
// (LaunchTarget) orders tuning against the caller's work, launches the winner on the target,
// and never tunes inside a graph capture (AutotunerOptions::capture_miss). The simulated
// device logs every ordering call, launch and capture, so the order is checked here on the
// event log; outputs are checked against a CPU reference on random inputs.
#include <doctest/doctest.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "interop_data.hpp"
#include "sim_fixture.hpp"

using namespace tune;
using namespace tune::testing;

namespace {

// x[i] = 2 x[i] + 1 over the first n elements: in place, so `x` is restore_value and the
// output after a call equals one application on the caller's data.
void body(const Config&, ArgList args, SimDevice&) {
  auto x = SimDevice::view<float>(args[0]);
  const auto n = static_cast<std::size_t>(std::max<std::int64_t>(0, args[1].as_int()));
  for (std::size_t i = 0; i < x.size() && i < n; ++i) x[i] = 2.0f * x[i] + 1.0f;
}

KernelDef in_place_kernel() {
  KernelDef def = sim_kernel(bm_space({16, 32, 64}));
  def.restore_value = {"x"};
  return def;
}

std::vector<float> reference(std::vector<float> x, std::size_t n) {
  for (std::size_t i = 0; i < x.size() && i < n; ++i) x[i] = 2.0f * x[i] + 1.0f;
  return x;
}

// Position of the first event equal to `e` (or starting with it when `prefix`), -1 if none.
long index_of(const std::vector<std::string>& events, const std::string& e, bool prefix = false) {
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (prefix ? events[i].rfind(e, 0) == 0 : events[i] == e) return static_cast<long>(i);
  }
  return -1;
}
long last_index_of_prefix(const std::vector<std::string>& events, const std::string& p) {
  long last = -1;
  for (std::size_t i = 0; i < events.size(); ++i)
    if (events[i].rfind(p, 0) == 0) last = static_cast<long>(i);
  return last;
}

void* fake_handle(std::uintptr_t id) { return reinterpret_cast<void*>(id); }

}  // namespace

TEST_CASE("a new key on a stream: queue waits for the stream, tunes, stream waits, winner on it") {
  SimRig rig;
  rig.dev.set_kernel_body(body);
  rig.dev.set_cost_model(bm_model(32));
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    auto x0 = random_floats(4096, seed, -4.0f, 4.0f);
    REQUIRE(rig.dev.upload(*rig.x, x0.data(), x0.size() * sizeof(float)).ok());
    auto tuner = make_tuner(in_place_kernel());
    const LaunchTarget stream = LaunchTarget::stream(fake_handle(0x70 + seed));
    rig.dev.reset_counters();
    const auto args = rig.args(1000);
    REQUIRE(tuner->run(rig.dev, args, stream).ok());
    const auto ev = rig.dev.events();
    CHECK(rig.dev.read<float>(*rig.x) == reference(x0, 1000));
    const std::string on = " on " + stream.to_string();
    const long waits = index_of(ev, "queue waits for " + stream.to_string());
    const long first_time = index_of(ev, "time ", true);
    const long last_time = last_index_of_prefix(ev, "time ");
    const long then = index_of(ev, stream.to_string() + " waits for queue");
    const long launched = index_of(ev, "launch BM=32" + on);
    REQUIRE(waits >= 0);
    REQUIRE(first_time >= 0);
    CHECK(waits < first_time);
    CHECK(last_time < then);
    CHECK(then < launched);
    CHECK(launched == static_cast<long>(ev.size()) - 1);  // the winner's launch comes last
    CHECK(rig.dev.target_launches() == 1);                // tuning's own launches stay on the queue
  }
}

TEST_CASE("a known key on a stream: one launch on it, nothing else") {
  SimRig rig;
  rig.dev.set_kernel_body(body);
  auto tuner = make_tuner(in_place_kernel());
  const auto args = rig.args(1000);
  REQUIRE(tuner->run(rig.dev, args).ok());  // tuned on the device's queue
  const LaunchTarget stream = LaunchTarget::stream(fake_handle(0x42));
  auto x0 = random_floats(4096, 7);
  REQUIRE(rig.dev.upload(*rig.x, x0.data(), x0.size() * sizeof(float)).ok());
  rig.dev.reset_counters();
  REQUIRE(tuner->run(rig.dev, args, stream).ok());
  const std::string best = best_of(*tuner, rig.dev, args);
  CHECK(rig.dev.events() ==
        std::vector<std::string>{"launch " + best + " on " + stream.to_string()});
  CHECK(rig.dev.read<float>(*rig.x) == reference(x0, 1000));
  // A command buffer target the same way: the dispatch is "recorded" into it.
  rig.dev.reset_counters();
  const LaunchTarget cb = LaunchTarget::command_buffer(fake_handle(0x99));
  REQUIRE(tuner->run(rig.dev, args, cb).ok());
  CHECK(rig.dev.events() == std::vector<std::string>{"launch " + best + " on " + cb.to_string()});
}

TEST_CASE("tune() on a stream orders like run() and launches nothing") {
  SimRig rig;
  auto tuner = make_tuner(in_place_kernel());
  const LaunchTarget stream = LaunchTarget::stream(fake_handle(0x5));
  auto c = tuner->tune(rig.dev, rig.args(1000), stream);
  REQUIRE(c.ok());
  const auto ev = rig.dev.events();
  CHECK(index_of(ev, "queue waits for " + stream.to_string()) <
        index_of(ev, "time ", /*prefix=*/true));
  CHECK(last_index_of_prefix(ev, "time ") < index_of(ev, stream.to_string() + " waits for queue"));
  CHECK(rig.dev.target_launches() == 0);
}

TEST_CASE("a hit on a capturing stream is captured like any launch") {
  SimRig rig;
  rig.dev.set_kernel_body(body);
  auto tuner = make_tuner(in_place_kernel());
  const auto args = rig.args(1000);
  REQUIRE(tuner->run(rig.dev, args).ok());
  const LaunchTarget stream = LaunchTarget::stream(fake_handle(0x43));
  rig.dev.set_capturing(stream, true);
  auto x0 = random_floats(4096, 11);
  REQUIRE(rig.dev.upload(*rig.x, x0.data(), x0.size() * sizeof(float)).ok());
  rig.dev.reset_counters();
  REQUIRE(tuner->run(rig.dev, args, stream).ok());
  CHECK(rig.dev.events() == std::vector<std::string>{"capture " + best_of(*tuner, rig.dev, args) +
                                                     " on " + stream.to_string()});
  CHECK(rig.dev.captured() == 1);
  CHECK(rig.dev.read<float>(*rig.x) == x0);  // captured, not run
}

TEST_CASE("a miss while capturing: fallback to the nearest tuned key, nothing tuned or kept") {
  SimRig rig;
  rig.dev.set_cost_model([](const Config& c, ArgList args) {
    const std::int64_t best = args[1].as_int() < 2000 ? 16 : 64;
    return 1000.0 + 10.0 * static_cast<double>(std::llabs(c.get_int("BM") - best));
  });
  auto tuner = make_tuner(in_place_kernel());
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  REQUIRE(best_of(*tuner, rig.dev, rig.args(1000)) == "BM=16");
  const LaunchTarget stream = LaunchTarget::stream(fake_handle(0x44));
  rig.dev.set_capturing(stream, true);
  rig.dev.reset_counters();
  REQUIRE(tuner->run(rig.dev, rig.args(3000), stream).ok());
  CHECK(rig.dev.events() == std::vector<std::string>{"capture BM=16 on " + stream.to_string()});
  CHECK(rig.dev.time_calls() == 0);
  CHECK(best_of(*tuner, rig.dev, rig.args(3000)) == "<none>");  // not remembered
  // After the capture, the key is tuned for real (on its own cost: BM=64).
  rig.dev.set_capturing(stream, false);
  REQUIRE(tuner->run(rig.dev, rig.args(3000), stream).ok());
  CHECK(best_of(*tuner, rig.dev, rig.args(3000)) == "BM=64");
  CHECK(rig.dev.time_calls() > 0);
}

TEST_CASE("a miss while capturing with no tuned key: the first candidate, compiled, untimed") {
  SimRig rig;
  KernelDef def = in_place_kernel();
  def.space = bm_space({64, 16, 32});
  def.space.constrain("not 64",
                      [](const Config& c, const DeviceInfo&) { return c.get_int("BM") != 64; });
  auto tuner = make_tuner(std::move(def));
  const LaunchTarget stream = LaunchTarget::stream(nullptr);  // the legacy default stream
  rig.dev.set_capturing(stream, true);
  REQUIRE(tuner->run(rig.dev, rig.args(1000), stream).ok());
  const auto ev = rig.dev.events();
  CHECK(events_with(ev, "compile ") == std::vector<std::string>{"compile BM=16"});
  CHECK(has_event(ev, "capture BM=16 on " + stream.to_string()));
  CHECK(rig.dev.time_calls() == 0);
  CHECK(index_of(ev, "queue waits for", true) == -1);
  CHECK(best_of(*tuner, rig.dev, rig.args(1000)) == "<none>");
  // tune() refuses inside a capture whatever the policy.
  auto t = tuner->tune(rig.dev, rig.args(1000), stream);
  REQUIRE_FALSE(t.ok());
  CHECK(t.status().code() == StatusCode::failed_precondition);
}

TEST_CASE("a miss while capturing with CaptureMiss::error: failed_precondition, nothing run") {
  SimRig rig;
  auto opts = quiet_options();
  opts.capture_miss = CaptureMiss::error;
  auto tuner = make_tuner(in_place_kernel(), opts);
  const LaunchTarget stream = LaunchTarget::stream(fake_handle(0x45));
  rig.dev.set_capturing(stream, true);
  rig.dev.reset_counters();
  Status st = tuner->run(rig.dev, rig.args(1000), stream);
  REQUIRE_FALSE(st.ok());
  CHECK(st.code() == StatusCode::failed_precondition);
  const std::string msg = st.message();
  CHECK(msg.find("kernel sim_kernel") != std::string::npos);
  CHECK(msg.find("n=1000") != std::string::npos);
  CHECK(msg.find(stream.to_string()) != std::string::npos);
  CHECK(msg.find("tune before capturing") != std::string::npos);
  CHECK(rig.dev.events().empty());
  // Another stream that is not capturing tunes as usual.
  REQUIRE(tuner->run(rig.dev, rig.args(1000), LaunchTarget::stream(fake_handle(0x46))).ok());
  CHECK(rig.dev.time_calls() > 0);
  // And now the capture gets the tuned config.
  rig.dev.reset_counters();
  REQUIRE(tuner->run(rig.dev, rig.args(1000), stream).ok());
  CHECK(rig.dev.captured() == 1);
}

TEST_CASE("background mode on a stream: the copies come after the caller's stream work") {
  SimRig rig;
  auto opts = quiet_options();
  opts.mode = TuningMode::background;
  std::mutex mu;
  std::condition_variable cv;
  int tunings = 0;
  opts.listener = [&](const TuningReport&) {
    std::lock_guard lock(mu);
    ++tunings;
    cv.notify_all();
  };
  auto tuner = make_tuner(in_place_kernel(), opts);
  REQUIRE(tuner->run(rig.dev, rig.args(100)).ok());
  const LaunchTarget stream = LaunchTarget::stream(fake_handle(0x47));
  rig.dev.reset_counters();
  REQUIRE(tuner->run(rig.dev, rig.args(3000), stream).ok());
  {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return tunings == 2; });
  }
  const auto ev = rig.dev.events();
  const long waits = index_of(ev, "queue waits for " + stream.to_string());
  const long copy = index_of(ev, "copy ", true);
  const long then = index_of(ev, stream.to_string() + " waits for queue");
  // The caller's launch on its stream; the background tuning's own launches (on the device's
  // queue) run on another thread and may come before or after it.
  long launched = -1;
  for (std::size_t i = 0; i < ev.size() && launched < 0; ++i) {
    if (ev[i].rfind("launch ", 0) == 0 &&
        ev[i].find(" on " + stream.to_string()) != std::string::npos)
      launched = static_cast<long>(i);
  }
  REQUIRE(waits >= 0);
  REQUIRE(copy >= 0);
  REQUIRE(launched >= 0);
  CHECK(waits < copy);
  CHECK(copy < then);
  CHECK(then < launched);
}

TEST_CASE("many streams from several threads: one tuning per key, every output right") {
  constexpr int kThreads = 4;
  SimDevice dev;
  dev.set_kernel_body(body);
  auto tuner = make_tuner(in_place_kernel());
  std::vector<Buffer> bufs;
  std::vector<std::vector<float>> inputs;
  for (int t = 0; t < kThreads; ++t) {
    bufs.push_back(dev.alloc(4096 * sizeof(float)).value());
    inputs.push_back(random_floats(4096, 100 + static_cast<std::uint32_t>(t)));
    REQUIRE(dev.upload(*bufs.back(), inputs.back().data(), 4096 * sizeof(float)).ok());
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const LaunchTarget stream = LaunchTarget::stream(fake_handle(0x100 + t));
      const std::int32_t n = t % 2 == 0 ? 1000 : 2000;  // two keys, two threads each
      std::vector<ArgValue> args = {
          ArgValue::buf(*bufs[static_cast<std::size_t>(t)], ElemType::f32, 4096), ArgValue(n)};
      for (int i = 0; i < 3; ++i)
        if (!tuner->run(dev, args, stream).ok()) ++failures;
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures.load() == 0);
  for (int t = 0; t < kThreads; ++t) {
    auto expect = inputs[static_cast<std::size_t>(t)];
    const std::size_t n = t % 2 == 0 ? 1000 : 2000;
    for (int i = 0; i < 3; ++i) expect = reference(expect, n);
    CHECK(dev.read<float>(*bufs[static_cast<std::size_t>(t)]) == expect);
  }
  // Each key tuned once: the racing count per key is whatever it is, but tunings happened
  // only for two keys (each thread's launches all went to its own stream).
  const auto ev = dev.events();
  for (int t = 0; t < kThreads; ++t) {
    const std::string on = " on " + LaunchTarget::stream(fake_handle(0x100 + t)).to_string();
    std::size_t launches = 0;
    for (const auto& e : ev)
      if (e.rfind("launch ", 0) == 0 && e.size() > on.size() &&
          e.compare(e.size() - on.size(), on.size(), on) == 0)
        ++launches;
    CHECK(launches == 3);
  }
  CHECK(dev.target_launches() == 3 * kThreads);
}

namespace {
// A device with only the Device interface's default target support.
class QueueOnlyDevice final : public Device {
 public:
  explicit QueueOnlyDevice(SimDevice& d) : d_(d) {}
  const DeviceInfo& info() const noexcept override { return d_.info(); }
  Language language() const noexcept override { return d_.language(); }
  Result<Buffer> alloc(std::uint64_t bytes) override { return d_.alloc(bytes); }
  Status upload(DeviceBuffer& dst, const void* src, std::uint64_t bytes,
                std::uint64_t offset) override {
    return d_.upload(dst, src, bytes, offset);
  }
  Status download(const DeviceBuffer& src, void* dst, std::uint64_t bytes,
                  std::uint64_t offset) override {
    return d_.download(src, dst, bytes, offset);
  }
  Status fill(DeviceBuffer& dst, std::uint32_t pattern, std::uint64_t bytes,
              std::uint64_t offset) override {
    return d_.fill(dst, pattern, bytes, offset);
  }
  Status copy(DeviceBuffer& dst, const DeviceBuffer& src, std::uint64_t bytes) override {
    return d_.copy(dst, src, bytes);
  }
  Result<std::unique_ptr<CompiledKernel>> compile(const KernelSource& s, const Config& c) override {
    return d_.compile(s, c);
  }
  Status launch(const CompiledKernel& k, const LaunchDims& dims, ArgList args) override {
    return d_.launch(k, dims, args);
  }
  Result<std::vector<double>> time(const CompiledKernel& k, const LaunchDims& dims, ArgList args,
                                   const TimingPlan& plan) override {
    return d_.time(k, dims, args, plan);
  }
  Status synchronize() override { return d_.synchronize(); }

 private:
  SimDevice& d_;
};
}  // namespace

TEST_CASE("a device without target support refuses a stream with a clear error") {
  SimRig rig;
  QueueOnlyDevice dev(rig.dev);
  auto tuner = make_tuner(in_place_kernel());
  const auto args = rig.args(1000);
  Status st = tuner->run(dev, args, LaunchTarget::stream(fake_handle(0x48)));
  REQUIRE_FALSE(st.ok());
  CHECK(st.code() == StatusCode::unavailable);
  CHECK(st.message().find("simulated device") != std::string::npos);
  CHECK(st.message().find("stream") != std::string::npos);
  // The queue target is the default launch.
  REQUIRE(tuner->run(dev, args, LaunchTarget::queue()).ok());
  CHECK(tuner->best(dev, args).has_value());
}
