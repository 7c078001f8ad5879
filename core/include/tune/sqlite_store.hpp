// SqliteStore: the persistent TuningStore, one SQLite database file shared by every process.
//
// Layout: table `results`, one row per (kernel, source hash, key, device fingerprint,
// toolchain fingerprint, config text) holding the config's status, failure reason, sample
// statistics, the unix time it was measured and a checksum of the row; table `claims`, one
// row per key being tuned (see try_claim). PRAGMA application_id marks the file as libtune's
// and PRAGMA user_version is the schema version, so a foreign or older file is recognised.
// The checksum column and the claims table joined schema version 1 in place: a version-1
// file without them gains them on its first readwrite open (never moved aside for it). The
// database runs in WAL mode with a busy timeout (on a network file system, where WAL does
// not work, in journal_mode=DELETE with file locking and one warning); every write is one
// IMMEDIATE transaction, so concurrent processes never lose or duplicate rows.
//
// What is promised when the files are attacked or damaged (every case is one warning naming
// the file and the problem; neither load() nor save() throws or fails the tuning):
// - Nothing at the path is followed or opened blindly: tune.db and its -wal/-shm/-journal
//   companions are looked at with lstat first. A symbolic link, FIFO, device, socket or
//   directory is refused (SQLITE_OPEN_NOFOLLOW as well); in readwrite mode it is renamed to
//   "<file>.corrupt-<unix time>" (the link itself, never its target) and a fresh database is
//   started.
// - A file that is not a database, is corrupt or truncated, or carries another application's
//   or an older schema is renamed "<file>.corrupt-<unix time>" (with its companions; never
//   deleted) and replaced by a fresh database. A corrupt file of our schema has its readable
//   rows that pass the row checks copied into the fresh one, and the warning says how many
//   were salvaged (and lost, when the damaged file can still count them). Integrity is
//   checked on open (quick_check; the full integrity_check for files up to 4 MiB) and again
//   in full when a read finds a bad row.
// - A file is moved aside only while it is still the file this store opened (same device and
//   inode). Every call first checks that identity: a database deleted or replaced since it
//   was opened (e.g. moved aside by another process) is reopened, so reads and writes go to
//   the live file.
// - A file whose mode has no write bit, or that access(2) says is not writable, or whose
//   directory is read-only, is used read-only in readwrite mode: its rows are read, new rows
//   are not saved (one warning). Such a file that is also damaged cannot be moved: the store
//   keeps its rows in memory for the life of the process.
// - A file written by a newer libtune (higher schema version) is left untouched and the
//   store works in memory.
// - In readonly mode the file is never modified, created or moved: any problem is a warning
//   and the store behaves as empty.
// - Rows are checked when read: the SQLite type of every column, the row checksum (NULL in
//   rows written by a libtune without it: not checked), and check_stored_row(). A bad row is
//   ignored with one warning per key, never chosen.
// - A failed write is reported with its own reason (e.g. "database or disk is full").
// The store writes no temporary files of its own; SQLite's journals are SQLite's (a hot
// journal is needed to roll back) and are never deleted by libtune.
// Whether a config belongs to the kernel's declared space is checked by the caller, who knows
// the space: see tune/cache_validation.hpp.
//
// Thread safety: every member may be called concurrently; calls are serialised on one
// connection.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tune/config_space.hpp"
#include "tune/status.hpp"
#include "tune/store.hpp"

namespace tune {

// TUNE_CACHE: whether the persistent store is used, and how.
enum class CacheMode : std::uint8_t { off, readonly, readwrite };
std::string_view to_string(CacheMode mode) noexcept;
// Parses "off", "readonly", "readwrite" (also "0"/"1", "false"/"true", "ro"/"rw", any case).
bool parse_cache_mode(std::string_view text, CacheMode* out) noexcept;
// TUNE_CACHE from the environment; unset or empty is readwrite. An invalid value logs a
// warning naming the variable and its value and yields readwrite.
CacheMode cache_mode_from_env();
// $TUNE_CACHE_DIR/tune.db, else $XDG_CACHE_HOME/libtune/tune.db, else
// $HOME/.cache/libtune/tune.db; empty when none of these variables is set.
std::string default_cache_path();

// The schema version this libtune reads and writes (PRAGMA user_version).
inline constexpr int kCacheSchemaVersion = 1;
// PRAGMA application_id of a libtune cache ("ltun").
inline constexpr std::int32_t kCacheApplicationId = 0x6c74756e;

// One stored row with the key it belongs to.
struct CacheRow {
  StoreKey key;
  StoredResult result;
};

// One StoreKey's summary, as `tune cache list` shows it.
struct CacheEntry {
  StoreKey key;
  std::string best_config;  // lowest median among ok rows; empty when none is ok
  SampleStats best_stats;
  std::size_t rows = 0;          // configs stored for this key
  std::size_t failed = 0;        // of which not ok
  std::int64_t newest_time = 0;  // unix time of the most recent row
};

// Which rows an operation applies to. Empty fields match everything. `kernel` and `key`
// match exactly; `device` matches a device fingerprint that contains it
// ("H200", "cuda|", or a whole fingerprint).
struct CacheFilter {
  std::string kernel;
  std::string key;
  std::string device;
};

// What import_json did. A row is `added` when no row had its identity, `replaced` when the
// imported row has better provenance than the stored one, `kept` when it does not, and
// `rejected` when it failed validation (each rejection is described in `problems`).
struct ImportStats {
  std::size_t added = 0;
  std::size_t replaced = 0;
  std::size_t kept = 0;
  std::size_t rejected = 0;
  std::vector<std::string> problems;
};

struct ImportOptions {
  // The declared space of a kernel, when the importer knows it; imported rows whose config is
  // not a point of that space are rejected. Null or returning null: only the space-independent
  // checks apply (they apply again, with the space, when the Autotuner loads the rows).
  std::function<const ConfigSpace*(const StoreKey&)> space_for;
};

// Provenance order used by import: whether `incoming` may replace `existing` (same identity).
// A measured (ok) row is never replaced by a failure; between two rows of the same kind the
// one with more samples wins, then the newer one; on a full tie the stored row stays.
bool has_better_provenance(const StoredResult& incoming, const StoredResult& existing) noexcept;

// Plausibility floor of a stored or imported time: no kernel launch is timed below 1 ns (a
// device's peak is not known when a row is imported, so this is a floor, not a model).
inline constexpr double kMinPlausibleTimeNs = 1.0;
// More samples than this is damage, not a measurement.
inline constexpr std::uint32_t kMaxPlausibleSampleCount = 100'000'000;

// Space-independent checks of one stored or imported row: the config text parses (and is
// returned in canonical form through `canonical`); the sample count is at most
// kMaxPlausibleSampleCount; the unix time is not negative nor more than a year ahead; and an
// ok row has count > 0, every statistic finite and at least kMinPlausibleTimeNs, quantiles
// ordered (min <= p20 <= median <= p80 <= max) and the mean within [min, max]. A row that
// fails is refused (import) or ignored with a warning (load), never chosen. The message
// says what is wrong.
Status check_stored_row(const StoredResult& row, std::string* canonical = nullptr);

// JSON interchange format of `tune cache export` / `import`:
//   {"format": "libtune-cache", "version": 1, "rows": [
//     {"kernel": "...", "source_hash": "0x<16 hex digits>", "key": "...", "device": "...",
//      "toolchain": "...", "config": "BM=64,...", "status": "ok", "reason": "",
//      "unix_time": 1700000000,
//      "stats": {"count": 40, "min": .., "p20": .., "median": .., "p80": .., "max": ..,
//                "mean": ..}}]}
// Statistics are nanoseconds; a non-finite value is written as null.
std::string cache_rows_to_json(std::span<const CacheRow> rows);
// Parses that format. A document that is not JSON or not this format is an error
// (invalid_argument / data_loss); rows that fail the row checks are skipped and described in
// `problems` (when non-null), never returned.
Result<std::vector<CacheRow>> cache_rows_from_json(std::string_view text,
                                                   std::vector<std::string>* problems = nullptr);

class SqliteStore final : public TuningStore {
 public:
  struct Options {
    CacheMode mode = CacheMode::readwrite;  // off is treated as readonly by open()
    int busy_timeout_ms = 30000;            // how long a write waits for another process's write
    // Names the network file system a directory is on ("NFS", "Lustre", "CIFS", ...), or
    // returns empty when it is local. Null: statfs(2)'s f_type. Tests inject one.
    std::function<std::string(const std::string& dir)> filesystem_probe = nullptr;
  };

  // Opens the database at `path`, creating it and its directory in readwrite mode. Never
  // fails: damage is handled as the header comment says. The special path ":memory:" makes a
  // store that lives in memory only.
  static std::shared_ptr<SqliteStore> open(std::string path, Options opts);
  static std::shared_ptr<SqliteStore> open(std::string path) {
    return open(std::move(path), Options{});
  }
  ~SqliteStore() override;
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  std::vector<StoredResult> load(const StoreKey& key) override;
  void save(const StoreKey& key, std::span<const StoredResult> rows) override;
  // Claims live in the database's `claims` table (one row per key: owner "<host>:<pid>",
  // expiry in unix milliseconds). Granted always when the store is read-only or in memory,
  // and when the claim cannot be written (with one warning): a failure never stops tuning.
  bool try_claim(const StoreKey& key, std::chrono::milliseconds ttl) override;
  void release_claim(const StoreKey& key) override;

  // The file this store was asked to use.
  const std::string& path() const noexcept;
  CacheMode mode() const noexcept;
  // Whether rows now live in memory only (the file was unusable or ":memory:" was asked).
  bool in_memory() const;
  // Whether save() writes anywhere (false in readonly mode and for a newer schema).
  bool writable() const;
  // Where a file was moved aside by this store, if it was.
  std::string moved_aside_to() const;

  // Library side of `tune cache`.
  Result<std::vector<CacheEntry>> list_entries(const CacheFilter& filter = {});
  // Every row matching the filter, ordered by kernel, key, device, toolchain, then median.
  Result<std::vector<CacheRow>> rows(const CacheFilter& filter = {});
  // Deletes the rows matching the filter; returns how many. failed_precondition-like
  // invalid_argument when the store is not writable.
  Result<std::size_t> clear(const CacheFilter& filter = {});
  Result<std::string> export_json(const CacheFilter& filter = {});
  // Validates and merges rows by the provenance rule (has_better_provenance) in one
  // transaction.
  Result<ImportStats> import_json(std::string_view text, const ImportOptions& opts = {});

 private:
  struct Impl;
  explicit SqliteStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The store the environment asks for, freshly opened (default_store() caches one of these):
// null when TUNE_CACHE=off or no cache path can be derived (with a warning in that case).
std::shared_ptr<SqliteStore> open_store_from_env();

}  // namespace tune
