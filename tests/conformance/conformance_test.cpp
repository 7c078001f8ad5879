// The conformance suite: what every backend's Device must do, checked on real outputs.
//
// Built once per backend (tests/conformance/CMakeLists.txt) with TUNE_CONFORMANCE_BACKEND set
// to its registry name. Each case opens its own device; a backend that cannot open one skips
// with the reason (Vulkan in CI fails instead: lavapipe must be there). No case asserts that
// one configuration is faster than another.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "conformance_unsupported.hpp"
#include "skip.hpp"
#include "tune/kernels/bundled.hpp"
#include "tune/tune.hpp"
#include "vulkan_env.hpp"

#ifndef TUNE_CONFORMANCE_BACKEND
#error "TUNE_CONFORMANCE_BACKEND must name the backend under test"
#endif

namespace {

using namespace tune;
using tune::kernels::BundledKernel;
using tune::kernels::Workload;

constexpr const char* kBackend = TUNE_CONFORMANCE_BACKEND;

// Before any Vulkan instance exists: lavapipe unless a device was asked for.
const bool kVulkanEnv =
    std::string(kBackend) == "vulkan" && tune::testing::use_lavapipe_unless_asked();

std::unique_ptr<Device> open_or_skip() {
  (void)kVulkanEnv;
  auto dev = open_device(kBackend);
  if (dev.ok()) return std::move(*dev);
  const std::string why =
      "cannot open a " + std::string(kBackend) + " device: " + dev.status().to_string();
  if (std::string(kBackend) == "vulkan" && tune::testing::in_ci()) {
    FAIL(why << " (CI must run the Vulkan tests on lavapipe: install mesa-vulkan-drivers)");
  }
  TUNE_SKIP(why);
}

// The backend's "unsupported, because" entry for `feature` (backends/<name>/backend.cmake), or
// null when the backend supports it.
const tune::testing::Unsupported* unsupported(std::string_view feature) {
  for (const auto& u : tune::testing::unsupported_features())
    if (feature == u.feature) return &u;
  return nullptr;
}

// For a listed feature: the backend must refuse it with the listed status code (`refusal`,
// the status of the attempt), then the case skips with the listed reason.
void skip_if_unsupported(std::string_view feature, const Status& refusal) {
  const auto* u = unsupported(feature);
  if (u == nullptr) return;
  CHECK_MESSAGE(refusal.code() == u->code, refusal.to_string());
  TUNE_SKIP(std::string(feature) + " is unsupported by " + kBackend + ", because " + u->because);
}

std::string size_name(const std::vector<std::int64_t>& s) {
  std::string out;
  for (auto v : s) out += (out.empty() ? "" : "x") + std::to_string(v);
  return out;
}

// Every configuration the space accepts on this device, at every test size: compiled,
// launched on fresh random inputs and checked against the CPU reference.
void check_every_config(std::string_view name) {
  auto dev = open_or_skip();
  const std::optional<BundledKernel> k = kernels::bundled_kernel(dev->language(), name);
  if (!k) TUNE_SKIP(std::string(name) + " is not bundled for this backend's language");
  const KernelSource* src = k->def.source_for(dev->language());
  REQUIRE(src != nullptr);
  auto configs = k->def.space.enumerate(dev->info());
  REQUIRE_MESSAGE(configs.ok(), configs.status().to_string());
  REQUIRE(!configs->empty());
  MESSAGE(name << ": " << configs->size() << " configs on " << dev->info().name);

  std::vector<std::unique_ptr<CompiledKernel>> compiled;
  int unavailable = 0;
  for (const Config& c : *configs) {
    auto ck = dev->compile(*src, c);
    if (!ck.ok() && ck.status().code() == StatusCode::unavailable) {
      // A device feature the variant needs is missing (e.g. f16 storage): not a failure of
      // the backend, but say so.
      MESSAGE("unavailable on this device: " << c.to_string() << ": " << ck.status().message());
      ++unavailable;
      compiled.emplace_back();
      continue;
    }
    REQUIRE_MESSAGE(ck.ok(), c.to_string() << ": " << ck.status().to_string());
    compiled.push_back(std::move(*ck));
  }
  if (unavailable == static_cast<int>(configs->size()))
    TUNE_SKIP(std::string(name) + ": every config needs a feature this device lacks");

  std::uint64_t seed = 1234;
  for (const auto& size : k->test_sizes) {
    auto w = k->workload(size);
    REQUIRE(w != nullptr);
    const Status setup = w->setup(*dev, seed++);
    REQUIRE_MESSAGE(setup.ok(), setup.to_string());
    for (std::size_t i = 0; i < configs->size(); ++i) {
      if (!compiled[i]) continue;
      const Config& c = (*configs)[i];
      CAPTURE(c.to_string());
      CAPTURE(size_name(size));
      REQUIRE(w->poison_outputs(*dev).ok());
      REQUIRE(k->def.zero_reset_buffers(*dev, w->args()).ok());
      const LaunchDims dims = k->def.dims(c, w->args());
      const Status ls = dev->launch(*compiled[i], dims, w->args());
      REQUIRE_MESSAGE(ls.ok(), ls.to_string());
      const Status cs = w->check(*dev);
      CHECK_MESSAGE(cs.ok(), cs.to_string());
    }
  }
  compiled.clear();  // before the device
}

// Tunes the kernel at its first test size through the Autotuner and checks the winner's
// output. Never asserts which configuration wins.
void check_autotuner(std::string_view name) {
  auto dev = open_or_skip();
  const std::optional<BundledKernel> k = kernels::bundled_kernel(dev->language(), name);
  if (!k) TUNE_SKIP(std::string(name) + " is not bundled for this backend's language");
  AutotunerOptions opts;
  opts.persistent = false;  // never the user's disk cache
  opts.bench.warmup_ms = 1;
  opts.bench.rep_ms = 5;
  opts.bench.expert.max_reps = 20;
  TuningReport seen;
  int reports = 0;
  opts.listener = [&](const TuningReport& r) {
    seen = r;
    ++reports;
  };
  auto tuner = Autotuner::make(k->def, opts);
  REQUIRE_MESSAGE(tuner.ok(), tuner.status().to_string());

  auto w = k->workload(k->test_sizes.front());
  REQUIRE(w->setup(*dev, 99).ok());
  auto best = (*tuner)->tune(*dev, w->args());
  // Every configuration needs a device feature this device lacks: decided by each result's
  // status code (the listener hears failed tunings too), never by the message text.
  if (!best.ok() && best.status().code() == StatusCode::all_failed && !seen.results.empty() &&
      std::all_of(seen.results.begin(), seen.results.end(), [](const ConfigResult& r) {
        return r.status.code() == StatusCode::unavailable;
      })) {
    TUNE_SKIP(std::string(name) + ": " + best.status().to_string());
  }
  REQUIRE_MESSAGE(best.ok(), best.status().to_string());
  CHECK(reports == 1);
  CHECK(seen.winner == *best);
  auto configs = k->def.space.enumerate(dev->info());
  REQUIRE(configs.ok());
  CHECK(std::find(configs->begin(), configs->end(), *best) != configs->end());
  int ok_results = 0;
  for (const auto& r : seen.results) {
    if (!r.status.ok()) continue;
    ++ok_results;
    CHECK(r.stats.median > 0);
    CHECK(std::isfinite(r.stats.median));
  }
  CHECK(ok_results >= 1);

  // The winner's output, after tuning, from a fresh launch through run().
  REQUIRE(w->poison_outputs(*dev).ok());
  REQUIRE(k->def.zero_reset_buffers(*dev, w->args()).ok());
  const Status rs = (*tuner)->run(*dev, w->args());
  REQUIRE_MESSAGE(rs.ok(), rs.to_string());
  const Status cs = w->check(*dev);
  CHECK_MESSAGE(cs.ok(), cs.to_string());
  // A second call with the same key is served from memory.
  auto again = (*tuner)->tune(*dev, w->args());
  REQUIRE(again.ok());
  CHECK(*again == *best);
  CHECK(reports == 1);
  tuner->reset();  // before the device
}

// A source that cannot compile, in the device's language.
KernelSource broken_source(Language lang) {
  if (lang == Language::glsl) {
    return {Language::glsl, "main",
            "#version 450\nlayout(local_size_x_id = 0) in;\n"
            "layout(std430, binding = 0) buffer B { float b[]; };\n"
            "void main() { b[gl_GlobalInvocationID.x] = undeclared_identifier_xyz; }\n"};
  }
  return {lang, "broken",
          "extern \"C\" __global__ void broken(float* b) { b[threadIdx.x] = "
          "undeclared_identifier_xyz; }\n"};
}

}  // namespace

TEST_CASE("device opens and its info is sane") {
  auto dev = open_or_skip();
  const DeviceInfo& info = dev->info();
  CHECK(info.backend == kBackend);
  CHECK(!info.name.empty());
  CHECK(!info.vendor.empty());
  CHECK(!info.arch.empty());
  CHECK(!info.driver_version.empty());
  CHECK(!info.compiler_version.empty());
  CHECK(info.max_threads_per_block >= 64);
  CHECK(info.max_block.x >= 64);
  CHECK(info.max_block.x <= info.max_threads_per_block);
  CHECK(info.max_grid.x >= 65535);
  CHECK(info.shared_bytes_per_block >= 16384);
  CHECK(info.shared_bytes_per_block_optin >= info.shared_bytes_per_block);
  CHECK(info.warp_size >= 1);
  CHECK(info.timer_resolution_ns > 0);
  CHECK(info.global_memory_bytes > 0);
  CHECK(info.fingerprint().find(info.name) != std::string::npos);
  MESSAGE(info.name << " | " << info.arch << " | " << info.driver_version << " | "
                    << info.compiler_version);
  CHECK(!kernels::bundled_kernels(dev->language()).empty());
}

TEST_CASE("buffers: upload, download, fill, copy round trip") {
  auto dev = open_or_skip();
  constexpr std::size_t n = 100003;  // odd: not a multiple of any block
  std::vector<std::uint32_t> data(n);
  std::mt19937 rng(7);
  for (auto& v : data) v = rng();
  auto a = dev->alloc(n * 4);
  auto b = dev->alloc(n * 4);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK((*a)->size_bytes() == n * 4);
  REQUIRE(dev->upload(**a, data.data(), n * 4).ok());
  std::vector<std::uint32_t> back(n, 0);
  REQUIRE(dev->download(**a, back.data(), n * 4).ok());
  CHECK(back == data);

  // Partial download at an offset.
  std::vector<std::uint32_t> part(100);
  REQUIRE(dev->download(**a, part.data(), 400, 4000).ok());
  CHECK(std::equal(part.begin(), part.end(), data.begin() + 1000));

  // Fill a middle range; the rest is untouched.
  REQUIRE(dev->fill(**a, 0xdeadbeefu, 4 * 500, 4 * 20).ok());
  REQUIRE(dev->download(**a, back.data(), n * 4).ok());
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t want = (i >= 20 && i < 520) ? 0xdeadbeefu : data[i];
    if (back[i] != want) {
      FAIL("fill: element " << i << " is " << back[i] << ", expected " << want);
    }
  }

  // Device-to-device copy.
  REQUIRE(dev->fill(**b, 0, n * 4).ok());
  REQUIRE(dev->copy(**b, **a, n * 4).ok());
  std::vector<std::uint32_t> copied(n);
  REQUIRE(dev->download(**b, copied.data(), n * 4).ok());
  CHECK(copied == back);
  CHECK(dev->synchronize().ok());
}

TEST_CASE("buffers: out-of-range requests are invalid_argument") {
  auto dev = open_or_skip();
  auto a = dev->alloc(64);
  REQUIRE(a.ok());
  std::vector<std::uint8_t> host(128);
  CHECK(dev->upload(**a, host.data(), 65).code() == StatusCode::invalid_argument);
  CHECK(dev->upload(**a, host.data(), 8, 60).code() == StatusCode::invalid_argument);
  CHECK(dev->download(**a, host.data(), 128).code() == StatusCode::invalid_argument);
  CHECK(dev->fill(**a, 0, 68).code() == StatusCode::invalid_argument);
  CHECK(dev->fill(**a, 0, 6).code() == StatusCode::invalid_argument);  // not a multiple of 4
  auto small = dev->alloc(32);
  REQUIRE(small.ok());
  CHECK(dev->copy(**small, **a, 64).code() == StatusCode::invalid_argument);
  CHECK(dev->alloc(0).status().code() == StatusCode::invalid_argument);
}

TEST_CASE("every config verified: vector_add") { check_every_config("vector_add"); }
TEST_CASE("every config verified: reduce_sum") { check_every_config("reduce_sum"); }
TEST_CASE("every config verified: matmul_f32") { check_every_config("matmul_f32"); }
TEST_CASE("every config verified: matmul_f16") { check_every_config("matmul_f16"); }

TEST_CASE("timing: one sample per rep, positive and finite, output still correct") {
  auto dev = open_or_skip();
  const std::optional<BundledKernel> k = kernels::bundled_kernel(dev->language(), "vector_add");
  REQUIRE(k.has_value());
  auto w = k->workload(std::vector<std::int64_t>{1 << 18});
  REQUIRE(w->setup(*dev, 5).ok());
  auto ck = dev->compile(*k->def.source_for(dev->language()), k->default_config);
  REQUIRE_MESSAGE(ck.ok(), ck.status().to_string());
  const LaunchDims dims = k->def.dims(k->default_config, w->args());
  for (bool flush : {false, true}) {
    CAPTURE(flush);
    TimingPlan plan;
    plan.reps = 7;
    plan.flush_l2 = flush;
    auto t = dev->time(**ck, dims, w->args(), plan);
    REQUIRE_MESSAGE(t.ok(), t.status().to_string());
    REQUIRE(t->size() == 7);
    for (double ns : *t) {
      CHECK(std::isfinite(ns));
      CHECK(ns > 0);  // 2^18 adds is never free, on any device
    }
  }
  // A reset of a buffer from another device (or a null one) is refused before any launch.
  TimingPlan plan;
  plan.reps = 3;
  plan.resets.zero = {nullptr};
  CHECK(dev->time(**ck, dims, w->args(), plan).status().code() == StatusCode::invalid_argument);
  plan.resets = {};
  plan.reps = 0;
  CHECK(dev->time(**ck, dims, w->args(), plan).status().code() == StatusCode::invalid_argument);

  // time_kernel's statistics over the backend's samples.
  BenchOptions bo;
  bo.warmup_ms = 1;
  bo.rep_ms = 5;
  bo.expert.min_reps = 5;
  auto stats = time_kernel(*dev, **ck, dims, w->args(), bo);
  REQUIRE_MESSAGE(stats.ok(), stats.status().to_string());
  CHECK(stats->count >= 5u);
  CHECK(stats->min > 0);
  CHECK(stats->min <= stats->median);
  CHECK(stats->median <= stats->max);
}

TEST_CASE("timing: resets put buffers back before every timed launch, batched") {
  // reduce_sum adds its sum into out: after several timed launches out holds one launch's
  // sum only if every launch started from zero.
  auto dev = open_or_skip();
  const std::optional<BundledKernel> k = kernels::bundled_kernel(dev->language(), "reduce_sum");
  REQUIRE(k.has_value());
  REQUIRE(k->def.reset_to_zero.size() == 1);
  auto w = k->workload(std::vector<std::int64_t>{1 << 16});
  REQUIRE(w->setup(*dev, 9).ok());
  auto ck = dev->compile(*k->def.source_for(dev->language()), k->default_config);
  REQUIRE_MESSAGE(ck.ok(), ck.status().to_string());
  const LaunchDims dims = k->def.dims(k->default_config, w->args());
  const int out_index = k->def.signature.index_of(k->def.reset_to_zero.front());
  REQUIRE(out_index >= 0);
  DeviceBuffer& out = *w->args()[static_cast<std::size_t>(out_index)].buffer;
  auto zeros = dev->alloc(out.size_bytes());
  REQUIRE(zeros.ok());
  REQUIRE(dev->fill(**zeros, 0, LaunchResets::zero_bytes(out)).ok());

  for (bool restore : {false, true}) {
    CAPTURE(restore);
    for (bool flush : {false, true}) {
      CAPTURE(flush);
      REQUIRE(w->poison_outputs(*dev).ok());
      TimingPlan plan;
      plan.reps = 6;
      plan.flush_l2 = flush;
      if (restore)
        plan.resets.restore = {{&out, zeros->get()}};
      else
        plan.resets.zero = {&out};
      auto t = dev->time(**ck, dims, w->args(), plan);
      REQUIRE_MESSAGE(t.ok(), t.status().to_string());
      CHECK(t->size() == 6);
      const Status cs = w->check(*dev);
      CHECK_MESSAGE(cs.ok(), cs.to_string());
    }
  }
  // The control: without resets the sums compound and the output is wrong.
  REQUIRE(dev->fill(out, 0, LaunchResets::zero_bytes(out)).ok());
  TimingPlan plain;
  plain.reps = 6;
  REQUIRE(dev->time(**ck, dims, w->args(), plain).ok());
  CHECK_FALSE(w->check(*dev).ok());
}

TEST_CASE("failure: a broken kernel is compile_error with the compiler's log") {
  auto dev = open_or_skip();
  Config c;
  c.launch().block = {64, 1, 1};
  auto ck = dev->compile(broken_source(dev->language()), c);
  REQUIRE(!ck.ok());
  CHECK(ck.status().code() == StatusCode::compile_error);
  CHECK_MESSAGE(ck.status().message().find("undeclared_identifier_xyz") != std::string::npos,
                ck.status().message());
}

TEST_CASE("failure: an oversized workgroup is out_of_resources") {
  auto dev = open_or_skip();
  const std::optional<BundledKernel> k = kernels::bundled_kernel(dev->language(), "vector_add");
  REQUIRE(k.has_value());
  Config c = k->default_config;
  c.launch().block = {dev->info().max_threads_per_block * 2, 1, 1};
  auto w = k->workload(std::vector<std::int64_t>{4096});
  REQUIRE(w->setup(*dev, 3).ok());
  auto ck = dev->compile(*k->def.source_for(dev->language()), c);
  Status s = ck.status();
  if (ck.ok()) s = dev->launch(**ck, k->def.dims(c, w->args()), w->args());
  CHECK_MESSAGE(s.code() == StatusCode::out_of_resources, s.to_string());
  // The device is still usable afterwards.
  auto good = dev->compile(*k->def.source_for(dev->language()), k->default_config);
  REQUIRE(good.ok());
  REQUIRE(dev->launch(**good, k->def.dims(k->default_config, w->args()), w->args()).ok());
  CHECK(w->check(*dev).ok());
}

TEST_CASE("failure: wrong argument count or type is invalid_argument") {
  auto dev = open_or_skip();
  const std::optional<BundledKernel> k = kernels::bundled_kernel(dev->language(), "vector_add");
  REQUIRE(k.has_value());
  AutotunerOptions opts;
  opts.persistent = false;
  opts.bench.warmup_ms = 1;
  opts.bench.rep_ms = 2;
  auto tuner = Autotuner::make(k->def, opts);
  REQUIRE(tuner.ok());
  auto w = k->workload(std::vector<std::int64_t>{1000});
  REQUIRE(w->setup(*dev, 11).ok());
  ArgList args = w->args();
  // One argument short.
  Status s = (*tuner)->run(*dev, args.first(args.size() - 1));
  CHECK_MESSAGE(s.code() == StatusCode::invalid_argument, s.to_string());
  // n passed as a float.
  std::vector<ArgValue> wrong(args.begin(), args.end());
  wrong.back() = ArgValue(1000.0f);
  s = (*tuner)->run(*dev, wrong);
  CHECK_MESSAGE(s.code() == StatusCode::invalid_argument, s.to_string());
  // A buffer where a scalar belongs.
  wrong.back() = args[0];
  s = (*tuner)->run(*dev, wrong);
  CHECK_MESSAGE(s.code() == StatusCode::invalid_argument, s.to_string());
  tuner->reset();
}

TEST_CASE("autotuner end to end: vector_add") { check_autotuner("vector_add"); }
TEST_CASE("autotuner end to end: reduce_sum") { check_autotuner("reduce_sum"); }
TEST_CASE("autotuner end to end: matmul_f32") { check_autotuner("matmul_f32"); }
TEST_CASE("autotuner end to end: matmul_f16") { check_autotuner("matmul_f16"); }

TEST_CASE("launch options: dynamic shared memory is granted to the launch") {
  auto dev = open_or_skip();
  const std::optional<BundledKernel> k = kernels::bundled_kernel(dev->language(), "vector_add");
  REQUIRE(k.has_value());
  Config c = k->default_config;
  c.launch().shared_bytes = 1024;
  auto w = k->workload(std::vector<std::int64_t>{4096});
  REQUIRE(w->setup(*dev, 21).ok());
  auto ck = dev->compile(*k->def.source_for(dev->language()), c);
  LaunchDims dims = k->def.dims(c, w->args());
  dims.shared_bytes = 1024;
  Status s = ck.status();
  if (ck.ok()) {
    REQUIRE(w->poison_outputs(*dev).ok());
    REQUIRE(k->def.zero_reset_buffers(*dev, w->args()).ok());
    s = dev->launch(**ck, dims, w->args());
  }
  skip_if_unsupported("dynamic_shared_memory", s);
  REQUIRE_MESSAGE(s.ok(), s.to_string());
  const Status cs = w->check(*dev);
  CHECK_MESSAGE(cs.ok(), cs.to_string());
}
