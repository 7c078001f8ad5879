// BinaryCache: one checksummed file per entry, written by rename.
#include "tune/backend/binary_cache.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>
#include <type_traits>

#include "cache/safe_file.hpp"
#include "tune/backend/hash.hpp"
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
    : dir_(std::move(dir)), writable_(writable), damaged_level_(damaged_level) {
  // Temporaries of a process killed between write and rename: swept by age on a later open.
  if (writable_ && usable_dir())
    if (std::size_t n = cache::remove_stale_temp_files(dir_.string()))
      log(LogLevel::info, "binary cache: removed " + std::to_string(n) +
                              " stale temporary file(s) in " + dir_.string());
}

fs::path BinaryCache::path_for(std::string_view key_text) const {
  return dir_ / (hex64(stable_hash(key_text)) + ".bin");
}

bool BinaryCache::usable_dir() const {
  std::string why = cache::unsafe_dir_reason(dir_.string());
  if (why.empty()) return true;
  if (!warned_dir_.exchange(true))
    log_warning("binary cache: refusing " + dir_.string() + ": it is " + why +
                " (entries are neither read nor written there)");
  return false;
}

std::optional<BinaryCacheEntry> BinaryCache::load(std::string_view key_text) const {
  return load(key_text, {});
}

std::optional<BinaryCacheEntry> BinaryCache::load(std::string_view key_text,
                                                  const EntryCheck& check) const {
  if (!usable_dir()) return std::nullopt;
  const fs::path path = path_for(key_text);
  auto out = read_entry(path, key_text);
  if (!out || !check) return out;
  if (std::string why = check(*out); !why.empty()) {
    evict(key_text, why);
    return std::nullopt;
  }
  return out;
}

bool BinaryCache::evict(std::string_view key_text, std::string_view why) const {
  const fs::path path = path_for(key_text);
  log_warning("binary cache: evicting " + path.string() + " (" + std::string(why) +
              "); it will be recompiled");
  if (!writable_ || !usable_dir()) return false;
  // Only a regular file is removed; unlink never follows a link anyway.
  if (cache::inspect_path(path.string()).kind != cache::PathKind::regular) return false;
  std::error_code ec;
  return fs::remove(path, ec);
}

std::optional<BinaryCacheEntry> BinaryCache::read_entry(const fs::path& path,
                                                        std::string_view key_text) const {
  struct stat st {};
  std::string problem;
  const cache::PathCheck look = cache::inspect_path(path.string());
  if (look.kind == cache::PathKind::absent) return std::nullopt;  // a plain miss
  if (look.kind != cache::PathKind::regular) {
    log(damaged_level_, "binary cache: ignoring " + path.string() + ": it is " + look.problem +
                            " (treated as a miss; the next store replaces it)");
    return std::nullopt;
  }
  // Checked again on the descriptor: the path may have been replaced since the lstat.
  const int fd = cache::open_regular_for_read(path.string(), &st, &problem);
  if (fd < 0) {
    log(damaged_level_,
        "binary cache: cannot open " + path.string() + ": " + problem + " (treated as a miss)");
    return std::nullopt;
  }
  auto out = parse_entry(fd, static_cast<std::uint64_t>(st.st_size), path, key_text);
  ::close(fd);
  return out;
}

std::optional<BinaryCacheEntry> BinaryCache::parse_entry(int fd, std::uint64_t size,
                                                         const fs::path& path,
                                                         std::string_view key_text) const {
  auto damaged = [&](std::string_view why) -> std::optional<BinaryCacheEntry> {
    log(damaged_level_,
        "binary cache: ignoring damaged entry " + path.string() + " (" + std::string(why) + ")");
    return std::nullopt;
  };
  EntryHeader h{};
  if (size < sizeof h.magic || !cache::read_exact(fd, h.magic, sizeof h.magic))
    return damaged("shorter than its magic");
  if (std::memcmp(h.magic, kMagicPrefix, sizeof kMagicPrefix) != 0)
    return damaged("not a libtune binary-cache entry");
  if (h.magic[7] != kVersionDigit) {
    log(LogLevel::debug, "binary cache: " + path.string() + " is in format " +
                             std::string(1, h.magic[7]) + ", this libtune reads format " +
                             std::string(1, kVersionDigit) + "; treated as a miss");
    return std::nullopt;
  }
  if (size < sizeof h || !cache::read_exact(fd, reinterpret_cast<char*>(&h) + sizeof h.magic,
                                            sizeof h - sizeof h.magic))
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
    if (!cache::read_exact(fd, part->data(), part->size())) return damaged("read failed");
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
  if (!writable_ || !usable_dir()) return false;
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) {
    log_warning("binary cache: cannot create " + dir_.string() + ": " + ec.message());
    return false;
  }
  if (!usable_dir()) return false;  // a link put there between the look and the creation
  const fs::path final_path = path_for(key_text);
  EntryHeader h{};
  std::memcpy(h.magic, kMagicPrefix, sizeof kMagicPrefix);
  h.magic[7] = kVersionDigit;
  h.key_bytes = key_text.size();
  h.name_bytes = entry.entry_name.size();
  h.log_bytes = entry.log.size();
  h.binary_bytes = entry.binary.size();
  h.checksum = entry_checksum(key_text, entry.entry_name, entry.log, entry.binary);
  // A new file of our own (O_EXCL|O_NOFOLLOW): never an existing file, never through a link.
  std::string tmp_path, problem;
  const int fd =
      cache::create_temp_file(dir_.string(), final_path.filename().string(), &tmp_path, &problem);
  if (fd < 0) {
    log_warning("binary cache: cannot create a temporary file in " + dir_.string() + ": " +
                problem);
    return false;
  }
  bool ok = cache::write_all(fd, std::string_view(reinterpret_cast<const char*>(&h), sizeof h));
  for (std::string_view part : {key_text, std::string_view(entry.entry_name),
                                std::string_view(entry.log), std::string_view(entry.binary)})
    ok = ok && cache::write_all(fd, part);
  const int write_errno = errno;
  ok = (::close(fd) == 0) && ok;
  if (!ok) {
    log_warning("binary cache: cannot write " + tmp_path + ": " + std::strerror(write_errno));
    fs::remove(tmp_path, ec);
    return false;
  }
  // rename() replaces whatever is at the final path (a link or a FIFO included) without
  // following or opening it.
  fs::rename(tmp_path, final_path, ec);
  if (ec) {
    log_warning("binary cache: cannot rename into " + final_path.string() + ": " + ec.message());
    fs::remove(tmp_path, ec);
    return false;
  }
  return true;
}

}  // namespace tune
