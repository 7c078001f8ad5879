// The Vulkan backend's disk caches, for real on lavapipe by default: SPIR-V per variant
// (<TUNE_CACHE_DIR>/spirv) and the VkPipelineCache per physical device
// (<TUNE_CACHE_DIR>/vkpipeline). Every test uses its own scratch TUNE_CACHE_DIR.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "log_capture.hpp"
#include "scoped_env.hpp"
#include "tune/backend/binary_cache.hpp"
#include "tune/kernels/bundled.hpp"
#include "tune/tune.hpp"
#include "tune/vulkan.hpp"
#include "vulkan_test_device.hpp"

namespace fs = std::filesystem;

namespace {

using namespace tune;

using tune::testing::open_vulkan_or_skip;

vulkan::Diagnostics diag(const Device& dev) {
  auto d = vulkan::diagnostics(dev);
  REQUIRE(d.has_value());
  return *d;
}

using tune::testing::ScopedEnv;

fs::path make_scratch() {
  const fs::path p =
      fs::temp_directory_path() / ("libtune-vkcache-test-" + std::to_string(::getpid()) + "-" +
                                   std::to_string(reinterpret_cast<std::uintptr_t>(&p)));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

// A scratch TUNE_CACHE_DIR with TUNE_CACHE unset (readwrite) for one test.
struct ScratchCache {
  fs::path dir = make_scratch();
  ScopedEnv cache_dir{"TUNE_CACHE_DIR", dir.c_str()};
  ScopedEnv mode{"TUNE_CACHE", nullptr};
  ~ScratchCache() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  fs::path spirv() const { return dir / "spirv"; }
};

using tune::testing::LogCapture;

// Regular files under `dir` (recursively) with their contents; empty when `dir` is absent.
std::map<fs::path, std::string> snapshot(const fs::path& dir) {
  std::map<fs::path, std::string> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    out[e.path()] = s.str();
  }
  return out;
}

std::size_t count_files(const fs::path& dir) { return snapshot(dir).size(); }

// The key text stored in a BinaryCache entry file (format 2: key_bytes at offset 8, the key
// right after the 48-byte header). Lets a test write a well-formed entry with other contents.
std::string stored_key(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::uint64_t key_bytes = 0;
  in.seekg(8);
  in.read(reinterpret_cast<char*>(&key_bytes), sizeof key_bytes);
  REQUIRE(in);
  REQUIRE(key_bytes < (1u << 20));
  std::string key(key_bytes, '\0');
  in.seekg(48);
  in.read(key.data(), static_cast<std::streamsize>(key.size()));
  REQUIRE(in);
  return key;
}

void flip_byte(const fs::path& file, std::streamoff from_end) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(-from_end, std::ios::end);
  const char c = static_cast<char>(f.get());
  f.seekp(-from_end, std::ios::end);
  f.put(static_cast<char>(c ^ 0x5a));
  REQUIRE(f.good());
}

Config block(std::uint32_t x) {
  Config c;
  c.launch().block = {x, 1, 1};
  return c;
}

// x[i] = i * SCALE: small, and its output is checkable by hand.
const char* kScaleShader = R"(#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, binding = 0) buffer X { float x[]; };
layout(push_constant) uniform P { int n; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < uint(n)) x[i] = float(i) * float(SCALE);
}
)";

KernelSource scale_source() {
  KernelSource s;
  s.language = Language::glsl;
  s.entry = "main";
  s.text = kScaleShader;
  return s;
}

Config scale_config(int scale) {
  Config c = block(64);
  c.set("SCALE", scale);
  return c;
}

// Launches a compiled kScaleShader over 256 elements and checks x[i] == i * scale.
void check_scale(Device& dev, const CompiledKernel& k, int scale) {
  constexpr int n = 256;
  auto x = dev.alloc(n * 4);
  REQUIRE(x.ok());
  REQUIRE(dev.fill(**x, 0xffffffffu, n * 4).ok());
  const std::vector<ArgValue> args = {ArgValue::buf(**x, ElemType::f32, n), std::int32_t{n}};
  REQUIRE(dev.launch(k, {{n / 64, 1, 1}, {64, 1, 1}, 0}, args).ok());
  std::vector<float> out(n);
  REQUIRE(dev.download(**x, out.data(), n * 4).ok());
  for (int i = 0; i < n; ++i) REQUIRE(out[static_cast<std::size_t>(i)] == float(i * scale));
}

}  // namespace

TEST_CASE("SPIR-V disk cache: a fresh device skips shaderc, says so, and computes the same") {
  ScratchCache cache;
  const std::optional<kernels::BundledKernel> k =
      kernels::bundled_kernel(Language::glsl, "vector_add");
  REQUIRE(k.has_value());
  const KernelSource* src = k->def.source_for(Language::glsl);
  REQUIRE(src != nullptr);

  std::vector<Config> configs;
  {
    auto dev = open_vulkan_or_skip();
    auto all = k->def.space.enumerate(dev->info());
    REQUIRE(all.ok());
    REQUIRE(all->size() >= 4);
    configs.assign(all->begin(), all->begin() + 4);
    for (const Config& c : configs) {
      auto ck = dev->compile(*src, c);
      REQUIRE_MESSAGE(ck.ok(), ck.status().to_string());
      CHECK_FALSE((*ck)->from_binary_cache());
    }
    const auto d = diag(*dev);
    CHECK(d.shaderc_compiles == 4);
    CHECK(d.spirv_disk_hits == 0);
    CHECK(d.spirv_cache_dir == cache.spirv().string());
    CHECK(d.disk_cache_writable);
  }
  CHECK(count_files(cache.spirv()) == 4);

  // A fresh device (as in a new process: nothing in memory) reads every variant from disk.
  auto dev = open_vulkan_or_skip();
  std::vector<std::unique_ptr<CompiledKernel>> compiled;
  for (const Config& c : configs) {
    auto ck = dev->compile(*src, c);
    REQUIRE_MESSAGE(ck.ok(), ck.status().to_string());
    CHECK_MESSAGE((*ck)->from_binary_cache(), (*ck)->compile_log());
    compiled.push_back(std::move(*ck));
  }
  const auto d = diag(*dev);
  CHECK(d.shaderc_compiles == 0);
  CHECK(d.spirv_disk_hits == 4);
  // The same variant again in this device: from memory, neither counter moves.
  REQUIRE(dev->compile(*src, configs.front()).ok());
  CHECK(diag(*dev).spirv_disk_hits == 4);
  CHECK(diag(*dev).shaderc_compiles == 0);

  // Outputs still match the CPU reference.
  std::uint64_t seed = 77;
  for (const auto& size : k->test_sizes) {
    auto w = k->workload(size);
    REQUIRE(w != nullptr);
    REQUIRE(w->setup(*dev, seed++).ok());
    for (std::size_t i = 0; i < configs.size(); ++i) {
      CAPTURE(configs[i].to_string());
      REQUIRE(w->poison_outputs(*dev).ok());
      REQUIRE(k->def.zero_reset_buffers(*dev, w->args()).ok());
      REQUIRE(dev->launch(*compiled[i], k->def.dims(configs[i], w->args()), w->args()).ok());
      const Status cs = w->check(*dev);
      CHECK_MESSAGE(cs.ok(), cs.to_string());
    }
  }
  compiled.clear();
}

TEST_CASE("SPIR-V disk cache: a damaged entry is a miss with a warning and is replaced") {
  ScratchCache cache;
  {
    auto dev = open_vulkan_or_skip();
    REQUIRE(dev->compile(scale_source(), scale_config(3)).ok());
  }
  auto files = snapshot(cache.spirv());
  REQUIRE(files.size() == 1);
  const fs::path file = files.begin()->first;

  SUBCASE("a flipped byte (checksum mismatch)") { flip_byte(file, 7); }
  SUBCASE("a well-formed entry that is not SPIR-V") {
    const std::string key = stored_key(file);
    BinaryCache raw(cache.spirv(), true);
    REQUIRE(raw.store(key, BinaryCacheEntry{std::string(64, 'x'), "", "main"}));
  }
  SUBCASE("a forged entry: well-formed SPIR-V under the right key, another entry point") {
    const std::string key = stored_key(file);
    BinaryCache raw(cache.spirv(), true);
    auto real = raw.load(key);
    REQUIRE(real.has_value());
    REQUIRE(raw.store(key, BinaryCacheEntry{real->binary, "", "evil_main"}));
  }

  LogCapture log;
  {
    auto dev = open_vulkan_or_skip();
    auto ck = dev->compile(scale_source(), scale_config(3));
    REQUIRE_MESSAGE(ck.ok(), ck.status().to_string());
    CHECK_FALSE((*ck)->from_binary_cache());
    CHECK(diag(*dev).shaderc_compiles == 1);
    CHECK(diag(*dev).spirv_disk_hits == 0);
    CHECK_MESSAGE(log.count(LogLevel::warning, file.string()) == 1, log.all());
    check_scale(*dev, **ck, 3);
  }
  // Replaced by the recompiled SPIR-V: the next fresh device reads it.
  CHECK(count_files(cache.spirv()) == 1);
  auto dev = open_vulkan_or_skip();
  auto ck = dev->compile(scale_source(), scale_config(3));
  REQUIRE(ck.ok());
  CHECK((*ck)->from_binary_cache());
  CHECK(diag(*dev).spirv_disk_hits == 1);
  check_scale(*dev, **ck, 3);
}

TEST_CASE("SPIR-V disk cache: keyed by every macro; the workgroup size is one of them") {
  ScratchCache cache;
  {
    auto dev = open_vulkan_or_skip();
    REQUIRE(dev->compile(scale_source(), scale_config(3)).ok());
  }
  auto dev = open_vulkan_or_skip();
  auto other_scale = dev->compile(scale_source(), scale_config(5));
  REQUIRE(other_scale.ok());
  Config wide = scale_config(3);
  wide.launch().block = {128, 1, 1};
  REQUIRE(dev->compile(scale_source(), wide).ok());
  KernelSource edited = scale_source();
  edited.text += "\n";
  REQUIRE(dev->compile(edited, scale_config(3)).ok());
  CHECK(diag(*dev).shaderc_compiles == 3);
  CHECK(diag(*dev).spirv_disk_hits == 0);
  check_scale(*dev, **other_scale, 5);
  CHECK(count_files(cache.spirv()) == 4);
}

TEST_CASE("concurrent compiles: different variants in parallel, one variant built once") {
  // shaderc runs outside the compiler's lock (issue 15): threads compiling different variants
  // and the same variant at once each get a working kernel, and every module is built once.
  ScratchCache cache;
  auto dev = open_vulkan_or_skip();
  constexpr int kThreads = 8;
  std::vector<std::unique_ptr<CompiledKernel>> kernels(kThreads);
  std::vector<Status> status(kThreads);
  {
    std::vector<std::jthread> pool;
    for (int t = 0; t < kThreads; ++t) {
      // Scales 1..4, each asked for by two threads.
      pool.emplace_back([&, t] {
        auto ck = dev->compile(scale_source(), scale_config(1 + t % 4));
        if (ck.ok())
          kernels[static_cast<std::size_t>(t)] = std::move(*ck);
        else
          status[static_cast<std::size_t>(t)] = ck.status();
      });
    }
  }
  for (int t = 0; t < kThreads; ++t) {
    CAPTURE(t);
    REQUIRE_MESSAGE(status[static_cast<std::size_t>(t)].ok(),
                    status[static_cast<std::size_t>(t)].to_string());
    check_scale(*dev, *kernels[static_cast<std::size_t>(t)], 1 + t % 4);
  }
  CHECK(diag(*dev).shaderc_compiles == 4);
  CHECK(count_files(cache.spirv()) == 4);
}

TEST_CASE("TUNE_CACHE=off reads and writes nothing; readonly reads and writes nothing") {
  ScratchCache cache;
  {
    ScopedEnv off("TUNE_CACHE", "off");
    auto dev = open_vulkan_or_skip();
    auto ck = dev->compile(scale_source(), scale_config(3));
    REQUIRE(ck.ok());
    check_scale(*dev, **ck, 3);
    const auto d = diag(*dev);
    CHECK(d.spirv_cache_dir.empty());
    CHECK(d.pipeline_cache_file.empty());
    CHECK_FALSE(d.disk_cache_writable);
  }
  CHECK(fs::is_empty(cache.dir));

  // Populate, then look at it under readonly and off.
  {
    auto dev = open_vulkan_or_skip();
    REQUIRE(dev->compile(scale_source(), scale_config(3)).ok());
  }
  const auto before = snapshot(cache.dir);
  CHECK(before.size() == 2);  // one SPIR-V entry, one pipeline cache
  {
    ScopedEnv ro("TUNE_CACHE", "readonly");
    auto dev = open_vulkan_or_skip();
    auto hit = dev->compile(scale_source(), scale_config(3));
    REQUIRE(hit.ok());
    CHECK((*hit)->from_binary_cache());
    auto miss = dev->compile(scale_source(), scale_config(4));  // new: compiled, not stored
    REQUIRE(miss.ok());
    check_scale(*dev, **miss, 4);
    const auto d = diag(*dev);
    CHECK(d.spirv_disk_hits == 1);
    CHECK(d.shaderc_compiles == 1);
    CHECK_FALSE(d.disk_cache_writable);
    CHECK(d.pipeline_cache_loaded_bytes > 0);
  }
  CHECK(snapshot(cache.dir) == before);
  {
    ScopedEnv off("TUNE_CACHE", "off");
    auto dev = open_vulkan_or_skip();
    auto ck = dev->compile(scale_source(), scale_config(3));
    REQUIRE(ck.ok());
    CHECK_FALSE((*ck)->from_binary_cache());
    CHECK(diag(*dev).shaderc_compiles == 1);
    CHECK(diag(*dev).pipeline_cache_loaded_bytes == 0);
  }
  CHECK(snapshot(cache.dir) == before);
}

TEST_CASE("pipeline cache: written at close, loaded at open; damaged or foreign files ignored") {
  ScratchCache cache;
  fs::path file;
  std::uint32_t vendor = 0, device = 0;
  {
    auto dev = open_vulkan_or_skip();
    const auto d = diag(*dev);
    CHECK(d.pipeline_cache_loaded_bytes == 0);
    file = d.pipeline_cache_file;
    vendor = d.vendor_id;
    device = d.device_id;
    REQUIRE_FALSE(file.empty());
    CHECK(file.parent_path() == cache.dir / "vkpipeline");
    CHECK_FALSE(fs::exists(file));
  }
  // Opening and closing a device that created no pipeline writes nothing.
  CHECK_FALSE(fs::exists(file));
  {
    auto dev = open_vulkan_or_skip();
    REQUIRE(dev->compile(scale_source(), scale_config(3)).ok());
  }
  REQUIRE(fs::exists(file));
  const std::string key = stored_key(file);
  BinaryCache raw(file.parent_path(), true);
  auto stored = raw.load(key);
  REQUIRE(stored.has_value());
  {
    // The driver's data starts with the header Vulkan defines, for this device.
    const std::string& blob = stored->binary;
    REQUIRE(blob.size() >= 32);
    std::uint32_t fields[4];
    std::memcpy(fields, blob.data(), sizeof fields);  // lavapipe and our CI hosts: little-endian
    CHECK(fields[0] >= 32);
    CHECK(fields[1] == 1);  // VK_PIPELINE_CACHE_HEADER_VERSION_ONE
    CHECK(fields[2] == vendor);
    CHECK(fields[3] == device);
  }
  MESSAGE("pipeline cache of " << file.filename().string() << ": " << stored->binary.size()
                               << " bytes of driver data");
  {
    auto dev = open_vulkan_or_skip();
    CHECK(diag(*dev).pipeline_cache_loaded_bytes == stored->binary.size());
    auto ck = dev->compile(scale_source(), scale_config(3));
    REQUIRE(ck.ok());
    check_scale(*dev, **ck, 3);
  }

  LogCapture log;
  SUBCASE("truncated") { fs::resize_file(file, fs::file_size(file) - 3); }
  SUBCASE("a flipped byte") { flip_byte(file, 5); }
  SUBCASE("another driver build (pipelineCacheUUID differs), well-formed otherwise") {
    std::string blob = stored->binary;
    blob[16] = static_cast<char>(blob[16] ^ 0x01);
    REQUIRE(raw.store(key, BinaryCacheEntry{blob, {}, {}}));
  }
  SUBCASE("another device (deviceID differs), well-formed otherwise") {
    std::string blob = stored->binary;
    blob[12] = static_cast<char>(blob[12] ^ 0x01);
    REQUIRE(raw.store(key, BinaryCacheEntry{blob, {}, {}}));
  }
  {
    auto dev = open_vulkan_or_skip();
    CHECK(diag(*dev).pipeline_cache_loaded_bytes == 0);
    CHECK_MESSAGE(log.count(LogLevel::debug, file.string()) == 1, log.all());
    CHECK_MESSAGE(log.count(LogLevel::warning, "pipeline") == 0, log.all());
    auto ck = dev->compile(scale_source(), scale_config(3));
    REQUIRE(ck.ok());
    check_scale(*dev, **ck, 3);
  }
  // The device created a pipeline and had loaded nothing: its close rewrote a good file.
  auto dev = open_vulkan_or_skip();
  CHECK(diag(*dev).pipeline_cache_loaded_bytes > 0);
}

namespace {

// The entry file that compiling `src` with `c` on a fresh device adds to the SPIR-V cache.
fs::path entry_of(const fs::path& spirv_dir, const KernelSource& src, const Config& c) {
  const auto before = snapshot(spirv_dir);
  auto dev = open_vulkan_or_skip();
  auto ck = dev->compile(src, c);
  REQUIRE_MESSAGE(ck.ok(), ck.status().to_string());
  for (const auto& [file, bytes] : snapshot(spirv_dir))
    if (!before.count(file)) return file;
  FAIL("compiling added no entry to " << spirv_dir);
  return {};
}

KernelSource glsl_source(const char* text) {
  KernelSource s;
  s.language = Language::glsl;
  s.entry = "main";
  s.text = text;
  return s;
}

// Interfaces a forged module may have, each unlike vector_add's (3 f32 buffers, one i32).
const char* kTwoBuffers = R"(#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, binding = 0) buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform P { int n; };
void main() { uint i = gl_GlobalInvocationID.x; if (i < uint(n)) y[i] = x[i]; }
)";
const char* kFourBuffers = R"(#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, binding = 0) buffer A { float a[]; };
layout(std430, binding = 1) buffer B { float b[]; };
layout(std430, binding = 2) buffer C { float c[]; };
layout(std430, binding = 3) buffer D { float d[]; };
layout(push_constant) uniform P { int n; };
void main() { uint i = gl_GlobalInvocationID.x; if (i < uint(n)) d[i] = a[i] + b[i] + c[i]; }
)";
const char* kFloatPush = R"(#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, binding = 0) buffer A { float a[]; };
layout(std430, binding = 1) buffer B { float b[]; };
layout(std430, binding = 2) buffer C { float c[]; };
layout(push_constant) uniform P { float n; };
void main() { uint i = gl_GlobalInvocationID.x; if (i < uint(n)) c[i] = a[i] - b[i]; }
)";
const char* kTwoScalars = R"(#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, binding = 0) buffer A { float a[]; };
layout(std430, binding = 1) buffer B { float b[]; };
layout(std430, binding = 2) buffer C { float c[]; };
layout(push_constant) uniform P { int n; int m; };
void main() { uint i = gl_GlobalInvocationID.x; if (i < uint(n + m)) c[i] = a[i] * b[i]; }
)";
const char* kNoPush = R"(#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, binding = 0) buffer A { float a[]; };
layout(std430, binding = 1) buffer B { float b[]; };
layout(std430, binding = 2) buffer C { float c[]; };
void main() { uint i = gl_GlobalInvocationID.x; c[i] = a[i] * 2.0 + b[i]; }
)";

}  // namespace

TEST_CASE("SPIR-V disk cache: a module unlike the kernel's signature is evicted and recompiled") {
  ScratchCache cache;
  const auto k = kernels::bundled_kernel(Language::glsl, "vector_add");
  REQUIRE(k.has_value());
  KernelSource src = *k->def.source_for(Language::glsl);
  src.signature = k->def.signature;  // as the Autotuner gives it
  const Config config = k->default_config;
  const fs::path victim = entry_of(cache.spirv(), src, config);
  const std::string victim_key = stored_key(victim);

  std::string forged_from;
  SUBCASE("another kernel's module: fewer buffers (reduce_sum)") {
    const auto r = kernels::bundled_kernel(Language::glsl, "reduce_sum");
    REQUIRE(r.has_value());
    forged_from = BinaryCache(cache.spirv(), true)
                      .load(stored_key(entry_of(cache.spirv(), *r->def.source_for(Language::glsl),
                                                r->default_config)))
                      ->binary;
  }
  SUBCASE("two buffers") { forged_from = kTwoBuffers; }
  SUBCASE("four buffers") { forged_from = kFourBuffers; }
  SUBCASE("a float push constant where the kernel passes an int") { forged_from = kFloatPush; }
  SUBCASE("two push constants for one scalar") { forged_from = kTwoScalars; }
  SUBCASE("no push-constant block") { forged_from = kNoPush; }
  if (forged_from.rfind("#version", 0) == 0) {  // compile the GLSL, take its module
    const fs::path f = entry_of(cache.spirv(), glsl_source(forged_from.c_str()), block(64));
    forged_from = BinaryCache(cache.spirv(), true).load(stored_key(f))->binary;
  }
  REQUIRE(BinaryCache(cache.spirv(), true)
              .store(victim_key, BinaryCacheEntry{forged_from, "", "main"}));

  LogCapture log;
  auto dev = open_vulkan_or_skip();
  {
    auto ck = dev->compile(src, config);
    REQUIRE_MESSAGE(ck.ok(), ck.status().to_string());
    CHECK_FALSE((*ck)->from_binary_cache());  // shaderc ran
    CHECK(diag(*dev).shaderc_compiles == 1);
    CHECK_MESSAGE(log.count(LogLevel::warning, "does not match the kernel") == 1, log.all());
  }
  // The Autotuner over the same cache tunes and computes the right answer, crash-free.
  AutotunerOptions opts;
  opts.persistent = false;
  opts.bench.warmup_ms = 0.2;
  opts.bench.rep_ms = 0.5;
  auto tuner = Autotuner::make(k->def, opts);
  REQUIRE(tuner.ok());
  auto w = k->workload(std::vector<std::int64_t>{4096});
  REQUIRE(w->setup(*dev, 7).ok());
  REQUIRE(w->poison_outputs(*dev).ok());
  REQUIRE((*tuner)->run(*dev, w->args()).ok());
  CHECK(w->check(*dev).ok());
  // The entry was replaced by the recompiled module: the next fresh device reads it.
  auto fresh = open_vulkan_or_skip();
  auto again = fresh->compile(src, config);
  REQUIRE(again.ok());
  CHECK((*again)->from_binary_cache());
}

TEST_CASE("SPIR-V disk cache: a variant with an unused argument is never written to disk") {
  ScratchCache cache;
  KernelSource src = glsl_source(kNoPush);  // no push-constant block
  src.signature.buffer("a", ElemType::f32).buffer("b", ElemType::f32).buffer("c", ElemType::f32);
  src.signature.scalar("n", ElemType::i32);  // a scalar the module leaves unused
  {
    auto dev = open_vulkan_or_skip();
    REQUIRE(dev->compile(src, block(64)).ok());
    REQUIRE(dev->compile(src, block(64)).ok());  // from memory within the process
    CHECK(diag(*dev).shaderc_compiles == 1);
  }
  CHECK(count_files(cache.spirv()) == 0);  // a module on disk must match the kernel exactly
  auto dev = open_vulkan_or_skip();
  auto ck = dev->compile(src, block(64));
  REQUIRE(ck.ok());
  CHECK_FALSE((*ck)->from_binary_cache());
}

TEST_CASE("SPIR-V disk cache: a cached module whose output is wrong is evicted, never stored") {
  ScratchCache cache;
  // The scale kernel's SCALE=3 module forged under the keys of both SCALE=5 variants: the
  // same interface, another computation. Only the output check can tell; whichever variant
  // can win is checked, fails, is evicted, and the next is checked, until none is left.
  KernelDef def;
  def.name = "scale";
  def.sources = {scale_source()};
  def.signature.buffer("x", ElemType::f32).scalar("n", ElemType::i32);
  def.space = ConfigSpace().param("SCALE", {5}).param(std::string(kBlockX), {64, 128});
  def.key = {KeySpec::exact("n")};
  def.dims = [](const Config& c, ArgList args) {
    const std::uint32_t b = c.launch().block.x;
    return LaunchDims{{(static_cast<std::uint32_t>(args[1].as_int()) + b - 1) / b, 1, 1},
                      {b, 1, 1}};
  };
  def.verify = [](Device& d, ArgList args, const Config&) {
    std::vector<float> out(static_cast<std::size_t>(args[1].as_int()));
    TUNE_RETURN_IF_ERROR(d.download(*args[0].buffer, out.data(), out.size() * 4));
    for (std::size_t i = 0; i < out.size(); ++i)
      if (out[i] != float(i) * 5.0f)
        return Status(StatusCode::wrong_output, "x[" + std::to_string(i) + "] is wrong");
    return Status();
  };
  KernelSource src = scale_source();
  src.signature = def.signature;
  const std::string three = BinaryCache(cache.spirv(), true)
                                .load(stored_key(entry_of(cache.spirv(), src, scale_config(3))))
                                ->binary;
  std::vector<fs::path> victims;
  for (int b : {64, 128}) {
    Config c = scale_config(5);
    c.set(std::string(kBlockX), b);
    victims.push_back(entry_of(cache.spirv(), src, c));
    REQUIRE(BinaryCache(cache.spirv(), true)
                .store(stored_key(victims.back()), BinaryCacheEntry{three, "", "main"}));
  }

  AutotunerOptions opts;  // the default store, in the scratch cache directory
  opts.bench.warmup_ms = 0.2;
  opts.bench.rep_ms = 0.5;
  constexpr int n = 256;
  TuningReport seen;
  opts.listener = [&](const TuningReport& r) { seen = r; };
  auto tune_once = [&](Device& dev) {
    auto tuner = Autotuner::make(def, opts);
    REQUIRE(tuner.ok());
    auto x = dev.alloc(n * 4);
    REQUIRE(x.ok());
    const std::vector<ArgValue> args = {ArgValue::buf(**x, ElemType::f32, n), std::int32_t{n}};
    return (*tuner)->tune(dev, args);
  };
  {
    LogCapture log;
    auto dev = open_vulkan_or_skip();
    auto best = tune_once(*dev);
    REQUIRE_FALSE(best.ok());
    CHECK_MESSAGE(best.status().code() == StatusCode::all_failed, best.status().to_string());
    for (const auto& res : seen.results) {
      CAPTURE(res.config.to_string());
      CHECK(res.status.code() == StatusCode::wrong_output);
      CHECK(res.status.message().find("binary cache") != std::string::npos);
    }
    CHECK_MESSAGE(log.count(LogLevel::warning, "computed a wrong output") >= 2, log.all());
    for (const auto& v : victims) CHECK_FALSE(fs::exists(v));  // evicted
  }
  // Another process: the failures were not stored, so both are compiled afresh, checked and
  // timed, and the tuning succeeds.
  LogCapture log;
  auto dev = open_vulkan_or_skip();
  auto best = tune_once(*dev);
  REQUIRE_MESSAGE(best.ok(), best.status().to_string());
  for (const auto& res : seen.results) {
    CAPTURE(res.config.to_string());
    CHECK_FALSE(res.from_store);
    CHECK(res.status.ok());
  }
  CHECK(log.count(LogLevel::warning, "computed a wrong output") == 0);
}

TEST_CASE("TUNE_CACHE=off and readonly: tuning on Vulkan writes nothing under the cache dir") {
  for (const char* mode : {"off", "readonly"}) {
    CAPTURE(mode);
    ScratchCache cache;
    const fs::path run = cache.dir.parent_path() / (cache.dir.filename().string() + "-run");
    fs::create_directories(run);
    ScopedEnv runtime("XDG_RUNTIME_DIR", run.c_str());  // where the GPU locks go
    const auto k = kernels::bundled_kernel(Language::glsl, "vector_add");
    REQUIRE(k.has_value());
    AutotunerOptions opts;  // the default store: the database in the cache directory
    opts.bench.warmup_ms = 0.2;
    opts.bench.rep_ms = 0.5;
    auto tune_vector_add = [&](std::int64_t n) {
      auto dev = open_vulkan_or_skip();
      auto tuner = Autotuner::make(k->def, opts);
      REQUIRE(tuner.ok());
      auto w = k->workload(std::vector<std::int64_t>{n});
      REQUIRE(w->setup(*dev, 3).ok());
      REQUIRE((*tuner)->run(*dev, w->args()).ok());
      CHECK(w->check(*dev).ok());
    };
    // readonly over a cache that holds something: it is read, never written.
    if (std::string(mode) == "readonly") tune_vector_add(1000);
    // Every file and folder with its contents.
    auto everything = [&] {
      std::map<std::string, std::string> out;
      for (const auto& e : fs::recursive_directory_iterator(cache.dir)) {
        std::string bytes;
        if (e.is_regular_file()) {
          std::ifstream in(e.path(), std::ios::binary);
          bytes.assign(std::istreambuf_iterator<char>(in), {});
        }
        out[fs::relative(e.path(), cache.dir).string()] = bytes;
      }
      return out;
    };
    const auto before = everything();
    {
      ScopedEnv cache_mode("TUNE_CACHE", mode);
      tune_vector_add(4099);  // a new key: a tuning, compiles, the GPU lock
    }
    const auto after = everything();
    CHECK(after.size() == before.size());
    for (const auto& entry : after) {
      const std::string& name = entry.first;  // not a structured binding: CAPTURE takes it
      CAPTURE(name);
      CHECK(before.count(name) == 1);
      if (before.count(name)) CHECK(before.at(name) == entry.second);
    }
    fs::remove_all(run);
  }
}
