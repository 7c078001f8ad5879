// tune::BinaryCache, the compiled-binary disk cache every backend uses (CUBIN, HSACO, SPIR-V,
// Vulkan pipeline caches): round trips, damage and older formats read as misses and are
// replaced, read-only and TUNE_CACHE handling, concurrent writers. Only scratch directories.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "log_capture.hpp"
#include "scoped_env.hpp"
#include "tune/backend/binary_cache.hpp"
#include "tune/backend/hash.hpp"
#include "tune/log.hpp"

namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    path =
        fs::temp_directory_path() / ("libtune-bincache-test-" + std::to_string(::getpid()) + "-" +
                                     std::to_string(reinterpret_cast<std::uintptr_t>(this)));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

using EnvVar = tune::testing::ScopedEnv;

using tune::testing::LogCapture;

std::vector<fs::path> entries(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path());
  return out;
}

tune::BinaryCacheEntry sample_entry() {
  tune::BinaryCacheEntry e;
  e.binary = std::string(
      "\x7f"
      "ELF\0binary",
      10);
  e.log = "ptxas info: Used 10 registers";
  e.entry_name = "_Z6kernelILi64EEvPf";
  return e;
}

// Writes an entry in format 1 (libtune before entry names): "TUNEBIN1", sizes of key, log and
// binary, a checksum, then the three parts. Its contents are otherwise valid.
void write_format1(const fs::path& path, std::string_view key, std::string_view log,
                   std::string_view bin) {
  struct Header1 {
    char magic[8];
    std::uint64_t key_bytes, log_bytes, binary_bytes, checksum;
  } h{};
  std::memcpy(h.magic, "TUNEBIN1", 8);
  h.key_bytes = key.size();
  h.log_bytes = log.size();
  h.binary_bytes = bin.size();
  h.checksum = tune::stable_hash(bin, tune::stable_hash(log, tune::stable_hash(key)));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(&h), sizeof h);
  out.write(key.data(), static_cast<std::streamsize>(key.size()));
  out.write(log.data(), static_cast<std::streamsize>(log.size()));
  out.write(bin.data(), static_cast<std::streamsize>(bin.size()));
}

}  // namespace

TEST_CASE("store then load returns the same binary, log and entry name") {
  TempDir tmp;
  tune::BinaryCache cache(tmp.path, true);
  const auto e = sample_entry();
  CHECK(cache.store("key one", e));
  auto hit = cache.load("key one");
  REQUIRE(hit.has_value());
  CHECK(hit->binary == e.binary);
  CHECK(hit->log == e.log);
  CHECK(hit->entry_name == e.entry_name);
  CHECK_FALSE(cache.load("key two").has_value());
  // No temporary file is left behind; the entry is where path_for says.
  CHECK(entries(tmp.path) == std::vector<fs::path>{cache.path_for("key one")});

  // Empty parts round-trip too.
  CHECK(cache.store("empty", tune::BinaryCacheEntry{}));
  auto empty = cache.load("empty");
  REQUIRE(empty.has_value());
  CHECK(empty->binary.empty());
  CHECK(empty->entry_name.empty());
}

TEST_CASE(
    "a truncated, extended or corrupted entry is a miss with a warning; a rewrite repairs it") {
  TempDir tmp;
  LogCapture log;
  tune::BinaryCache cache(tmp.path, true);
  tune::BinaryCacheEntry e;
  e.binary = std::string(1000, 'x');
  e.entry_name = "main";
  REQUIRE(cache.store("k", e));
  const fs::path file = cache.path_for("k");
  fs::resize_file(file, fs::file_size(file) - 10);
  CHECK_FALSE(cache.load("k").has_value());
  CHECK(log.count(tune::LogLevel::warning, file.string()) == 1);

  REQUIRE(cache.store("k", e));
  { std::ofstream(file, std::ios::binary | std::ios::app) << "trailing"; }
  CHECK_FALSE(cache.load("k").has_value());
  CHECK(log.count(tune::LogLevel::warning, file.string()) == 2);

  REQUIRE(cache.store("k", e));
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-5, std::ios::end);
    f.put('y');  // flip one byte of the binary: the checksum no longer matches
  }
  CHECK_FALSE(cache.load("k").has_value());
  CHECK(log.count(tune::LogLevel::warning, "checksum") == 1);

  // A header whose sizes claim gigabytes is damage, not an allocation.
  REQUIRE(cache.store("k", e));
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(8 + 3 * 8);  // binary_bytes
    const std::uint64_t huge = 3ull << 30;
    f.write(reinterpret_cast<const char*>(&huge), sizeof huge);
  }
  CHECK_FALSE(cache.load("k").has_value());

  // Not a cache entry at all.
  { std::ofstream(file, std::ios::binary | std::ios::trunc) << "hello"; }
  CHECK_FALSE(cache.load("k").has_value());

  REQUIRE(cache.store("k", e));
  auto hit = cache.load("k");
  REQUIRE(hit.has_value());
  CHECK(hit->binary == e.binary);
}

TEST_CASE("damage is reported at the level the cache was opened with") {
  TempDir tmp;
  LogCapture log;
  tune::BinaryCache cache(tmp.path, true, tune::LogLevel::debug);
  REQUIRE(cache.store("k", sample_entry()));
  fs::resize_file(cache.path_for("k"), 20);
  CHECK_FALSE(cache.load("k").has_value());
  CHECK(log.count(tune::LogLevel::warning, "binary cache") == 0);
  CHECK(log.count(tune::LogLevel::debug, "damaged") == 1);
}

TEST_CASE("an entry of the older format (no entry name) is a quiet miss and is replaced") {
  TempDir tmp;
  LogCapture log;
  tune::BinaryCache cache(tmp.path, true);
  const fs::path file = cache.path_for("old key");
  write_format1(file, "old key", "old log", "old binary");
  CHECK_FALSE(cache.load("old key").has_value());
  CHECK(log.count(tune::LogLevel::warning, "binary cache") == 0);
  CHECK(log.count(tune::LogLevel::debug, "format 1") == 1);
  // The next store of the key replaces it in the current format.
  REQUIRE(cache.store("old key", sample_entry()));
  auto hit = cache.load("old key");
  REQUIRE(hit.has_value());
  CHECK(hit->entry_name == sample_entry().entry_name);
  CHECK(entries(tmp.path).size() == 1);
}

TEST_CASE("an entry holding another key (a hash collision) is a miss") {
  TempDir tmp;
  tune::BinaryCache cache(tmp.path, true);
  REQUIRE(cache.store("a", sample_entry()));
  // Pretend "b" hashed to a's file.
  fs::rename(cache.path_for("a"), cache.path_for("b"));
  CHECK_FALSE(cache.load("b").has_value());
}

TEST_CASE("a read-only cache reads but never writes") {
  TempDir tmp;
  tune::BinaryCache ro(tmp.path / "ro", false);
  CHECK_FALSE(ro.writable());
  CHECK_FALSE(ro.store("k", sample_entry()));
  CHECK_FALSE(fs::exists(tmp.path / "ro"));
  tune::BinaryCache rw(tmp.path / "ro", true);
  REQUIRE(rw.store("k", sample_entry()));
  auto hit = ro.load("k");
  REQUIRE(hit.has_value());
  CHECK(hit->binary == sample_entry().binary);
}

TEST_CASE("open_default follows TUNE_CACHE and TUNE_CACHE_DIR") {
  TempDir tmp;
  EnvVar dir("TUNE_CACHE_DIR", tmp.path.c_str());
  {
    EnvVar mode("TUNE_CACHE", nullptr);
    auto c = tune::BinaryCache::open_default("cubin");
    REQUIRE(c != nullptr);
    CHECK(c->dir() == tmp.path / "cubin");
    CHECK(c->writable());
  }
  {
    EnvVar mode("TUNE_CACHE", "readonly");
    auto c = tune::BinaryCache::open_default("spirv");
    REQUIRE(c != nullptr);
    CHECK(c->dir() == tmp.path / "spirv");
    CHECK_FALSE(c->writable());
  }
  {
    EnvVar mode("TUNE_CACHE", "off");
    CHECK(tune::BinaryCache::open_default("spirv") == nullptr);
  }
  {
    EnvVar mode("TUNE_CACHE", nullptr);
    EnvVar unset_dir("TUNE_CACHE_DIR", nullptr);
    EnvVar xdg("XDG_CACHE_HOME", (tmp.path / "xdg").c_str());
    auto c = tune::BinaryCache::open_default("hsaco");
    REQUIRE(c != nullptr);
    CHECK(c->dir() == tmp.path / "xdg" / "libtune" / "hsaco");
  }
  // Opening never creates anything.
  CHECK(entries(tmp.path).empty());
}

TEST_CASE("concurrent writers of one key leave one complete entry") {
  TempDir tmp;
  tune::BinaryCache cache(tmp.path, true);
  tune::BinaryCacheEntry e;
  e.binary = std::string(1 << 20, 'z');
  e.entry_name = "main";
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      for (int j = 0; j < 5; ++j) (void)cache.store("same key", e);
    });
  // A reader during the writes sees either nothing or a whole entry, never a damaged one.
  LogCapture log;
  for (int j = 0; j < 20; ++j) {
    auto hit = cache.load("same key");
    if (hit) CHECK(hit->binary.size() == e.binary.size());
  }
  for (auto& t : threads) t.join();
  CHECK(log.count(tune::LogLevel::warning, "binary cache") == 0);
  CHECK(entries(tmp.path).size() == 1);
  auto hit = cache.load("same key");
  REQUIRE(hit.has_value());
  CHECK(hit->binary == e.binary);
}
