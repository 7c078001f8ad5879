// Vulkan-backend tests beyond the conformance suite. On lavapipe by default
// (tests/support/vulkan_test_device.hpp); in CI (CI=true) a missing lavapipe fails instead of
// skipping.
#include <doctest/doctest.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "scoped_env.hpp"
#include "skip.hpp"
#include "tune/kernels/bundled.hpp"
#include "tune/tune.hpp"
#include "tune/vulkan.hpp"
#include "vulkan_test_device.hpp"

namespace {

using namespace tune;

using tune::testing::kVulkanTestEnv;
using tune::testing::open_vulkan_or_skip;
using tune::testing::ScopedEnv;
using tune::testing::skip_or_fail_without_vulkan;

// Built field by field: KernelSource may grow members (no brace list to keep in step).
KernelSource source(Language lang, std::string entry, std::string text) {
  KernelSource s;
  s.language = lang;
  s.entry = std::move(entry);
  s.text = std::move(text);
  return s;
}
KernelSource glsl(std::string text) { return source(Language::glsl, "main", std::move(text)); }

Config block(std::uint32_t x, std::uint32_t y = 1) {
  Config c;
  c.launch().block = {x, y, 1};
  return c;
}

const char* kPushShader = R"(#version 450
#extension GL_ARB_gpu_shader_int64 : require
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, binding = 0) buffer O { uint o[]; };
layout(std430, binding = 1) buffer D { double od[]; };
layout(push_constant) uniform P { int a; float b; int64_t c; double d; uint e; int f; };
void main() {
  if (gl_GlobalInvocationID.x != 0u) return;
  o[0] = uint(a);
  o[1] = floatBitsToUint(b);
  uvec2 cc = unpackUint2x32(uint64_t(c));
  o[2] = cc.x;
  o[3] = cc.y;
  o[4] = e;
  o[5] = uint(f);
  od[0] = d;
}
)";

// Each invocation runs a dependent chain of `iters` multiply-adds: long enough to outlast a
// 1 ms timeout on any device, and short enough (well under a second on lavapipe) to end.
const char* kSlowShader = R"(#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, binding = 0) buffer X { float x[]; };
layout(push_constant) uniform P { int iters; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  float acc = x[i];
  for (int k = 0; k < iters; ++k) acc = acc * 0.99999 + x[(i + uint(k)) & 1023u];
  x[i] = acc;
}
)";

// Counts, in bad[0], the invocations that find acc not zeroed or x not restored to x0, then
// accumulates into acc and changes x: every launch after the first would count without resets.
const char* kResetCheckShader = R"(#version 450
layout(push_constant) uniform P { int n; };
layout(std430, binding = 0) buffer B { uint bad[]; };
layout(std430, binding = 1) buffer X { float x[]; };
layout(std430, binding = 2) buffer A { float acc[]; };
layout(std430, binding = 3) buffer X0 { float x0[]; };
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i < uint(n)) {
    if (acc[i] != 0.0 || x[i] != x0[i]) atomicAdd(bad[0], 1u);
    acc[i] += x[i];
    x[i] = 2.0 * x[i] + 1.0;
  }
}
)";

}  // namespace

TEST_CASE("timing: resets are recorded before every timed launch of a batch") {
  auto dev = open_vulkan_or_skip();
  auto ck = dev->compile(glsl(kResetCheckShader), block(64));
  REQUIRE_MESSAGE(ck.ok(), ck.status().to_string());
  constexpr std::uint32_t kN = 4096;
  std::vector<float> x0(kN);  // positive: 2x + 1 != x and x != 0
  for (std::uint32_t i = 0; i < kN; ++i) x0[i] = static_cast<float>(1 + i % 97);
  auto x = dev->alloc(kN * 4);
  auto acc = dev->alloc(kN * 4);
  auto snapshot = dev->alloc(kN * 4);
  auto bad = dev->alloc(4);
  REQUIRE((x.ok() && acc.ok() && snapshot.ok() && bad.ok()));
  REQUIRE(dev->upload(**snapshot, x0.data(), kN * 4).ok());
  const std::vector<ArgValue> args = {
      ArgValue::buf(**bad, ElemType::u32, 1), ArgValue::buf(**x, ElemType::f32, kN),
      ArgValue::buf(**acc, ElemType::f32, kN), ArgValue::buf(**snapshot, ElemType::f32, kN),
      std::int32_t{kN}};
  const LaunchDims dims{{kN / 64, 1, 1}, {64, 1, 1}, 0};
  // Times `plan` with x and acc as given and returns the invocations that saw them unreset.
  auto count_bad = [&](const TimingPlan& plan, std::uint32_t x_bits, std::uint32_t acc_bits) {
    if (x_bits == 0xffffffffu)
      REQUIRE(dev->copy(**x, **snapshot, kN * 4).ok());
    else
      REQUIRE(dev->fill(**x, x_bits, kN * 4).ok());
    REQUIRE(dev->fill(**acc, acc_bits, kN * 4).ok());
    REQUIRE(dev->fill(**bad, 0, 4).ok());
    auto t = dev->time(**ck, dims, args, plan);
    REQUIRE_MESSAGE(t.ok(), t.status().to_string());
    CHECK(t->size() == static_cast<std::size_t>(plan.reps));
    std::uint32_t n = 0;
    REQUIRE(dev->download(**bad, &n, 4).ok());
    return n;
  };
  TimingPlan plan;
  plan.reps = 300;  // more than one command buffer's batch
  plan.resets.zero = {acc->get()};
  plan.resets.restore = {{x->get(), snapshot->get()}};
  for (bool flush : {false, true}) {
    CAPTURE(flush);
    plan.flush_l2 = flush;
    CHECK(count_bad(plan, 0, 0x3f800000u) == 0);  // x = 0 and acc = 1.0f before the first
    std::vector<float> a(kN), xs(kN);
    REQUIRE(dev->download(**acc, a.data(), kN * 4).ok());
    REQUIRE(dev->download(**x, xs.data(), kN * 4).ok());
    CHECK(a == x0);  // one launch's effect
    for (std::uint32_t i = 0; i < kN; ++i) REQUIRE(xs[i] == 2 * x0[i] + 1);
  }
  // The control: without resets, every launch after the first sees the last one's effects.
  TimingPlan plain;
  plain.reps = 5;
  CHECK(count_bad(plain, 0xffffffffu, 0) == 4 * kN);
  // Buffers of another device are refused.
  auto other = open_vulkan_or_skip();
  auto foreign = other->alloc(kN * 4);
  REQUIRE(foreign.ok());
  plan.resets.zero = {foreign->get()};
  CHECK(dev->time(**ck, dims, args, plan).status().code() == StatusCode::invalid_argument);
}

TEST_CASE("selection: TUNE_VULKAN_DEVICE by index, by name substring, and a missing one") {
  (void)kVulkanTestEnv;
  auto list = vulkan::list_devices();
  if (!list.ok()) skip_or_fail_without_vulkan("no Vulkan devices: " + list.status().to_string());
  REQUIRE(!list->empty());
  for (const auto& d : *list) MESSAGE(d.index << ": " << d.name << " | " << d.detail);
  const DeviceListing& first = list->front();
  {
    ScopedEnv env("TUNE_VULKAN_DEVICE", "0");
    auto dev = vulkan::open_device("");
    REQUIRE_MESSAGE(dev.ok(), dev.status().to_string());
    CHECK((*dev)->info().name == first.name);
  }
  {
    // A case-insensitive substring of the name.
    std::string sub = first.name.substr(0, std::min<std::size_t>(first.name.size(), 5));
    for (char& c : sub) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    ScopedEnv env("TUNE_VULKAN_DEVICE", sub.c_str());
    auto dev = vulkan::open_device("");
    REQUIRE_MESSAGE(dev.ok(), dev.status().to_string());
    CHECK((*dev)->info().name.find(first.name.substr(0, 5)) != std::string::npos);
  }
  {
    ScopedEnv env("TUNE_VULKAN_DEVICE", "no-such-device-xyz");
    auto dev = vulkan::open_device("");
    REQUIRE(!dev.ok());
    CHECK(dev.status().code() == StatusCode::not_found);
    CHECK(dev.status().message().find("no-such-device-xyz") != std::string::npos);
    CHECK(dev.status().message().find(first.name) != std::string::npos);  // lists devices
    // Through the registry too.
    auto reg = open_device("vulkan");
    CHECK(reg.status().code() == StatusCode::not_found);
  }
  {
    auto dev = open_device("vulkan:99");
    REQUIRE(!dev.ok());
    CHECK(dev.status().code() == StatusCode::not_found);
    CHECK(dev.status().message().find("99") != std::string::npos);
  }
  auto dev = open_device("vulkan:0");
  REQUIRE_MESSAGE(dev.ok(), dev.status().to_string());
  CHECK((*dev)->info().backend == "vulkan");
  CHECK((*dev)->language() == Language::glsl);
}

TEST_CASE("DeviceInfo and diagnostics come from the physical device") {
  auto dev = open_vulkan_or_skip();
  const DeviceInfo& info = dev->info();
  auto diag = vulkan::diagnostics(*dev);
  REQUIRE(diag.has_value());
  CHECK(diag->timestamp_valid_bits > 0);
  CHECK(diag->timestamp_valid_bits <= 64);
  CHECK(diag->max_buffer_bytes > 0);
  CHECK(diag->flush_bytes > 0);
  CHECK(diag->max_push_constant_bytes >= 128);
  char arch[64];
  std::snprintf(arch, sizeof arch, "vk:%x:%x", diag->vendor_id, diag->device_id);
  CHECK(info.arch == arch);
  CHECK(info.compiler_version.find("shaderc") != std::string::npos);
  // VkPhysicalDeviceIDProperties::deviceUUID (lavapipe and NVIDIA both report one): the
  // per-GPU timing lock's name, the same when the device is opened again.
  CHECK(info.uuid.size() == 36);
  {
    auto again = open_vulkan_or_skip();
    CHECK(again->info().uuid == info.uuid);
  }
  MESSAGE(info.name << " uuid=" << info.uuid);
  MESSAGE(info.name << " type=" << diag->device_type << " valid_bits=" << diag->timestamp_valid_bits
                    << " period=" << info.timer_resolution_ns << " subgroup=" << info.warp_size
                    << " smem=" << info.shared_bytes_per_block << " flush=" << diag->flush_bytes);
  if (info.name.find("llvmpipe") != std::string::npos) {
    // Mesa lavapipe, as measured on the CPU machine (research-notes.md).
    CHECK(diag->device_type == "cpu");
    CHECK(info.vendor == "Mesa");
    CHECK(diag->timestamp_valid_bits == 64);
    CHECK(info.timer_resolution_ns == doctest::Approx(1.0));
    CHECK(info.max_threads_per_block == 1024);
    CHECK(info.max_grid.x == 65535);
    CHECK(info.warp_size == 8);
    CHECK(diag->storage_buffer_16bit);
    CHECK(diag->subgroup_arithmetic);
  }
  // Not a Vulkan device: no diagnostics. (A null-object Device is not needed: any other
  // Device type answers nullopt; checked by the registry path above for real devices.)
}

TEST_CASE("push constants: mixed 32/64-bit scalars are packed as the shader declares") {
  auto dev = open_vulkan_or_skip();
  auto ck = dev->compile(glsl(kPushShader), block(1));
  if (!ck.ok() && ck.status().code() == StatusCode::unavailable) TUNE_SKIP(ck.status().message());
  REQUIRE_MESSAGE(ck.ok(), ck.status().to_string());
  auto o = dev->alloc(8 * 4);
  auto d = dev->alloc(8);
  REQUIRE(o.ok());
  REQUIRE(d.ok());
  REQUIRE(dev->fill(**o, 0, 32).ok());
  const std::int64_t big = -(std::int64_t{1} << 40) - 3;
  std::vector<ArgValue> args = {ArgValue::buf(**o, ElemType::u32, 8),
                                ArgValue::buf(**d, ElemType::f64, 1),
                                std::int32_t{-7},
                                1.5f,
                                big,
                                3.25,
                                std::uint32_t{0xfeedbeefu},
                                std::int32_t{42}};
  const LaunchDims dims{{1, 1, 1}, {1, 1, 1}, 0};
  REQUIRE_MESSAGE(dev->launch(**ck, dims, args).ok(), "launch");
  std::uint32_t out[8];
  double dout = 0;
  REQUIRE(dev->download(**o, out, sizeof out).ok());
  REQUIRE(dev->download(**d, &dout, 8).ok());
  CHECK(static_cast<std::int32_t>(out[0]) == -7);
  float b;
  std::memcpy(&b, &out[1], 4);
  CHECK(b == 1.5f);
  const std::uint64_t c = (std::uint64_t{out[3]} << 32) | out[2];
  CHECK(static_cast<std::int64_t>(c) == big);
  CHECK(out[4] == 0xfeedbeefu);
  CHECK(out[5] == 42u);
  CHECK(dout == 3.25);

  // Mismatches are invalid_argument, naming the argument.
  auto wrong = args;
  wrong[2] = 7.0f;  // float where the shader has int
  Status s = dev->launch(**ck, dims, wrong);
  CHECK(s.code() == StatusCode::invalid_argument);
  CHECK(s.message().find("argument 2") != std::string::npos);
  wrong = args;
  wrong[4] = std::int32_t{5};  // 32-bit where the shader has int64_t
  CHECK(dev->launch(**ck, dims, wrong).code() == StatusCode::invalid_argument);
  wrong = args;
  wrong.pop_back();  // one scalar short
  CHECK(dev->launch(**ck, dims, wrong).code() == StatusCode::invalid_argument);
  wrong = args;
  wrong.erase(wrong.begin() + 1);  // one buffer short
  CHECK(dev->launch(**ck, dims, wrong).code() == StatusCode::invalid_argument);
  wrong = args;
  wrong[0].count = 9;  // claims more elements than the buffer holds
  CHECK(dev->launch(**ck, dims, wrong).code() == StatusCode::invalid_argument);
}

TEST_CASE("launch checks: grid, block, shared memory, clusters and foreign buffers") {
  auto dev = open_vulkan_or_skip();
  auto ck = dev->compile(glsl(kSlowShader), block(64));
  REQUIRE_MESSAGE(ck.ok(), ck.status().to_string());
  auto x = dev->alloc(4096 * 4);
  REQUIRE(x.ok());
  REQUIRE(dev->fill(**x, 0x3f800000u, 4096 * 4).ok());  // 1.0f
  const std::vector<ArgValue> args = {ArgValue::buf(**x, ElemType::f32, 4096), std::int32_t{1}};
  const std::uint32_t too_many = dev->info().max_grid.x + 1;
  CHECK(dev->launch(**ck, {{too_many, 1, 1}, {64, 1, 1}, 0}, args).code() ==
        StatusCode::out_of_resources);
  CHECK(dev->launch(**ck, {{1, 1, 1}, {128, 1, 1}, 0}, args).code() ==
        StatusCode::invalid_argument);  // not the compiled workgroup size
  CHECK(dev->launch(**ck, {{1, 1, 1}, {64, 1, 1}, 256}, args).code() ==
        StatusCode::invalid_argument);  // no dynamic shared memory in Vulkan
  const Status clustered = dev->launch(**ck, {{2, 1, 1}, {64, 1, 1}, 0, {2, 1, 1}}, args);
  CHECK(clustered.code() == StatusCode::invalid_argument);  // no thread-block clusters
  CHECK(clustered.message().find("cluster 2x1x1") != std::string::npos);
  auto other = open_vulkan_or_skip();
  auto foreign = other->alloc(4096 * 4);
  REQUIRE(foreign.ok());
  const std::vector<ArgValue> bad = {ArgValue::buf(**foreign, ElemType::f32, 4096),
                                     std::int32_t{1}};
  CHECK(dev->launch(**ck, {{1, 1, 1}, {64, 1, 1}, 0}, bad).code() == StatusCode::invalid_argument);
  CHECK(dev->launch(**ck, {{64, 1, 1}, {64, 1, 1}, 0}, args).ok());
  CHECK(dev->synchronize().ok());
}

TEST_CASE("buffers: sizes beyond the device's limits are out_of_resources") {
  auto dev = open_vulkan_or_skip();
  auto diag = vulkan::diagnostics(*dev);
  REQUIRE(diag.has_value());
  auto too_big = dev->alloc(diag->max_buffer_bytes + 1);
  REQUIRE(!too_big.ok());
  CHECK(too_big.status().code() == StatusCode::out_of_resources);
  CHECK(too_big.status().message().find("maxStorageBufferRange") != std::string::npos);
  // An odd size works and rounds nothing visible.
  auto odd = dev->alloc(10);
  REQUIRE(odd.ok());
  CHECK((*odd)->size_bytes() == 10);
  const char msg[10] = {'l', 'i', 'b', 't', 'u', 'n', 'e', '!', '!', '!'};
  REQUIRE(dev->upload(**odd, msg, 10).ok());
  char back[10] = {};
  REQUIRE(dev->download(**odd, back, 10).ok());
  CHECK(std::memcmp(msg, back, 10) == 0);
}

TEST_CASE("compile: SPIR-V is cached per (source, config); shared memory and bindings checked") {
  // The in-memory cache alone: no disk cache that an earlier run could have filled.
  ScopedEnv no_disk("TUNE_CACHE", "off");
  auto dev = open_vulkan_or_skip();
  const auto before = vulkan::diagnostics(*dev)->shaderc_compiles;
  auto a = dev->compile(glsl(kSlowShader), block(64));
  auto b = dev->compile(glsl(kSlowShader), block(64));
  auto c = dev->compile(glsl(kSlowShader), block(128));
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  REQUIRE(c.ok());
  CHECK(vulkan::diagnostics(*dev)->shaderc_compiles == before + 2);
  CHECK((*a)->resources().max_threads == 64);

  // More shared memory than the device has.
  const std::uint32_t floats = dev->info().shared_bytes_per_block / 4 + 1024;
  const std::string big =
      "#version 450\nlayout(local_size_x_id = 0) in;\n"
      "layout(std430, binding = 0) buffer X { float x[]; };\n"
      "shared float s[" +
      std::to_string(floats) +
      "];\n"
      "void main() { s[gl_LocalInvocationID.x] = 1.0; barrier();\n"
      "  x[gl_LocalInvocationID.x] = s[" +
      std::to_string(floats - 1) + " - gl_LocalInvocationID.x]; }\n";
  auto s = dev->compile(glsl(big), block(64));
  CHECK(s.status().code() == StatusCode::out_of_resources);
  CHECK(s.status().message().find("shared memory") != std::string::npos);

  // A fixed workgroup size that contradicts the config.
  auto fixed = dev->compile(glsl("#version 450\nlayout(local_size_x = 32) in;\n"
                                 "layout(std430, binding = 0) buffer X { float x[]; };\n"
                                 "void main() { x[gl_LocalInvocationID.x] = 1.0; }\n"),
                            block(64));
  CHECK(fixed.status().code() == StatusCode::invalid_argument);
  // Not GLSL.
  auto cuda = dev->compile(source(Language::cuda_hip, "k", "__global__ void k() {}"), block(64));
  CHECK(cuda.status().code() == StatusCode::invalid_argument);
}

TEST_CASE("open and close: 40 devices in turn in one process, each usable, no descriptor leaked") {
  // A program may open and close devices many times (tools, tests, plugins); every open must
  // work and a close must give back what the open took (file descriptors stand for the
  // driver's handles). The first open loads the driver, so counting starts after it.
  namespace fs = std::filesystem;
  auto open_fds = [] {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/fd")) ++n;
    return n;
  };
  auto use_once = [](int i) {
    auto dev = open_vulkan_or_skip();
    auto k = dev->compile(glsl(kSlowShader), block(64));
    REQUIRE_MESSAGE(k.ok(), "open " << i << ": " << k.status().to_string());
    auto buf = dev->alloc(1024 * sizeof(float));
    REQUIRE(buf.ok());
    std::vector<float> x(1024, 1.0f);
    REQUIRE(dev->upload(**buf, x.data(), x.size() * sizeof(float)).ok());
    ArgValue args[] = {ArgValue::buf(**buf, ElemType::f32, 1024), ArgValue(0)};
    LaunchDims d;
    d.grid = {16, 1, 1};
    d.block = {64, 1, 1};
    REQUIRE(dev->launch(**k, d, args).ok());
    REQUIRE(dev->download(**buf, x.data(), x.size() * sizeof(float)).ok());
    CHECK(x[1023] == 1.0f);  // iters = 0: the kernel stores what it read
  };
  use_once(0);
  const std::size_t fds = open_fds();
  for (int i = 1; i <= 40; ++i) use_once(i);
  CHECK(open_fds() == fds);
}

TEST_CASE("timeout: a launch that outlasts TimingPlan::timeout_ms is timeout, then recovers") {
  auto dev = open_vulkan_or_skip();
  auto ck = dev->compile(glsl(kSlowShader), block(64));
  REQUIRE_MESSAGE(ck.ok(), ck.status().to_string());
  auto x = dev->alloc(4096 * 4);
  REQUIRE(x.ok());
  REQUIRE(dev->fill(**x, 0x3f800000u, 4096 * 4).ok());
  // 4096 invocations x 200000 dependent steps: ~10^9 operations, far beyond 1 ms anywhere.
  const std::vector<ArgValue> args = {ArgValue::buf(**x, ElemType::f32, 4096),
                                      std::int32_t{200000}};
  TimingPlan plan;
  plan.reps = 1;
  plan.flush_l2 = false;
  plan.timeout_ms = 1.0;
  auto t = dev->time(**ck, {{64, 1, 1}, {64, 1, 1}, 0}, args, plan);
  REQUIRE(!t.ok());
  CHECK(t.status().code() == StatusCode::timeout);
  CHECK(t.status().message().find("VK_TIMEOUT") != std::string::npos);
  // The work finishes in its own time; the device stays usable.
  REQUIRE(dev->synchronize().ok());
  const std::vector<ArgValue> quick = {ArgValue::buf(**x, ElemType::f32, 4096), std::int32_t{1}};
  plan.timeout_ms = 10000;
  auto ok = dev->time(**ck, {{64, 1, 1}, {64, 1, 1}, 0}, quick, plan);
  CHECK_MESSAGE(ok.ok(), ok.status().to_string());
}

TEST_CASE("validation layer: a tuning run produces no validation error") {
  (void)kVulkanTestEnv;
  vulkan::OpenOptions opts;
  opts.validation = true;
  auto opened = vulkan::open_device("", opts);
  if (!opened.ok())
    skip_or_fail_without_vulkan("cannot open with validation: " + opened.status().to_string());
  auto dev = std::move(*opened);
  auto diag = vulkan::diagnostics(*dev);
  REQUIRE(diag.has_value());
  REQUIRE(diag->validation_enabled);

  for (const auto& k : kernels::bundled_kernels(Language::glsl)) {
    if (k.name != "vector_add" && k.name != "reduce_sum" && k.name != "matmul_f32") continue;
    CAPTURE(k.name);
    AutotunerOptions ao;
    ao.persistent = false;
    ao.bench.warmup_ms = 1;
    ao.bench.rep_ms = 2;
    ao.bench.expert.max_reps = 10;
    // Settling validates the same commands as timing; a batch-to-batch window keeps it to a
    // few batches (on NVIDIA the device's 300 ms window would be tens of thousands of
    // validated launches of these small sizes).
    ao.bench.expert.settle_window_ms = 0;
    ao.bench.expert.settle_batch_ms = 0.5;
    auto tuner = Autotuner::make(k.def, ao);
    REQUIRE(tuner.ok());
    auto w = k.workload(k.test_sizes.front());
    REQUIRE(w->setup(*dev, 17).ok());
    auto best = (*tuner)->tune(*dev, w->args());
    REQUIRE_MESSAGE(best.ok(), best.status().to_string());
    REQUIRE(w->poison_outputs(*dev).ok());
    REQUIRE(k.def.zero_reset_buffers(*dev, w->args()).ok());
    REQUIRE((*tuner)->run(*dev, w->args()).ok());
    CHECK(w->check(*dev).ok());
    tuner->reset();
  }
  // Copies and fills too.
  auto a = dev->alloc(1024);
  auto b = dev->alloc(1024);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  REQUIRE(dev->fill(**a, 1, 1024).ok());
  REQUIRE(dev->copy(**b, **a, 1024).ok());
  REQUIRE(dev->synchronize().ok());

  diag = vulkan::diagnostics(*dev);
  for (const auto& m : diag->messages) MESSAGE(m);
  CHECK(diag->validation_errors == 0);
}
