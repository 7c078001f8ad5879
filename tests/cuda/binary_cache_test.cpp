// gpu::compile_for through the binary cache: a second compile of the same variant is a hit,
// entries are keyed by everything that decides the binary, and the entry name the compiler
// reports survives the round trip. The cache itself (tune::BinaryCache) is tested in
// tests/core/binary_cache_test.cpp; this part needs tune_cuda_hip, built with CUDA or HIP.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "rtc.hpp"

namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("libtune-cubin-test-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(reinterpret_cast<std::uintptr_t>(this)));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// A fake compiler that counts real compiles; the cache logic is the one every backend uses.
struct Fake final : tune::gpu::RtcCompiler {
  int compiles = 0;
  std::string entry_name;  // reported with every binary
  std::string version() const override { return "fake 1.0"; }
  std::string_view binary_kind() const noexcept override { return "bin"; }
  tune::Result<std::vector<std::string>> target_options(std::string_view a, bool) const override {
    return std::vector<std::string>{"--arch=" + std::string(a)};
  }
  std::vector<std::string> base_options() const override { return {"-O3"}; }
  std::string max_registers_option(int) const override { return {}; }
  tune::Result<tune::gpu::RtcOutput> compile(std::string_view s, std::string_view,
                                             std::span<const std::string> o,
                                             std::span<const tune::KernelHeader>,
                                             std::string_view) override {
    ++compiles;
    tune::gpu::RtcOutput out;
    out.binary = std::string(s);
    for (const auto& x : o) out.binary += x;
    out.log = "log";
    out.entry_name = entry_name;
    return out;
  }
};

tune::KernelSource source() {
  tune::KernelSource src;
  src.language = tune::Language::cuda_hip;
  src.entry = "k";
  src.text = "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] = V; }";
  return src;
}

}  // namespace

TEST_CASE("compile_for hits the cache on the second compile, keyed by config and arch") {
  TempDir tmp;
  tune::BinaryCache cache(tmp.path, true);
  auto src = source();
  Fake fake;
  auto a = tune::gpu::compile_for(fake, "x1", src, tune::Config{{"V", 1}}, &cache);
  REQUIRE(a.ok());
  CHECK_FALSE(a->from_cache);
  auto b = tune::gpu::compile_for(fake, "x1", src, tune::Config{{"V", 1}}, &cache);
  REQUIRE(b.ok());
  CHECK(b->from_cache);
  CHECK(b->binary == a->binary);
  CHECK(b->log == a->log);
  CHECK(fake.compiles == 1);
  REQUIRE(tune::gpu::compile_for(fake, "x1", src, tune::Config{{"V", 2}}, &cache).ok());
  REQUIRE(tune::gpu::compile_for(fake, "x2", src, tune::Config{{"V", 1}}, &cache).ok());
  src.text += " ";
  REQUIRE(tune::gpu::compile_for(fake, "x1", src, tune::Config{{"V", 1}}, &cache).ok());
  CHECK(fake.compiles == 4);
  // Without a cache every call compiles.
  REQUIRE(tune::gpu::compile_for(fake, "x1", src, tune::Config{{"V", 1}}, nullptr).ok());
  CHECK(fake.compiles == 5);
}

TEST_CASE("the compiler's entry name is stored with the binary and restored on a hit") {
  TempDir tmp;
  tune::BinaryCache cache(tmp.path, true);
  Fake fake;
  fake.entry_name = "_Z1kILi4EEvPf";
  auto a = tune::gpu::compile_for(fake, "x1", source(), tune::Config{{"V", 4}}, &cache);
  REQUIRE(a.ok());
  CHECK(a->entry_name == fake.entry_name);
  fake.entry_name = "changed";  // a hit must not call the compiler, so this is not seen
  auto b = tune::gpu::compile_for(fake, "x1", source(), tune::Config{{"V", 4}}, &cache);
  REQUIRE(b.ok());
  CHECK(b->from_cache);
  CHECK(b->entry_name == "_Z1kILi4EEvPf");
  CHECK(fake.compiles == 1);
}

TEST_CASE("an entry naming another kernel under the right key is evicted and recompiled") {
  TempDir tmp;
  tune::BinaryCache cache(tmp.path, true);
  Fake fake;
  fake.entry_name = "_Z1kILi4EEvPf";
  REQUIRE(tune::gpu::compile_for(fake, "x1", source(), tune::Config{{"V", 4}}, &cache).ok());
  // Another program rewrites the entry: same key text and a valid checksum, but its own code
  // and entry point. Found by the one file in the cache directory.
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(tmp.path)) files.push_back(e.path());
  REQUIRE(files.size() == 1);
  std::string key;
  {
    std::ifstream in(files[0], std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::uint64_t key_bytes = 0;
    std::memcpy(&key_bytes, bytes.data() + 8, sizeof key_bytes);
    key = bytes.substr(48, key_bytes);
  }
  REQUIRE(cache.store(key, {"forged code", "", "steal_secrets"}));
  auto b = tune::gpu::compile_for(fake, "x1", source(), tune::Config{{"V", 4}}, &cache);
  REQUIRE(b.ok());
  CHECK_FALSE(b->from_cache);  // recompiled, not launched
  CHECK(b->entry_name == "_Z1kILi4EEvPf");
  CHECK(fake.compiles == 2);
  auto c = tune::gpu::compile_for(fake, "x1", source(), tune::Config{{"V", 4}}, &cache);
  CHECK(c->from_cache);  // the recompiled entry replaced the forged one
}

TEST_CASE("the key an output was stored or found under evicts it: the next compile compiles") {
  TempDir tmp;
  tune::BinaryCache cache(tmp.path, true);
  Fake fake;
  auto a = tune::gpu::compile_for(fake, "x1", source(), tune::Config{{"V", 5}}, &cache);
  REQUIRE(a.ok());
  REQUIRE_FALSE(a->cache_key.empty());  // stored under it
  auto b = tune::gpu::compile_for(fake, "x1", source(), tune::Config{{"V", 5}}, &cache);
  REQUIRE(b.ok());
  REQUIRE(b->from_cache);
  CHECK(b->cache_key == a->cache_key);  // found under it
  // What GpuDevice::evict_binary does for a cached binary that computed a wrong output.
  CHECK(cache.evict(b->cache_key, "a wrong output"));
  auto c = tune::gpu::compile_for(fake, "x1", source(), tune::Config{{"V", 5}}, &cache);
  REQUIRE(c.ok());
  CHECK_FALSE(c->from_cache);
  CHECK(fake.compiles == 2);
  // Without a cache there is no key: nothing to evict.
  auto d = tune::gpu::compile_for(fake, "x1", source(), tune::Config{{"V", 5}}, nullptr);
  REQUIRE(d.ok());
  CHECK(d->cache_key.empty());
}

TEST_CASE("a read-only cache serves hits and stores nothing") {
  TempDir tmp;
  tune::BinaryCache ro(tmp.path / "ro", false);
  Fake fake;
  REQUIRE(tune::gpu::compile_for(fake, "x1", source(), tune::Config{{"V", 1}}, &ro).ok());
  REQUIRE(tune::gpu::compile_for(fake, "x1", source(), tune::Config{{"V", 1}}, &ro).ok());
  CHECK(fake.compiles == 2);
  CHECK_FALSE(fs::exists(tmp.path / "ro"));
}
