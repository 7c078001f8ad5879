// The cold cache of timed launches on the simulated device: the last-level cache size and its
// override, the flush size, rotating input copies (in turn, correct results, the fallback to
// the flush) and the flush self-test's mechanics. No timing is asserted.
#include <doctest/doctest.h>

#include <mutex>
#include <random>
#include <set>
#include <vector>

#include "flush_check.hpp"
#include "input_rotation.hpp"
#include "race.hpp"
#include "scoped_env.hpp"
#include "sim_fixture.hpp"
#include "tune/backend/last_level_cache.hpp"

using namespace tune;
using namespace tune::testing;

namespace {

DeviceInfo small_cache_info(std::uint64_t llc_bytes) {
  DeviceInfo info = SimDevice::default_info();
  info.llc_bytes = llc_bytes;
  return info;
}

// scale_kernel(x: f32 input, y: f32 output, n: i32): y = 3 x + 1, on real host memory; the
// rig records which x buffer every execution read.
struct ScaleRig {
  static constexpr int kN = 4096;
  SimDevice dev;
  Buffer x, y;
  std::vector<float> xs;
  std::mutex mu;
  std::vector<const DeviceBuffer*> seen_x;

  explicit ScaleRig(std::uint64_t llc_bytes) : dev(small_cache_info(llc_bytes)) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-100.0f, 100.0f);
    for (int i = 0; i < kN; ++i) xs.push_back(u(rng));
    x = dev.make_buffer<float>(xs, "x").value();
    y = dev.make_buffer<float>(std::vector<float>(kN, 0.0f), "y").value();
    dev.set_cost_model(bm_model(64));
    dev.set_kernel_body([this](const Config&, ArgList args, SimDevice&) {
      {
        std::lock_guard lock(mu);
        seen_x.push_back(args[0].buffer);
      }
      auto in = SimDevice::view<float>(args[0]);
      auto out = SimDevice::view<float>(args[1]);
      for (std::size_t i = 0; i < in.size(); ++i) out[i] = 3.0f * in[i] + 1.0f;
    });
  }
  std::vector<ArgValue> args() {
    return {ArgValue::buf(*x, ElemType::f32, kN), ArgValue::buf(*y, ElemType::f32, kN),
            ArgValue(std::int32_t{kN})};
  }
  KernelDef def() {
    KernelDef d;
    d.name = "scale_kernel";
    d.sources = {sim_source()};
    d.signature.buffer("x", ElemType::f32).buffer("y", ElemType::f32).scalar("n", ElemType::i32);
    d.space = bm_space({16, 32, 64, 128});
    d.key = {KeySpec::exact("n")};
    d.dims = [](const Config&, ArgList) { return LaunchDims{{1, 1, 1}, {64, 1, 1}, 0}; };
    return d;
  }
};

}  // namespace

TEST_CASE("last-level cache: the backend's size, the default, TUNE_LLC_BYTES and the flush size") {
  ScopedEnv unset("TUNE_LLC_BYTES", nullptr);
  DeviceInfo info;
  set_last_level_cache(info, 50ull << 20, CacheSizeSource::reported);
  CHECK(info.llc_bytes == 50ull << 20);
  CHECK(info.llc_source == CacheSizeSource::reported);
  CHECK(flush_bytes_for(info) == 100ull << 20);  // twice the cache

  set_last_level_cache(info, 0, CacheSizeSource::reported, 8ull << 20);
  CHECK(info.llc_bytes == 8ull << 20);
  CHECK(info.llc_source == CacheSizeSource::default_size);
  CHECK(to_string(info.llc_source) == "default");

  info.llc_bytes = 3 * (1ull << 20) / 2;  // 1.5 MiB: the flush rounds up to whole MiB
  CHECK(flush_bytes_for(info) == 3ull << 20);
  info.llc_bytes = 0;  // never filled: the default
  CHECK(flush_bytes_for(info) == 2 * kDefaultLlcBytes);

  SUBCASE("TUNE_LLC_BYTES wins over what the device reports") {
    ScopedEnv env("TUNE_LLC_BYTES", "96MiB");
    set_last_level_cache(info, 50ull << 20, CacheSizeSource::reported);
    CHECK(info.llc_bytes == 96ull << 20);
    CHECK(info.llc_source == CacheSizeSource::user);
    CHECK(flush_bytes_for(info) == 192ull << 20);
    SimDevice dev(info);
    CHECK(dev.flush_bytes() == 192ull << 20);
  }
  SUBCASE("an invalid TUNE_LLC_BYTES is ignored") {
    ScopedEnv env("TUNE_LLC_BYTES", "lots");
    set_last_level_cache(info, 50ull << 20, CacheSizeSource::reported);
    CHECK(info.llc_bytes == 50ull << 20);
    CHECK(info.llc_source == CacheSizeSource::reported);
  }
}

TEST_CASE("last-level cache: byte sizes and AMD's Infinity Cache table") {
  CHECK(parse_byte_size("268435456").value() == 256ull << 20);
  CHECK(parse_byte_size("256M").value() == 256ull << 20);
  CHECK(parse_byte_size("96MiB").value() == 96ull << 20);
  CHECK(parse_byte_size("2g").value() == 2ull << 30);
  CHECK(parse_byte_size("64kb").value() == 64ull << 10);
  for (const char* bad : {"", "0", "M", "12Q", "1.5M", "-4", "99999999999999999999"}) {
    CAPTURE(bad);
    auto r = parse_byte_size(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::invalid_argument);
    CHECK(r.status().message().find("'" + std::string(bad) + "'") != std::string::npos);
  }
  CHECK(byte_size_text(12) == "12 B");
  CHECK(byte_size_text(512ull << 10) == "512.0 KiB");
  CHECK(byte_size_text(3ull << 19) == "1.5 MiB");
  CHECK(byte_size_text(2ull << 30) == "2.0 GiB");
  CHECK(amd_infinity_cache_bytes("gfx942") == 256ull << 20);  // MI300
  CHECK(amd_infinity_cache_bytes("gfx1030") == 128ull << 20);
  CHECK(amd_infinity_cache_bytes("gfx1100") == 96ull << 20);
  CHECK(amd_infinity_cache_bytes("gfx90a") == 0);  // MI200: no Infinity Cache
  CHECK(amd_infinity_cache_bytes("sm_90") == 0);
}

TEST_CASE("InputRotation: copies of the inputs, taken in turn, set 0 the caller's") {
  ScaleRig rig(64ull << 10);  // x and y are 16 KiB each: 4 sets of 32 KiB exceed 2 x 64 KiB
  auto args = rig.args();
  auto rot = InputRotation::make(rig.dev, args, {}, 0);
  REQUIRE(rot.ok());
  REQUIRE(rot->active());
  CHECK(rot->fallback().empty());
  CHECK(rot->input_bytes() == 2 * ScaleRig::kN * sizeof(float));
  REQUIRE(rot->sets() == 4);
  CHECK(rot->copy_bytes() == 3 * rot->input_bytes());
  std::vector<const DeviceBuffer*> xs_in_turn;
  for (std::size_t i = 0; i < 2 * rot->sets(); ++i) {
    ArgList set = rot->next();
    REQUIRE(set.size() == args.size());
    xs_in_turn.push_back(set[0].buffer);
    CHECK(set[2].bits == args[2].bits);  // scalars travel unchanged
    CHECK(set[0].count == args[0].count);
    // Every copy holds the caller's input.
    CHECK(rig.dev.read<float>(*set[0].buffer) == rig.xs);
  }
  CHECK(xs_in_turn[0] == rig.x.get());
  CHECK(std::set<const DeviceBuffer*>(xs_in_turn.begin(), xs_in_turn.end()).size() == 4);
  for (std::size_t i = 0; i < 4; ++i) CHECK(xs_in_turn[i] == xs_in_turn[i + 4]);

  SUBCASE("time_reps runs each repetition on the next set, without a flush") {
    rig.seen_x.clear();
    const auto flushes = rig.dev.flushes();
    auto k = rig.dev.compile(sim_source(), Config()).value();
    TimingPolicy opts = resolve_timing(tiny_bench(), Effort::standard);
    opts.cache = TimingCache::rotate;
    auto t = time_reps(rig.dev, *k, LaunchDims{{1, 1, 1}, {64, 1, 1}, 0}, args, opts, 8, {}, &*rot);
    REQUIRE(t.ok());
    CHECK(t->size() == 8);
    CHECK(rig.dev.flushes() == flushes);
    CHECK(rig.seen_x == xs_in_turn);
  }
}

TEST_CASE(
    "InputRotation: buffers the resets name stay the caller's; nothing to rotate falls back") {
  ScaleRig rig(64ull << 10);
  auto args = rig.args();
  LaunchResets resets;
  resets.zero = {rig.y.get()};
  auto rot = InputRotation::make(rig.dev, args, resets, 0);
  REQUIRE(rot.ok());
  REQUIRE(rot->active());
  CHECK(rot->input_bytes() == ScaleRig::kN * sizeof(float));  // x only
  for (std::size_t i = 0; i < rot->sets(); ++i) CHECK(rot->next()[1].buffer == rig.y.get());

  {
    ScaleRig tiny(1ull << 30);  // 32 KiB of inputs against 2 GiB: far too many sets
    auto many = InputRotation::make(tiny.dev, tiny.args(), {}, 0);
    REQUIRE(many.ok());
    CHECK_FALSE(many->active());
    CHECK(many->fallback() ==
          "inputs of 32.0 KiB need 65536 sets to exceed twice the 1.0 GiB last-level cache, more "
          "than 256");
    CHECK(tiny.dev.live_buffers() == 2);
  }

  resets.restore = {{rig.x.get(), rig.y.get()}};
  auto none = InputRotation::make(rig.dev, args, resets, 0);
  REQUIRE(none.ok());
  CHECK_FALSE(none->active());
  CHECK(none->fallback().find("no input buffer") != std::string::npos);
}

TEST_CASE("Autotuner with rotating inputs: timed launches read copies, the output is right") {
  ScaleRig rig(64ull << 10);
  AutotunerOptions opts = quiet_options();
  opts.bench.cache = TimingCache::rotate;
  auto tuner = make_tuner(rig.def(), opts);
  auto args = rig.args();
  REQUIRE(tuner->run(rig.dev, args).ok());
  auto report = tuner->last_report(rig.dev, args);
  REQUIRE(report);
  CHECK(report->timing_cache == TimingCache::rotate);
  CHECK(best_of(*tuner, rig.dev, args) == "BM=64");
  // The caller's output holds the reference result, from the call's own launch on its buffers.
  std::vector<float> want;
  for (float v : rig.xs) want.push_back(3.0f * v + 1.0f);
  CHECK(rig.dev.read<float>(*rig.y) == want);
  CHECK(rig.seen_x.back() == rig.x.get());
  // Timed launches read all four sets; only the untimed estimates flush.
  CHECK(std::set<const DeviceBuffer*>(rig.seen_x.begin(), rig.seen_x.end()).size() == 4);
  CHECK(rig.dev.flushes() < rig.dev.timed_reps());
  // The copies were freed with the tuning: x, y and nothing else remain.
  CHECK(rig.dev.live_buffers() == 2);
}

TEST_CASE("Autotuner with rotating inputs over the memory cap: falls back to the flush, reported") {
  ScaleRig rig(64ull << 10);
  AutotunerOptions opts = quiet_options();
  opts.bench.cache = TimingCache::rotate;
  opts.bench.expert.rotate_max_bytes = 32ull << 10;  // 96 KiB of copies needed
  auto tuner = make_tuner(rig.def(), opts);
  auto args = rig.args();
  REQUIRE(tuner->run(rig.dev, args).ok());
  auto report = tuner->last_report(rig.dev, args);
  REQUIRE(report);
  CHECK(report->timing_cache == TimingCache::flush);
  CHECK(rig.dev.flushes() == rig.dev.timed_reps());  // every timed launch flushed
  CHECK(std::set<const DeviceBuffer*>(rig.seen_x.begin(), rig.seen_x.end()).size() == 1);

  auto rot = InputRotation::make(rig.dev, args, {}, *opts.bench.expert.rotate_max_bytes);
  REQUIRE(rot.ok());
  CHECK_FALSE(rot->active());
  CHECK(rot->fallback() ==
        "rotating 4 sets of 32.0 KiB of inputs (together twice the 64.0 KiB last-level cache) "
        "needs 96.0 KiB of copies, over the 32.0 KiB cap (BenchOptions::expert.rotate_max_bytes)");
}

TEST_CASE("InputRotation: a copy the device has no memory for falls back, the copies made freed") {
  ScaleRig rig(64ull << 10);  // 4 sets: 3 x 32 KiB of copies, well within the default cap
  const std::uint64_t live = rig.dev.live_bytes();
  REQUIRE(rig.dev.live_buffers() == 2);
  rig.dev.fail_alloc_over(live + (48ull << 10));  // set 1's x and y fit, and set 2's x
  auto rot = InputRotation::make(rig.dev, rig.args(), {}, 0);
  REQUIRE_MESSAGE(rot.ok(), rot.status().to_string());
  CHECK_FALSE(rot->active());
  CHECK(rot->sets() == 0);
  CHECK(rot->copy_bytes() == 0);
  CHECK(rot->fallback() ==
        "allocating rotating input copy 2 of 3 failed: simulated alloc of 16384 bytes: out of "
        "device memory (live buffers would hold 98304 bytes, over the 81920 of "
        "SimDevice::fail_alloc_over)");
  // The three copies made before the failure are gone: only x and y remain.
  CHECK(rig.dev.live_buffers() == 2);
  CHECK(rig.dev.live_bytes() == live);

  // The flush check (on a device without the rig's kernel body) reports the same fallback
  // and times no rotating read.
  SimDevice dev(small_cache_info(1ull << 20));
  dev.fail_alloc_over((512ull << 10) + 4 + (256ull << 10));  // its buffers fit, no copy does
  FlushCheckOptions fc;
  fc.reps = 3;
  auto r = measure_flush_effect(dev, fc);
  REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  CHECK(r->rotate_sets == 0);
  CHECK(r->rotate_ns == 0);
  CHECK(r->rotate_fallback.rfind("allocating rotating input copy 1 of 3 failed: ", 0) == 0);
  CHECK(r->rotate_fallback.find("out of device memory") != std::string::npos);
  CHECK(dev.live_buffers() == 0);
  CHECK(dev.live_bytes() == 0);
}

TEST_CASE("Autotuner with rotating inputs out of device memory: flushes, warns, leaks nothing") {
  ScaleRig rig(64ull << 10);
  const std::uint64_t live = rig.dev.live_bytes();
  rig.dev.fail_alloc_over(live + (48ull << 10));  // as above: the third copy fails
  AutotunerOptions opts = quiet_options();
  opts.bench.cache = TimingCache::rotate;
  auto tuner = make_tuner(rig.def(), opts);
  auto args = rig.args();
  std::vector<std::string> warnings;
  LogSink old = set_log_sink([&warnings](LogLevel level, std::string_view m) {
    if (level == LogLevel::warning) warnings.emplace_back(m);
  });
  const Status st = tuner->run(rig.dev, args);
  set_log_sink(std::move(old));
  REQUIRE_MESSAGE(st.ok(), st.to_string());
  auto report = tuner->last_report(rig.dev, args);
  REQUIRE(report);
  CHECK(report->timing_cache == TimingCache::flush);
  CHECK(best_of(*tuner, rig.dev, args) == "BM=64");
  CHECK(rig.dev.flushes() == rig.dev.timed_reps());  // every timed launch flushed
  CHECK(std::set<const DeviceBuffer*>(rig.seen_x.begin(), rig.seen_x.end()).size() == 1);
  std::vector<float> want;
  for (float v : rig.xs) want.push_back(3.0f * v + 1.0f);
  CHECK(rig.dev.read<float>(*rig.y) == want);
  // The warning names the failed allocation.
  std::string all;
  int named = 0;
  for (const auto& w : warnings) {
    all += w + "\n";
    named += w.rfind(
                 "timing flushes instead: allocating rotating input copy 2 of 3 failed: "
                 "simulated alloc of 16384 bytes: out of device memory",
                 0) == 0;
  }
  CHECK_MESSAGE(named == 1, all);
  CHECK(rig.dev.live_buffers() == 2);
  CHECK(rig.dev.live_bytes() == live);
}

TEST_CASE("time_kernel: cache none never flushes, rotate flushes only the estimate") {
  ScaleRig rig(64ull << 10);
  auto k = rig.dev.compile(sim_source(), Config()).value();
  auto args = rig.args();
  BenchOptions opts = tiny_bench();
  opts.cache = TimingCache::none;
  REQUIRE(time_kernel(rig.dev, *k, LaunchDims{{1, 1, 1}, {64, 1, 1}, 0}, args, opts).ok());
  CHECK(rig.dev.flushes() == 0);
  opts.cache = TimingCache::rotate;
  const auto reps_before = rig.dev.timed_reps();
  REQUIRE(time_kernel(rig.dev, *k, LaunchDims{{1, 1, 1}, {64, 1, 1}, 0}, args, opts).ok());
  CHECK(rig.dev.flushes() == static_cast<std::uint64_t>(*opts.expert.estimate_runs));
  CHECK(rig.dev.timed_reps() - reps_before > rig.dev.flushes());
}

TEST_CASE("measure_flush_effect: warm, flushed and rotating reads on the simulated device") {
  SimDevice dev(small_cache_info(1ull << 20));
  FlushCheckOptions opts;
  opts.reps = 5;
  auto r = measure_flush_effect(dev, opts);
  REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  CHECK(r->llc_bytes == 1ull << 20);
  CHECK(r->flush_bytes == 2ull << 20);
  CHECK(r->buffer_bytes == 512ull << 10);  // half the cache
  CHECK(dev.flushes() == 5);               // the cold reads only
  CHECK(dev.timed_reps() == 15);           // warm, cold, rotating
  CHECK(r->rotate_sets == 4);              // 4 x (512 KiB + 4 bytes) >= 2 x 1 MiB
  CHECK(r->warm_ns > 0);
  CHECK(r->cold_ns > 0);
  CHECK(r->rotate_ns > 0);
  CHECK(r->to_string().find("flush writes 2.0 MiB") != std::string::npos);
  CHECK(dev.live_buffers() == 0);

  opts.reps = 0;
  auto bad = measure_flush_effect(dev, opts);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == StatusCode::invalid_argument);
  CHECK(bad.status().message().find("reps") != std::string::npos);
}
