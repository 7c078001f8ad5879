// The Autotuner's per-thread memory of its last hit (core/src/hit_memo.hpp): a call repeating
// the previous hit's arguments skips the key and reuses its dims. These cases check that the
// shortcut never launches what the full path would not: changed scalars, another device, a released
// device, a destroyed Autotuner whose address a new one reuses, a device released, destroyed and
// re-created at its address, keys that call user code, and 8 threads calling at once.
#include <doctest/doctest.h>

#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "interop_data.hpp"
#include "sim_fixture.hpp"
#include "watchdog.hpp"

using namespace tune;
using namespace tune::testing;

namespace {

// The config of the last "launch" event, "" when none.
std::string last_launch(const SimDevice& dev) {
  const auto launches = events_with(dev.events(), "launch ");
  return launches.empty() ? std::string() : launches.back().substr(7);
}

// Best BM is 16 below n = 2000 and 64 from there on.
SimDevice::CostModel n_dependent_model() {
  return [](const Config& c, ArgList args) {
    const std::int64_t best = args[1].as_int() < 2000 ? 16 : 64;
    return 1000.0 + 10.0 * static_cast<double>(std::llabs(c.get_int("BM") - best));
  };
}

// marked(x: f32 buffer, y: f32 buffer, n: i32 scalar), key n: y[i] = x[i] * BM + n over the
// first n elements, so the output names both the config launched and the key it was for.
constexpr std::size_t kLen = 1024;    // elements of x and y
constexpr float kPoison = -12345.0f;  // y before a call: a call that launched nothing shows

KernelDef marked_kernel(ConfigSpace space) {
  KernelDef def;
  def.name = "marked_kernel";
  def.sources = {sim_source()};
  def.signature.buffer("x", ElemType::f32).buffer("y", ElemType::f32).scalar("n", ElemType::i32);
  def.space = std::move(space);
  def.key = {KeySpec::exact("n")};
  def.dims = [](const Config& c, ArgList args) {
    LaunchDims d;
    const auto bm = static_cast<std::uint64_t>(c.get_int("BM"));
    const auto n = static_cast<std::uint64_t>(std::max<std::int64_t>(1, args[2].as_int()));
    d.grid = {static_cast<std::uint32_t>((n + bm - 1) / bm), 1, 1};
    d.block = {128, 1, 1};
    return d;
  };
  return def;
}

void marked_body(const Config& c, ArgList args, SimDevice&) {
  auto x = SimDevice::view<float>(args[0]);
  auto y = SimDevice::view<float>(args[1]);
  const auto n = static_cast<std::size_t>(std::max<std::int64_t>(0, args[2].as_int()));
  const auto bm = static_cast<float>(c.get_int("BM"));
  for (std::size_t i = 0; i < y.size() && i < n; ++i)
    y[i] = x[i] * bm + static_cast<float>(args[2].as_int());
}

// The CPU reference of marked_kernel launched with BM = `bm` on a poisoned y.
std::vector<float> marked_reference(const std::vector<float>& x, std::int32_t n, std::int64_t bm) {
  std::vector<float> y(x.size(), kPoison);
  for (std::size_t i = 0; i < y.size() && i < static_cast<std::size_t>(n); ++i)
    y[i] = x[i] * static_cast<float>(bm) + static_cast<float>(n);
  return y;
}

// The best BM of key n: 16, 32, 64, 128 in turn per thousand.
std::int64_t best_bm(std::int64_t n) {
  constexpr std::array<std::int64_t, 4> bms = {16, 32, 64, 128};
  return bms[static_cast<std::size_t>(n / 1000) % bms.size()];
}

SimDevice::CostModel best_bm_model() {
  return [](const Config& c, ArgList args) {
    return 1000.0 +
           10.0 * static_cast<double>(std::llabs(c.get_int("BM") - best_bm(args[2].as_int())));
  };
}

// One caller's x and y on `dev`, x random from `seed`.
struct MarkedBuffers {
  Buffer x, y;
  std::vector<float> x0;

  MarkedBuffers(SimDevice& dev, std::uint32_t seed) : x0(random_floats(kLen, seed)) {
    x = dev.alloc(kLen * sizeof(float)).value();
    y = dev.alloc(kLen * sizeof(float)).value();
    REQUIRE(dev.upload(*x, x0.data(), kLen * sizeof(float)).ok());
  }
  std::vector<ArgValue> args(std::int32_t n) {
    return {ArgValue::buf(*x, ElemType::f32, kLen), ArgValue::buf(*y, ElemType::f32, kLen),
            ArgValue(n)};
  }
  void poison() {
    auto v = SimDevice::view<float>(ArgValue::buf(*y, ElemType::f32, kLen));
    std::fill(v.begin(), v.end(), kPoison);
  }
  // "" when y holds marked_kernel's output for key n launched with BM = bm, else what differs.
  std::string wrong(std::int32_t n, std::int64_t bm) {
    auto v = SimDevice::view<float>(ArgValue::buf(*y, ElemType::f32, kLen));
    return mismatches(v.data(), marked_reference(x0, n, bm));
  }
};

}  // namespace

TEST_CASE("hit memo: 8 threads on shared and own keys launch each key's winner") {
  SimDevice dev;
  dev.set_cost_model(best_bm_model());
  dev.set_kernel_body(marked_body);
  dev.set_record_events(false);  // 8 threads: no log to grow
  auto tuner = make_tuner(marked_kernel(bm_space({16, 32, 64, 128})));
  constexpr int kThreads = 8, kRounds = 40;
  constexpr std::int32_t kShared = 1000;  // every thread's key
  std::vector<std::unique_ptr<MarkedBuffers>> bufs;
  for (int t = 0; t < kThreads; ++t)
    bufs.push_back(std::make_unique<MarkedBuffers>(dev, static_cast<std::uint32_t>(100 + t)));
  std::mutex mu;
  std::vector<std::string> failures;  // the first of each thread
  {
    Watchdog watchdog("8 threads calling through the hit memo", 120);
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        MarkedBuffers& b = *bufs[static_cast<std::size_t>(t)];
        // Threads t and t + 4 share their own key too: 2000, 3000, 4000, 5000.
        const std::int32_t own = 1000 * (2 + t % 4);
        // Each key twice in a row (the second a memo hit), the keys alternating.
        const std::array<std::int32_t, 4> order = {kShared, kShared, own, own};
        for (int r = 0; r < kRounds; ++r) {
          for (std::int32_t n : order) {
            b.poison();
            const auto args = b.args(n);
            Status st = tuner->run(dev, args);
            std::string bad = st.ok() ? b.wrong(n, best_bm(n)) : st.to_string();
            if (bad.empty()) continue;
            std::lock_guard lock(mu);
            failures.push_back("thread " + std::to_string(t) + ", round " + std::to_string(r) +
                               ", n " + std::to_string(n) + ": " + bad);
            return;
          }
        }
      });
    }
  }
  for (const auto& f : failures) FAIL_CHECK(f);
  CHECK(failures.empty());
  for (std::int32_t n : {1000, 2000, 3000, 4000, 5000}) {
    CAPTURE(n);
    CHECK(best_of(*tuner, dev, bufs[0]->args(n)) == "BM=" + std::to_string(best_bm(n)));
  }
}

TEST_CASE("hit memo: a device released, destroyed and re-created at its address tunes anew") {
  auto tuner = make_tuner(marked_kernel(bm_space({16, 32, 64, 128})));
  // The allocator tends to hand a freed block of the same size back: a few rounds to get the
  // destroyed device's address (and its buffers'); the promise holds either way.
  bool reused = false;
  for (int round = 0; round < 8 && !reused; ++round) {
    auto a = std::make_unique<SimDevice>();
    a->set_cost_model(bm_model(16));
    a->set_kernel_body(marked_body);
    auto ab = std::make_unique<MarkedBuffers>(*a, 7);
    for (int i = 0; i < 2; ++i) {  // tuned, then a hit the memo remembers
      ab->poison();
      REQUIRE(tuner->run(*a, ab->args(1000)).ok());
      CHECK_MESSAGE(ab->wrong(1000, 16).empty(), ab->wrong(1000, 16));
    }
    const void* old_device = a.get();
    tuner->release(*a);  // the documented order: release, then destroy the device
    ab.reset();
    a.reset();
    auto b = std::make_unique<SimDevice>();
    b->set_cost_model(bm_model(128));
    b->set_kernel_body(marked_body);
    MarkedBuffers bb(*b, 8);
    reused = b.get() == old_device;
    bb.poison();
    REQUIRE(tuner->run(*b, bb.args(1000)).ok());
    CHECK(b->compiles() == 4);  // tuned on b, not launched from a's released entry
    CHECK_MESSAGE(bb.wrong(1000, 128).empty(), bb.wrong(1000, 128));
    CHECK(best_of(*tuner, *b, bb.args(1000)) == "BM=128");
    tuner->release(*b);
  }
  MESSAGE("a new device got the destroyed one's address: " << std::string(reused ? "yes" : "no"));
}

TEST_CASE("hit memo: alternating keys launch each key's own winner") {
  SimRig rig;
  rig.dev.set_cost_model(n_dependent_model());
  auto tuner = make_tuner(sim_kernel(bm_space({16, 64})));
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  REQUIRE(tuner->run(rig.dev, rig.args(5000)).ok());
  for (int i = 0; i < 4; ++i) {
    REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
    CHECK(last_launch(rig.dev) == "BM=16");
    REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());  // a repeat: the memo's path
    CHECK(last_launch(rig.dev) == "BM=16");
    REQUIRE(tuner->run(rig.dev, rig.args(5000)).ok());
    CHECK(last_launch(rig.dev) == "BM=64");
  }
}

TEST_CASE("hit memo: the same arguments on another device use that device's entry") {
  SimRig a;
  SimDevice b;  // same model: its own results all the same
  a.dev.set_cost_model(bm_model(16));
  b.set_cost_model(bm_model(64));
  auto tuner = make_tuner(sim_kernel(bm_space({16, 64})));
  const auto args = a.args(1000);  // a's buffer: SimDevice does not check ownership
  REQUIRE(tuner->run(a.dev, args).ok());
  REQUIRE(tuner->run(a.dev, args).ok());  // remembered as this thread's last hit
  REQUIRE(tuner->run(b, args).ok());      // b: a new key there, tuned on b
  CHECK(best_of(*tuner, b, args) == "BM=64");
  CHECK(last_launch(b) == "BM=64");
  REQUIRE(tuner->run(a.dev, args).ok());
  CHECK(last_launch(a.dev) == "BM=16");
}

TEST_CASE("hit memo: after release the same call tunes again") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(32));
  auto tuner = make_tuner(sim_kernel(bm_space({16, 32})));
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());  // a hit: remembered
  CHECK(rig.dev.compiles() == 2);
  tuner->release(rig.dev);
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  CHECK(rig.dev.compiles() == 4);  // tuned again, not launched from the released entry
  CHECK(best_of(*tuner, rig.dev, rig.args(1000)) == "BM=32");
}

TEST_CASE("hit memo: a configuration adopted for a known key is launched from then on") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(32));
  auto tuner = make_tuner(sim_kernel(bm_space({16, 32})));
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());  // a hit: remembered
  CHECK(last_launch(rig.dev) == "BM=32");
  REQUIRE(tuner->adopt(rig.dev, rig.args(1000), Config().set("BM", 16), {}).ok());
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  CHECK(last_launch(rig.dev) == "BM=16");  // the adopted entry, not the replaced one
}

TEST_CASE("hit memo: a new Autotuner where a destroyed one lived tunes its own kernel") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(128));
  // Allocators hand a freed block of the same size back: try a few times to get the address
  // of the destroyed tuner's state; the promise holds either way.
  bool reused = false;
  for (int round = 0; round < 8 && !reused; ++round) {
    auto first = make_tuner(sim_kernel(bm_space({16, 32})));
    REQUIRE(first->run(rig.dev, rig.args(1000)).ok());
    REQUIRE(first->run(rig.dev, rig.args(1000)).ok());  // remembered as the last hit
    const void* old_address = first.get();
    first.reset();
    auto second = make_tuner(sim_kernel(bm_space({64, 128})));
    reused = second.get() == old_address;
    const auto compiles = rig.dev.compiles();
    REQUIRE(second->run(rig.dev, rig.args(1000)).ok());
    CHECK(rig.dev.compiles() == compiles + 2);  // second's own space, tuned
    CHECK(last_launch(rig.dev) == "BM=128");
    CHECK(best_of(*second, rig.dev, rig.args(1000)) == "BM=128");
  }
  MESSAGE(
      "a new Autotuner reused a destroyed one's address: " << std::string(reused ? "yes" : "no"));
}

TEST_CASE("hit memo: heuristics and custom buckets run on every call") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(32));
  KernelDef def = sim_kernel(bm_space({16, 32}));
  int heuristic_calls = 0;
  def.heuristics.push_back({"H", [&](ArgList, const DeviceInfo&) {
                              ++heuristic_calls;
                              return Value(std::int64_t{1});
                            }});
  int bucket_calls = 0;
  def.key = {KeySpec::custom("n", [&](std::int64_t v) {
    ++bucket_calls;
    return v;
  })};
  auto tuner = make_tuner(std::move(def));
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  const int h0 = heuristic_calls, b0 = bucket_calls;
  for (int i = 0; i < 3; ++i) REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  CHECK(heuristic_calls == h0 + 3);
  CHECK(bucket_calls == b0 + 3);
}

TEST_CASE("hit memo: a repeated hit reuses its dims; other arguments call dims again") {
  SimDevice dev;
  dev.set_cost_model(bm_model(32));
  dev.set_kernel_body(marked_body);
  KernelDef def = marked_kernel(bm_space({16, 32}));
  int dims_calls = 0;
  def.dims = [&dims_calls, inner = def.dims](const Config& c, ArgList args) {
    ++dims_calls;
    return inner(c, args);
  };
  auto tuner = make_tuner(std::move(def));
  MarkedBuffers a(dev, 3), b(dev, 4);           // two callers of one key (n = 1000)
  REQUIRE(tuner->run(dev, a.args(1000)).ok());  // tunes: dims per candidate
  int before = dims_calls;
  for (int i = 0; i < 5; ++i) {
    a.poison();
    REQUIRE(tuner->run(dev, a.args(1000)).ok());
    CHECK_MESSAGE(a.wrong(1000, 32).empty(), a.wrong(1000, 32));
  }
  CHECK(dims_calls == before + 1);  // the first hit; the memo serves the other four
  before = dims_calls;
  for (int i = 0; i < 3; ++i) {  // alternating buffers: every call misses the memo
    b.poison();
    REQUIRE(tuner->run(dev, b.args(1000)).ok());
    CHECK_MESSAGE(b.wrong(1000, 32).empty(), b.wrong(1000, 32));
    a.poison();
    REQUIRE(tuner->run(dev, a.args(1000)).ok());
    CHECK_MESSAGE(a.wrong(1000, 32).empty(), a.wrong(1000, 32));
  }
  CHECK(dims_calls == before + 6);
}
