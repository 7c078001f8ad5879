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

// Records every log message, debug included, for one scope.
class LogCapture {
 public:
  LogCapture() {
    previous_ = set_log_sink([this](LogLevel level, std::string_view m) {
      std::lock_guard<std::mutex> lock(mu_);
      messages_.push_back({level, std::string(m)});
    });
  }
  ~LogCapture() { set_log_sink(previous_); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;
  int count(LogLevel level, std::string_view text) {
    std::lock_guard<std::mutex> lock(mu_);
    int n = 0;
    for (const auto& [l, m] : messages_)
      if (l == level && m.find(text) != std::string::npos) ++n;
    return n;
  }
  std::string all() {
    std::lock_guard<std::mutex> lock(mu_);
    std::string out;
    for (const auto& [l, m] : messages_) out += m + "\n";
    return out;
  }

 private:
  std::mutex mu_;
  std::vector<std::pair<LogLevel, std::string>> messages_;
  LogSink previous_;
};

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
