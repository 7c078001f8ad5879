// bench_core: the Autotuner's own cost per call on a cache hit, on the simulated device.
//
// What is measured (each with 1 and 8 threads):
//   BM_SimLaunch        SimDevice::launch alone on a compiled kernel, in its cheapest mode
//                       (no events, no argument checks: a type check and one atomic add).
//   BM_AutotunerHit     Autotuner::run on a known key: signature check, key, lock-free table
//                       lookup, dims(), then the same SimDevice::launch.
//   BM_AutotunerHitBundled  the same hit by an Autotuner whose key was served by a bundle
//                       (tune/bundle.hpp: an empty database in front of one bundle, strict
//                       mode): a bundle must cost nothing on the hit path (target <= 1.02x).
//   BM_AutotunerHitKept, BM_AutotunerHitKeptRecording  the hit of a key the fallback chain
//                       served (FallbackPolicy::keep, nothing stored), without and with record
//                       mode (tune/record.hpp): recording touches only a key's first call, so
//                       the two must cost the same (target <= 1.02x).
//   BM_AutotunerHitDriftOn  the same hit with drift sampling on (AutotunerOptions::drift) and
//                       a period no run reaches: the cost of an unsampled hit (a relaxed load
//                       and store of the entry's countdown).
//   BM_KeyBuild         KeyBuilder::build alone (bucketing, buffer types, hash).
//   BM_SignatureCheck   KernelSignature::check alone (BM_SignatureCheckReference: the same
//                       checks with no message built on success, for comparison).
// The Autotuner's overhead per call is BM_AutotunerHit - BM_SimLaunch (target: < 100 ns).
// Both run in one process, side by side, so the difference is meaningful.
//
// Run: build-core/bench/bench_core --benchmark_min_time=0.2 (see bench/RESULTS.md).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "key_builder.hpp"
#include "tune/testing/sim_device.hpp"
#include "tune/tune.hpp"

namespace {

using tune::ArgValue;
using tune::ElemType;
using tune::testing::SimDevice;

// One device, one tuned Autotuner (key M, N pow2-bucketed plus buffer types) and one compiled
// kernel, shared by every benchmark and thread. Built on first use (thread-safe static).
struct Harness {
  SimDevice dev;
  tune::Buffer a, b, c;
  std::unique_ptr<tune::CompiledKernel> kernel;  // for BM_SimLaunch
  std::unique_ptr<tune::Autotuner> tuner;
  std::unique_ptr<tune::Autotuner> bundled;    // the same kernel, its key served by a bundle
  std::unique_ptr<tune::Autotuner> kept;       // its key served by the fallback chain
  std::unique_ptr<tune::Autotuner> recording;  // the same, recorded (record mode)
  std::unique_ptr<tune::Autotuner> drifting;   // drift sampling on, its period never reached
  tune::KeyBuilder keys;
  tune::KernelSignature signature;

  Harness() {
    dev.set_fast_launch(true);
    a = dev.alloc(1 << 20).value();
    b = dev.alloc(1 << 20).value();
    c = dev.alloc(1 << 20).value();

    tune::KernelDef def;
    def.name = "bench_matmul";
    def.sources = {{tune::Language::simulated, "bench_matmul", "// simulated"}};
    def.signature.buffer("a", ElemType::f16).buffer("b", ElemType::f16).buffer("c", ElemType::f32);
    def.signature.scalar("M", ElemType::i32).scalar("N", ElemType::i32).scalar("K", ElemType::i32);
    def.space.param("BM", {32, 64, 128}).param("BN", {32, 64, 128});
    def.key = {tune::KeySpec::pow2("M"), tune::KeySpec::pow2("N"), tune::KeySpec::exact("K")};
    def.dims = [](const tune::Config& cfg, tune::ArgList args) {
      tune::LaunchDims d;
      const auto bm = static_cast<std::uint32_t>(cfg.get_int("BM", 64));
      const auto bn = static_cast<std::uint32_t>(cfg.get_int("BN", 64));
      d.grid = {(static_cast<std::uint32_t>(args[3].as_int()) + bm - 1) / bm,
                (static_cast<std::uint32_t>(args[4].as_int()) + bn - 1) / bn, 1};
      d.block = {256, 1, 1};
      return d;
    };
    signature = def.signature;
    keys = tune::KeyBuilder::make(def.signature, def.key).value();
    kernel = dev.compile(def.sources[0],
                         tune::Config{{"BM", std::int64_t{64}}, {"BN", std::int64_t{64}}})
                 .value();

    tune::AutotunerOptions opts;
    opts.persistent = false;
    opts.print = false;
    opts.bench.warmup_ms = 0.01;
    opts.bench.rep_ms = 0.05;
    tuner = tune::Autotuner::make(def, opts).value();
    auto args = make_args();
    tune::throw_if_error(tuner->run(dev, args));  // tune once: every later call is a hit
    tune::AutotunerOptions sampled = opts;
    sampled.drift.sample_period = 0xFFFFFFFFu;
    drifting = tune::Autotuner::make(def, sampled).value();
    tune::throw_if_error(drifting->run(dev, args));
    make_kept(def, opts);
    make_bundled(std::move(def), opts);
  }

  // Two Autotuners whose key the fallback chain serves (keep: never tuned), the second with
  // record mode on: its first call appends the key's line, every later call is a hit.
  void make_kept(const tune::KernelDef& def, tune::AutotunerOptions opts) {
    namespace fs = std::filesystem;
    const fs::path file =
        fs::temp_directory_path() / ("bench_core-" + std::to_string(::getpid()) + ".jsonl");
    opts.fallback = tune::FallbackPolicy::keep;
    opts.record.clear();
    kept = tune::Autotuner::make(def, opts).value();
    opts.record = file.string();
    recording = tune::Autotuner::make(def, opts).value();
    auto args = make_args();
    tune::throw_if_error(kept->run(dev, args));
    tune::throw_if_error(recording->run(dev, args));
    std::ifstream in(file);
    std::string line;
    if (!std::getline(in, line)) throw std::runtime_error("record mode wrote no line");
    fs::remove(file);
  }

  // Tunes into a database, bundles it, then serves the key from the bundle alone.
  void make_bundled(tune::KernelDef def, tune::AutotunerOptions opts) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("bench_core-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string db = (dir / "tune.db").string();
    const std::string bundle = (dir / "app.tunebundle").string();
    opts.store = tune::SqliteStore::open(db);
    auto farm = tune::Autotuner::make(def, opts).value();
    auto args = make_args();
    tune::throw_if_error(farm->run(dev, args));
    tune::throw_if_error(tune::create_bundle(db, bundle).status());
    opts.store = tune::SqliteStore::open(":memory:");
    opts.bundles = {bundle};
    opts.strict = true;
    bundled = tune::Autotuner::make(std::move(def), opts).value();
    tune::throw_if_error(bundled->run(dev, args));  // served by the bundle, not timed
    fs::remove_all(dir);
  }

  std::vector<ArgValue> make_args() {
    return {ArgValue::buf(*a, ElemType::f16, 4096), ArgValue::buf(*b, ElemType::f16, 4096),
            ArgValue::buf(*c, ElemType::f32, 4096), ArgValue(std::int32_t{1000}),
            ArgValue(std::int32_t{1000}),           ArgValue(std::int32_t{64})};
  }
};

Harness& harness() {
  static Harness h;
  return h;
}

void BM_SimLaunch(benchmark::State& state) {
  Harness& h = harness();
  const auto args = h.make_args();
  const tune::LaunchDims dims{{16, 16, 1}, {256, 1, 1}, 0};
  for (auto _ : state) {
    tune::Status st = h.dev.launch(*h.kernel, dims, args);
    benchmark::DoNotOptimize(st);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_AutotunerHit(benchmark::State& state) {
  Harness& h = harness();
  const auto args = h.make_args();
  for (auto _ : state) {
    tune::Status st = h.tuner->run(h.dev, args);
    benchmark::DoNotOptimize(st);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_AutotunerHitBundled(benchmark::State& state) {
  Harness& h = harness();
  const auto args = h.make_args();
  for (auto _ : state) {
    tune::Status st = h.bundled->run(h.dev, args);
    benchmark::DoNotOptimize(st);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_AutotunerHitKept(benchmark::State& state) {
  Harness& h = harness();
  const auto args = h.make_args();
  for (auto _ : state) {
    tune::Status st = h.kept->run(h.dev, args);
    benchmark::DoNotOptimize(st);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_AutotunerHitKeptRecording(benchmark::State& state) {
  Harness& h = harness();
  const auto args = h.make_args();
  for (auto _ : state) {
    tune::Status st = h.recording->run(h.dev, args);
    benchmark::DoNotOptimize(st);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_AutotunerHitDriftOn(benchmark::State& state) {
  Harness& h = harness();
  const auto args = h.make_args();
  for (auto _ : state) {
    tune::Status st = h.drifting->run(h.dev, args);
    benchmark::DoNotOptimize(st);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_KeyBuild(benchmark::State& state) {
  Harness& h = harness();
  const auto args = h.make_args();
  const std::uint64_t device_hash = h.dev.info().fingerprint_hash();
  for (auto _ : state) {
    tune::TuningKey key = h.keys.build(args, device_hash);
    benchmark::DoNotOptimize(key.hash);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_SignatureCheck(benchmark::State& state) {
  Harness& h = harness();
  const auto args = h.make_args();
  for (auto _ : state) {
    tune::Status st = h.signature.check(args);
    benchmark::DoNotOptimize(st);
  }
  state.SetItemsProcessed(state.iterations());
}

// Reference point for BM_SignatureCheck: the same checks (count, kind, type, null buffer)
// with no message built on success. The gap between the two is what building the per-argument
// error context eagerly costs on every call.
bool check_without_messages(const tune::KernelSignature& sig, tune::ArgList args) noexcept {
  if (args.size() != sig.size()) return false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& d = sig.decls()[i];
    const auto& a = args[i];
    if (a.kind != d.kind || a.type != d.type) return false;
    if (a.kind == tune::ArgKind::buffer && a.buffer == nullptr) return false;
  }
  return true;
}

void BM_SignatureCheckReference(benchmark::State& state) {
  Harness& h = harness();
  const auto args = h.make_args();
  for (auto _ : state) {
    bool ok = check_without_messages(h.signature, args);
    benchmark::DoNotOptimize(ok);
  }
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_SimLaunch)->Threads(1)->Threads(8)->UseRealTime();
BENCHMARK(BM_AutotunerHit)->Threads(1)->Threads(8)->UseRealTime();
BENCHMARK(BM_AutotunerHitBundled)->Threads(1)->Threads(8)->UseRealTime();
BENCHMARK(BM_AutotunerHitKept)->Threads(1)->Threads(8)->UseRealTime();
BENCHMARK(BM_AutotunerHitKeptRecording)->Threads(1)->Threads(8)->UseRealTime();
BENCHMARK(BM_AutotunerHitDriftOn)->Threads(1)->Threads(8)->UseRealTime();
BENCHMARK(BM_KeyBuild)->Threads(1)->Threads(8)->UseRealTime();
BENCHMARK(BM_SignatureCheck)->Threads(1)->Threads(8)->UseRealTime();
BENCHMARK(BM_SignatureCheckReference)->Threads(1)->Threads(8)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
