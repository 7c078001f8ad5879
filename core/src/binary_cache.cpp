// BinaryCache: one checksummed file per entry, written by rename.
#include "tune/binary_cache.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <system_error>
#include <thread>
#include <type_traits>

#include "tune/hash.hpp"
#include "tune/sqlite_store.hpp"  // cache_mode_from_env, default_cache_path: one parser for both

namespace tune {
namespace {

namespace fs = std::filesystem;

// Format 2: "TUNEBIN2", then the header's sizes, then key text, entry name, log, binary.
// Format 1 (libtune before the entry name existed) was "TUNEBIN1" with no entry name.
constexpr char kMagicPrefix[7] = {'T', 'U', 'N', 'E', 'B', 'I', 'N'};
constexpr char kVersionDigit = static_cast<char>('0' + BinaryCache::kFormatVersion);
static_assert(BinaryCache::kFormatVersion >= 0 && BinaryCache::kFormatVersion <= 9);

struct EntryHeader {
  char magic[8];  // kMagicPrefix then the format version as one ASCII digit
  std::uint64_t key_bytes;
  std::uint64_t name_bytes;
  std::uint64_t log_bytes;
  std::uint64_t binary_bytes;
  std::uint64_t checksum;  // entry_checksum over the four parts and their sizes
};
static_assert(sizeof(EntryHeader) == 48 && std::is_trivially_copyable_v<EntryHeader>);

// Sanity limits: a header claiming more than this is damaged, not an allocation to attempt.
constexpr std::uint64_t kMaxKeyBytes = 1u << 20;
constexpr std::uint64_t kMaxNameBytes = 1u << 20;
constexpr std::uint64_t kMaxLogBytes = 64u << 20;
constexpr std::uint64_t kMaxBinaryBytes = 1ull << 32;

std::uint64_t entry_checksum(std::string_view key, std::string_view name, std::string_view log,
                             std::string_view bin) {
  std::uint64_t h = stable_hash(key);
  h = stable_hash(name, h);
  h = stable_hash(log, h);
  h = stable_hash(bin, h);
  for (std::size_t n : {key.size(), name.size(), log.size(), bin.size()}) h = hash_combine(h, n);
  return h;
}

}  // namespace

std::shared_ptr<BinaryCache> BinaryCache::open_default(std::string_view kind,
                                                       LogLevel damaged_level) {
  const CacheMode mode = cache_mode_from_env();
  if (mode == CacheMode::off) return nullptr;
  // default_cache_path() is <base>/tune.db: the compiled caches live beside the database.
  const std::string db = default_cache_path();
  if (db.empty()) return nullptr;
  return std::make_shared<BinaryCache>(fs::path(db).parent_path() / std::string(kind),
                                       mode == CacheMode::readwrite, damaged_level);
}

BinaryCache::BinaryCache(fs::path dir, bool writable, LogLevel damaged_level)
    : dir_(std::move(dir)), writable_(writable), damaged_level_(damaged_level) {}

fs::path BinaryCache::path_for(std::string_view key_text) const {
  return dir_ / (hex64(stable_hash(key_text)) + ".bin");
}

std::optional<BinaryCacheEntry> BinaryCache::load(std::string_view key_text) const {
  const fs::path path = path_for(key_text);
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;  // a plain miss
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) {
    log(damaged_level_, "binary cache: cannot open " + path.string() + " (treated as a miss)");
    return std::nullopt;
  }
  // The size of the file this stream opened: another process may rename a new entry into
  // place at any moment, and a size taken from the path could belong to the other file.
  const std::streamoff end = in.tellg();
  if (end < 0 || !in.seekg(0)) {
    log(damaged_level_, "binary cache: cannot read " + path.string() + " (treated as a miss)");
    return std::nullopt;
  }
  const auto size = static_cast<std::uint64_t>(end);
  auto damaged = [&](std::string_view why) -> std::optional<BinaryCacheEntry> {
    log(damaged_level_,
        "binary cache: ignoring damaged entry " + path.string() + " (" + std::string(why) + ")");
    return std::nullopt;
  };
  EntryHeader h{};
  if (size < sizeof h.magic || !in.read(h.magic, sizeof h.magic))
    return damaged("shorter than its magic");
  if (std::memcmp(h.magic, kMagicPrefix, sizeof kMagicPrefix) != 0)
    return damaged("not a libtune binary-cache entry");
  if (h.magic[7] != kVersionDigit) {
    log(LogLevel::debug, "binary cache: " + path.string() + " is in format " +
                             std::string(1, h.magic[7]) + ", this libtune reads format " +
                             std::string(1, kVersionDigit) + "; treated as a miss");
    return std::nullopt;
  }
  if (size < sizeof h || !in.read(reinterpret_cast<char*>(&h) + sizeof h.magic,
                                  static_cast<std::streamsize>(sizeof h - sizeof h.magic)))
    return damaged("truncated header");
  if (h.key_bytes > kMaxKeyBytes || h.name_bytes > kMaxNameBytes || h.log_bytes > kMaxLogBytes ||
      h.binary_bytes > kMaxBinaryBytes)
    return damaged("implausible sizes in the header");
  if (sizeof h + h.key_bytes + h.name_bytes + h.log_bytes + h.binary_bytes != size)
    return damaged("file size does not match the header (truncated or extended)");
  std::string key(h.key_bytes, '\0');
  BinaryCacheEntry out;
  out.entry_name.resize(h.name_bytes);
  out.log.resize(h.log_bytes);
  out.binary.resize(h.binary_bytes);
  for (std::string* part : {&key, &out.entry_name, &out.log, &out.binary}) {
    if (!in.read(part->data(), static_cast<std::streamsize>(part->size())))
      return damaged("read failed");
  }
  if (h.checksum != entry_checksum(key, out.entry_name, out.log, out.binary))
    return damaged("checksum mismatch");
  if (key != key_text) {
    log(LogLevel::debug, "binary cache: " + path.string() +
                             " holds another key with the same hash; treated as a miss");
    return std::nullopt;
  }
  return out;
}

bool BinaryCache::store(std::string_view key_text, const BinaryCacheEntry& entry) const {
  if (!writable_) return false;
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) {
    log_warning("binary cache: cannot create " + dir_.string() + ": " + ec.message());
    return false;
  }
  static std::atomic<std::uint64_t> counter{0};
  const fs::path final_path = path_for(key_text);
  // Unique per process, thread and call: concurrent writers never share a temporary file.
  std::ostringstream tmp_name;
  tmp_name << final_path.filename().string() << ".tmp." << ::getpid() << "."
           << std::hash<std::thread::id>{}(std::this_thread::get_id()) << "." << counter++;
  const fs::path tmp_path = dir_ / tmp_name.str();
  EntryHeader h{};
  std::memcpy(h.magic, kMagicPrefix, sizeof kMagicPrefix);
  h.magic[7] = kVersionDigit;
  h.key_bytes = key_text.size();
  h.name_bytes = entry.entry_name.size();
  h.log_bytes = entry.log.size();
  h.binary_bytes = entry.binary.size();
  h.checksum = entry_checksum(key_text, entry.entry_name, entry.log, entry.binary);
  {
    std::ofstream out(tmp_path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(&h), sizeof h);
    for (std::string_view part : {key_text, std::string_view(entry.entry_name),
                                  std::string_view(entry.log), std::string_view(entry.binary)})
      out.write(part.data(), static_cast<std::streamsize>(part.size()));
    out.flush();
    if (!out) {
      log_warning("binary cache: cannot write " + tmp_path.string());
      out.close();
      fs::remove(tmp_path, ec);
      return false;
    }
  }
  fs::rename(tmp_path, final_path, ec);
  if (ec) {
    log_warning("binary cache: cannot rename into " + final_path.string() + ": " + ec.message());
    fs::remove(tmp_path, ec);
    return false;
  }
  return true;
}

}  // namespace tune
