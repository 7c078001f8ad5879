// BinaryCache: compiled code objects on disk (CUBIN, HSACO, SPIR-V, driver pipeline caches),
// one file per entry, shared by every backend and every process on the machine.
//
// Keys: the caller builds a key text that names everything that decides the entry's bytes
// (compiler and its version, every option, target, a hash of the source...). The file is
// <dir>/<16 hex digits of stable_hash(key text)>.bin and holds the full key text, which is
// compared on load, so a hash collision reads as a miss, never as a wrong binary.
//
// Writes go to a new temporary file in the same directory (created O_EXCL|O_NOFOLLOW, so
// never an existing file or a link's target) that is then renamed into place, so concurrent
// writers (threads or processes) never expose a partial file; the last writer of a key wins.
// Temporaries older than an hour (left by a process killed between write and rename) are
// removed when a writable cache is constructed. Every entry carries a format version and a
// checksum of its contents: a truncated, corrupt or foreign file reads as a miss (logged at
// the level given at construction, a warning by default), an entry in another format
// version (an older or newer libtune) reads as a miss logged at debug level; either is
// replaced by the next store() of its key. An entry that is a symbolic link, FIFO, device or
// socket is never followed or opened (lstat, then O_NOFOLLOW|O_NONBLOCK and fstat): a miss
// with a warning. A cache directory that is a symbolic link is not used at all (one
// warning). The checksum protects against damage, not against another program writing a
// well-formed entry under the right key: callers pass an EntryCheck (the interface they
// expect, e.g. the entry point) and an entry that fails it is evicted and recompiled.
// Nothing here fails a compile: I/O problems become log messages and misses.
//
// Thread safety: load() and store() may be called concurrently from any thread.
// Blocking: both do file I/O on the calling thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "tune/log.hpp"

namespace tune {

// One cached compile result.
struct BinaryCacheEntry {
  std::string binary;      // the code object: CUBIN, HSACO, SPIR-V, a driver's cache blob
  std::string log;         // the compiler's log (warnings, resource usage); may be empty
  std::string entry_name;  // the lowered / mangled entry-point name; may be empty
};

class BinaryCache {
 public:
  // The on-disk format this libtune reads and writes; entries of any other version are misses.
  static constexpr int kFormatVersion = 2;

  // A cache in <base>/<kind>, where <base> is $TUNE_CACHE_DIR, else $XDG_CACHE_HOME/libtune,
  // else $HOME/.cache/libtune (the directory of the tuning database). Null when TUNE_CACHE is
  // off (nothing is read or written) or no base directory can be named; read-only (store()
  // does nothing) when TUNE_CACHE is readonly. The directory is created by the first store().
  static std::shared_ptr<BinaryCache> open_default(std::string_view kind,
                                                   LogLevel damaged_level = LogLevel::warning);

  // `damaged_level`: how a truncated, corrupt or foreign entry is reported.
  BinaryCache(std::filesystem::path dir, bool writable, LogLevel damaged_level = LogLevel::warning);

  // The entry stored under exactly `key_text`, or nullopt (absent, damaged, other format,
  // not a regular file).
  std::optional<BinaryCacheEntry> load(std::string_view key_text) const;
  // What the caller expects of an entry beyond its key (its interface: the entry point it
  // will look up, the bindings it will bind). Returns empty when the entry fits, else why not.
  using EntryCheck = std::function<std::string(const BinaryCacheEntry&)>;
  // load(), then `check`: an entry that does not fit is evicted (see evict()) and is a miss,
  // so the caller recompiles instead of failing the configuration.
  std::optional<BinaryCacheEntry> load(std::string_view key_text, const EntryCheck& check) const;
  // Removes `key_text`'s entry, with a warning naming the file and `why`. Returns whether a
  // file was removed (never in a read-only cache).
  bool evict(std::string_view key_text, std::string_view why) const;
  // Stores `entry` under `key_text`, replacing any entry of that key. Returns true when the
  // file was written; false when the cache is read-only or writing failed (logged as a warning).
  bool store(std::string_view key_text, const BinaryCacheEntry& entry) const;

  // The file that holds (or would hold) `key_text`'s entry.
  std::filesystem::path path_for(std::string_view key_text) const;
  const std::filesystem::path& dir() const noexcept { return dir_; }
  bool writable() const noexcept { return writable_; }

 private:
  // False (with one warning) when the directory is a symbolic link or not a directory.
  bool usable_dir() const;
  std::optional<BinaryCacheEntry> read_entry(const std::filesystem::path& path,
                                             std::string_view key_text) const;
  std::optional<BinaryCacheEntry> parse_entry(int fd, std::uint64_t size,
                                              const std::filesystem::path& path,
                                              std::string_view key_text) const;

  std::filesystem::path dir_;
  bool writable_;
  LogLevel damaged_level_;
  mutable std::atomic<bool> warned_dir_{false};
};

}  // namespace tune
