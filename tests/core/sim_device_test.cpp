// The simulated device itself: buffers, compile, launch, time, failure injection, events.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "sim_fixture.hpp"
#include "stats.hpp"

using namespace tune;
using namespace tune::testing;

TEST_CASE("SimDevice: identifies itself as simulated") {
  SimDevice dev;
  CHECK(dev.info().backend == "simulated");
  CHECK(dev.info().name == "simulated device");
  CHECK(dev.language() == Language::simulated);
  CHECK(to_string(dev.language()) == "simulated");
  DeviceInfo custom = SimDevice::default_info();
  custom.backend = "cuda";  // cannot pass for a real backend
  custom.max_threads_per_block = 256;
  SimDevice small(custom);
  CHECK(small.info().backend == "simulated");
  CHECK(small.info().max_threads_per_block == 256);
}

TEST_CASE("SimDevice: buffers hold real bytes with bounds checks") {
  SimDevice dev;
  auto buf = dev.alloc(16);
  REQUIRE(buf.ok());
  CHECK((*buf)->size_bytes() == 16);
  CHECK(dev.live_buffers() == 1);
  const std::uint32_t in[4] = {1, 2, 3, 4};
  REQUIRE(dev.upload(**buf, in, sizeof in).ok());
  std::uint32_t out[4] = {};
  REQUIRE(dev.download(**buf, out, sizeof out).ok());
  CHECK(std::memcmp(in, out, sizeof in) == 0);

  REQUIRE(dev.fill(**buf, 0xdeadbeef, 8, 8).ok());
  REQUIRE(dev.download(**buf, out, sizeof out).ok());
  CHECK(out[0] == 1);
  CHECK(out[1] == 2);
  CHECK(out[2] == 0xdeadbeef);
  CHECK(out[3] == 0xdeadbeef);

  std::uint32_t word = 0;
  REQUIRE(dev.download(**buf, &word, 4, 4).ok());
  CHECK(word == 2);

  CHECK(dev.upload(**buf, in, 4, 13).code() == StatusCode::invalid_argument);
  CHECK(dev.download(**buf, out, 17).code() == StatusCode::invalid_argument);
  CHECK(dev.fill(**buf, 0, 6).code() == StatusCode::invalid_argument);  // not a multiple of 4
  CHECK(dev.fill(**buf, 0, 4, 16).code() == StatusCode::invalid_argument);
  Status oob = dev.download(**buf, out, 8, ~std::uint64_t{0});
  CHECK(oob.code() == StatusCode::invalid_argument);  // offset + bytes overflow

  auto small = dev.alloc(8).value();
  REQUIRE(dev.copy(*small, **buf, 8).ok());
  CHECK(dev.read<std::uint32_t>(*small) == std::vector<std::uint32_t>{1, 2});
  CHECK(dev.copy(*small, **buf, 16).code() == StatusCode::invalid_argument);
  CHECK(dev.live_buffers() == 2);
  small.reset();
  CHECK(dev.live_buffers() == 1);

  CHECK(dev.alloc(dev.info().global_memory_bytes + 1).status().code() ==
        StatusCode::out_of_resources);
}

TEST_CASE("SimDevice: fail_alloc_over runs out of memory past the live bytes it allows") {
  SimDevice dev;
  auto a = dev.alloc(600).value();
  CHECK(dev.live_bytes() == 600);
  dev.fail_alloc_over(1000);  // the 600 bytes already live count
  auto b = dev.alloc(400);
  REQUIRE(b.ok());
  CHECK(dev.live_bytes() == 1000);
  auto c = dev.alloc(1);
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().code() == StatusCode::out_of_resources);  // as the GPU backends say OOM
  CHECK(c.status().message() ==
        "simulated alloc of 1 bytes: out of device memory (live buffers would hold 1001 bytes, "
        "over the 1000 of SimDevice::fail_alloc_over)");
  CHECK(dev.live_buffers() == 2);
  CHECK(dev.live_bytes() == 1000);
  b->reset();  // freeing makes room again
  CHECK(dev.live_bytes() == 600);
  CHECK(dev.alloc(400).ok());
}

TEST_CASE("SimDevice: compile records the config; wrong language is rejected") {
  SimDevice dev;
  Config c{{"BM", std::int64_t{64}}};
  auto k = dev.compile(sim_source(), c);
  REQUIRE(k.ok());
  const auto* sk = dynamic_cast<const SimKernel*>(k->get());
  REQUIRE(sk != nullptr);
  CHECK(sk->config() == c);
  CHECK(sk->label() == "BM=64");
  CHECK(sk->source_hash() == sim_source().hash());
  CHECK((*k)->resources().registers > 0);
  CHECK_FALSE((*k)->compile_log().empty());
  CHECK(dev.compiles() == 1);
  CHECK(dev.events() == std::vector<std::string>{"compile BM=64"});

  KernelSource glsl;
  glsl.language = Language::glsl;
  glsl.text = "void main() {}";
  CHECK(dev.compile(glsl, c).status().code() == StatusCode::invalid_argument);
}

TEST_CASE("SimDevice: injected compile errors and resource limits") {
  SimDevice dev;
  dev.fail_compile_if([](const Config& c) { return c.get_int("BM") == 16; }, "'BM' too small");
  dev.out_of_resources_if([](const Config& c) { return c.get_int("BM") == 512; });

  auto bad = dev.compile(sim_source(), Config{{"BM", std::int64_t{16}}});
  CHECK(bad.status().code() == StatusCode::compile_error);
  CHECK(bad.status().message().find("'BM' too small") != std::string::npos);
  CHECK(bad.status().message().find("BM=16") != std::string::npos);
  CHECK(bad.status().message().find("error") != std::string::npos);

  auto big = dev.compile(sim_source(), Config{{"BM", std::int64_t{512}}});
  CHECK(big.status().code() == StatusCode::out_of_resources);

  Config too_many_threads{{"BM", std::int64_t{64}}};
  too_many_threads.set(kBlockX, 2048);
  auto threads = dev.compile(sim_source(), too_many_threads);
  CHECK(threads.status().code() == StatusCode::out_of_resources);
  CHECK(threads.status().message().find("1024") != std::string::npos);

  Config too_much_smem{{"BM", std::int64_t{64}}};
  too_much_smem.set(kSharedBytes, 1 << 20);
  CHECK(dev.compile(sim_source(), too_much_smem).status().code() == StatusCode::out_of_resources);

  CHECK(dev.compile(sim_source(), Config{{"BM", std::int64_t{64}}}).ok());
  CHECK(dev.compiles() == 5);
  auto ev = dev.events();
  CHECK(ev.front() == "compile_error BM=16");
  CHECK(ev.back() == "compile BM=64");
}

TEST_CASE("SimDevice: time returns the model's times and applies resets per rep") {
  SimRig rig;
  rig.dev.set_cost_model([](const Config& c, ArgList args) {
    return static_cast<double>(c.get_int("BM")) * 10.0 + static_cast<double>(args[1].as_int());
  });
  auto k = rig.dev.compile(sim_source(), Config{{"BM", std::int64_t{64}}}).value();
  auto args = rig.args(5);
  CHECK(rig.dev.modelled_ns(Config{{"BM", std::int64_t{64}}}, args) == 645.0);
  auto acc = rig.dev.make_buffer<float>(std::vector<float>{1, 2, 3}, "acc").value();
  auto y = rig.dev.make_buffer<float>(std::vector<float>{4, 5, 6}, "y").value();
  auto y0 = rig.dev.make_buffer<float>(std::vector<float>{7, 8, 9}, "y0").value();
  // The body sees every rep's buffers put back, and then changes them.
  int seen_reset = 0;
  auto floats = [](const DeviceBuffer& b) {  // without download(): no event
    auto bytes = SimDevice::data(b);
    std::vector<float> v(bytes.size() / sizeof(float));
    std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
    return v;
  };
  rig.dev.set_kernel_body([&](const Config&, ArgList, SimDevice&) {
    if (floats(*acc) == std::vector<float>{0, 0, 0} && floats(*y) == std::vector<float>{7, 8, 9})
      ++seen_reset;
    SimDevice::data(*acc)[0] = std::byte{1};
    SimDevice::data(*y)[0] = std::byte{1};
  });
  TimingPlan plan;
  plan.reps = 7;
  plan.resets.zero = {acc.get()};
  plan.resets.restore = {{y.get(), y0.get()}};
  rig.dev.clear_events();
  auto samples = rig.dev.time(*k, LaunchDims{}, args, plan);
  REQUIRE(samples.ok());
  CHECK(*samples == std::vector<double>(7, 645.0));
  CHECK(seen_reset == 7);
  CHECK(rig.dev.timed_reps() == 7);
  CHECK(rig.dev.time_calls() == 1);
  CHECK(rig.dev.flushes() == 7);
  auto ev = rig.dev.events();
  REQUIRE(ev.size() == 1 + 7 * 4);
  CHECK(ev[0] == "time BM=64 reps=7");
  CHECK(ev[1] == "fill acc");
  CHECK(ev[2] == "copy y<-y0");
  CHECK(ev[3] == "flush");
  CHECK(ev[4] == "rep BM=64");

  // A restore source smaller than its destination, or a null buffer, is refused.
  auto small = rig.dev.make_buffer<float>(std::vector<float>{1}, "small").value();
  plan.resets.restore = {{y.get(), small.get()}};
  CHECK(rig.dev.time(*k, LaunchDims{}, args, plan).status().code() == StatusCode::invalid_argument);
  plan.resets.restore = {{y.get(), nullptr}};
  CHECK(rig.dev.time(*k, LaunchDims{}, args, plan).status().code() == StatusCode::invalid_argument);

  rig.dev.set_kernel_body({});
  plan.flush_l2 = false;
  plan.resets = {};
  plan.reps = 3;
  REQUIRE(rig.dev.time(*k, LaunchDims{}, args, plan).ok());
  CHECK(rig.dev.flushes() == 7);
  plan.reps = -1;
  CHECK(rig.dev.time(*k, LaunchDims{}, args, plan).status().code() == StatusCode::invalid_argument);
}

TEST_CASE("SimDevice: launch failures and timeouts per config") {
  SimRig rig;
  rig.dev.fail_launch_if([](const Config& c) { return c.get_int("BM") == 1; });
  rig.dev.timeout_if([](const Config& c) { return c.get_int("BM") == 2; });
  auto k1 = rig.dev.compile(sim_source(), Config{{"BM", std::int64_t{1}}}).value();
  auto k2 = rig.dev.compile(sim_source(), Config{{"BM", std::int64_t{2}}}).value();
  auto k3 = rig.dev.compile(sim_source(), Config{{"BM", std::int64_t{3}}}).value();
  auto args = rig.args(1);
  TimingPlan plan;
  plan.reps = 2;
  CHECK(rig.dev.launch(*k1, LaunchDims{}, args).code() == StatusCode::launch_failed);
  CHECK(rig.dev.time(*k1, LaunchDims{}, args, plan).status().code() == StatusCode::launch_failed);
  CHECK(rig.dev.launch(*k2, LaunchDims{}, args).code() == StatusCode::timeout);
  CHECK(rig.dev.time(*k2, LaunchDims{}, args, plan).status().code() == StatusCode::timeout);
  CHECK(rig.dev.launch(*k3, LaunchDims{}, args).ok());
  CHECK(rig.dev.time(*k3, LaunchDims{}, args, plan).ok());

  // A modelled time over the plan's timeout is a timeout too.
  rig.dev.set_cost_model([](const Config&, ArgList) { return 2e6; });  // 2 ms
  plan.timeout_ms = 1.0;
  CHECK(rig.dev.time(*k3, LaunchDims{}, args, plan).status().code() == StatusCode::timeout);
  // A non-positive model value is reported, not timed.
  rig.dev.set_cost_model([](const Config&, ArgList) { return 0.0; });
  CHECK(rig.dev.time(*k3, LaunchDims{}, args, plan).status().code() == StatusCode::launch_failed);
}

TEST_CASE("SimDevice: buffer arguments are checked against their buffers") {
  SimRig rig;
  auto k = rig.dev.compile(sim_source(), Config{{"BM", std::int64_t{1}}}).value();
  std::vector<ArgValue> args = {ArgValue::buf(*rig.x, ElemType::f32, 4097), ArgValue(1)};
  Status st = rig.dev.launch(*k, LaunchDims{}, args);
  CHECK(st.code() == StatusCode::invalid_argument);
  CHECK(st.message().find("'x'") != std::string::npos);
  rig.dev.set_check_args(false);
  CHECK(rig.dev.launch(*k, LaunchDims{}, args).ok());
}

TEST_CASE("SimDevice: the kernel body sees real buffers at every launch and rep") {
  SimRig rig;
  rig.dev.set_kernel_body([](const Config& c, ArgList args, SimDevice&) {
    for (float& v : SimDevice::view<float>(args[0])) v += static_cast<float>(c.get_int("BM"));
  });
  std::vector<float> zeros(4096, 0.0f);
  REQUIRE(rig.dev.upload(*rig.x, zeros.data(), zeros.size() * sizeof(float)).ok());
  auto k = rig.dev.compile(sim_source(), Config{{"BM", std::int64_t{2}}}).value();
  auto args = rig.args(1);
  REQUIRE(rig.dev.launch(*k, LaunchDims{}, args).ok());
  TimingPlan plan;
  plan.reps = 3;
  REQUIRE(rig.dev.time(*k, LaunchDims{}, args, plan).ok());
  auto x = rig.dev.read<float>(*rig.x);
  CHECK(x[0] == 8.0f);     // 1 launch + 3 reps, +2 each
  CHECK(x[1023] == 8.0f);  // the argument covers 1024 elements
  CHECK(x[1024] == 0.0f);
}

TEST_CASE("SimDevice: noise is a pure function of seed, config and repetition") {
  auto samples = [](std::uint64_t seed, double sigma) {
    SimRig rig;
    rig.dev.set_cost_model([](const Config&, ArgList) { return 1000.0; });
    rig.dev.set_noise(sigma, seed);
    auto k = rig.dev.compile(sim_source(), Config{{"BM", std::int64_t{1}}}).value();
    TimingPlan plan;
    plan.reps = 50;
    return rig.dev.time(*k, LaunchDims{}, rig.args(1), plan).value();
  };
  auto a = samples(11, 0.1);
  CHECK(a == samples(11, 0.1));
  CHECK(a != samples(12, 0.1));
  CHECK(samples(11, 0.0) == std::vector<double>(50, 1000.0));
  for (double v : a) {
    CHECK(v > 0);
    CHECK(std::isfinite(v));
  }
  SampleStats s = summarize(a);
  CHECK(s.min < s.max);
  CHECK(s.median == doctest::Approx(1000.0).epsilon(0.1).scale(0));
}

TEST_CASE("SimDevice: the default cost model prefers 32 and counts bytes") {
  Config best{{"BM", std::int64_t{32}}, {"BN", std::int64_t{32}}};
  Config worse{{"BM", std::int64_t{128}}, {"BN", std::int64_t{32}}};
  Config flag{{"BM", std::int64_t{32}}, {"BN", std::int64_t{32}}, {"SPLIT", true}};
  CHECK(SimDevice::default_cost(best, {}) == 1000.0);
  CHECK(SimDevice::default_cost(worse, {}) > SimDevice::default_cost(best, {}));
  CHECK(SimDevice::default_cost(flag, {}) > SimDevice::default_cost(best, {}));
  SimRig rig;
  auto args = rig.args(1);  // 1024 f32 = 4096 bytes
  CHECK(SimDevice::default_cost(best, args) == doctest::Approx(1000.0 + 4.096));
  Config reordered{{"BN", std::int64_t{32}}, {"BM", std::int64_t{128}}};
  CHECK(SimDevice::default_cost(reordered, args) == SimDevice::default_cost(worse, args));
}

TEST_CASE("SimDevice: counters are thread-safe; fast launch records nothing") {
  SimRig rig;
  auto k = rig.dev.compile(sim_source(), Config{{"BM", std::int64_t{1}}}).value();
  rig.dev.reset_counters();
  CHECK(rig.dev.compiles() == 0);
  CHECK(rig.dev.events().empty());
  auto args = rig.args(1);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) CHECK(rig.dev.launch(*k, LaunchDims{}, args).ok());
    });
  }
  for (auto& t : threads) t.join();
  CHECK(rig.dev.launches() == 4000);
  CHECK(rig.dev.events().size() == 4000);

  rig.dev.set_fast_launch(true);
  rig.dev.clear_events();
  REQUIRE(rig.dev.launch(*k, LaunchDims{}, args).ok());
  CHECK(rig.dev.launches() == 4001);
  CHECK(rig.dev.events().empty());
}

TEST_CASE("SimDevice: rejects kernels and buffers from elsewhere") {
  struct ForeignKernel : CompiledKernel {};
  struct ForeignBuffer : DeviceBuffer {
    std::uint64_t size_bytes() const noexcept override { return 64; }
  };
  SimDevice dev;
  ForeignKernel fk;
  ForeignBuffer fb;
  CHECK(dev.launch(fk, LaunchDims{}, {}).code() == StatusCode::invalid_argument);
  char bytes[8] = {};
  CHECK(dev.upload(fb, bytes, 8).code() == StatusCode::invalid_argument);
  CHECK(SimDevice::data(fb).empty());
}
