// SqliteStore: the persistent TuningStore, one SQLite database file shared by every process.
//
// The file holds one row per (kernel, source hash, key, device fingerprint, toolchain
// fingerprint, config) with the config's status, failure reason, sample statistics, the unix
// time it was measured, a checksum, whether its output was verified and, on a key's decided
// winner, its decision record (StoredResult::decision), and one claim per key being
// tuned (see try_claim). It is marked as libtune's (PRAGMA application_id) with its schema version
// (PRAGMA user_version), so a foreign or older file is recognised. The database runs in WAL mode
// with a busy timeout (on a network file system, where WAL does not work, in journal_mode=DELETE
// with file locking and one warning); every write is one IMMEDIATE transaction, so concurrent
// processes never lose or duplicate rows.
//
// What is promised when the files are attacked or damaged (every case is one warning naming
// the file and the problem; neither load() nor save() throws or fails the tuning):
// - Nothing at the path is followed or opened blindly: tune.db and its -wal/-shm/-journal
//   companions are looked at with lstat first. A symbolic link, FIFO, device, socket or
//   directory is refused (SQLITE_OPEN_NOFOLLOW as well); in readwrite mode it is renamed to
//   "<file>.corrupt-<unix time>" (the link itself, never its target) and a fresh database is
//   started.
// - A file of schema version 1 or 2 is upgraded in place on the first readwrite open (its rows
//   read as not checked when version 1: StoredResult::verified false; without decision
//   records) and read as it is when read-only.
// - A file that is not a database, is corrupt or truncated, or carries another application's
//   or a schema older than version 1 is renamed "<file>.corrupt-<unix time>" (with its
//   companions; never deleted) and replaced by a fresh database. A corrupt file of our schema (by
//   its inspection or, when the damage hides that, by its header) has its readable rows that pass
//   the row checks copied into the fresh one: those SQLite reads, and those read straight
//   from the file's intact pages (beyond a truncation, a damaged page or a damaged schema).
//   The warning says how many were salvaged (and lost, when the damaged file can still count
//   them). Integrity is
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
//   rows written by a libtune without it: not checked), and the row checks (the config
//   parses; a plausible sample count and date; for an ok row, finite statistics of at least
//   1 ns in order). A bad row is ignored with one warning per key, never chosen.
// - A failed write is reported with its own reason (e.g. "database or disk is full").
// The store writes no temporary files of its own; SQLite's journals are SQLite's (a hot
// journal is needed to roll back) and are never deleted by libtune.
// Whether a config belongs to the kernel's declared space is checked by the caller, who knows
// the space (the Autotuner does, when it loads rows).
//
// Thread safety: every member may be called concurrently; calls are serialised on one
// connection.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tune/config_space.hpp"
#include "tune/status.hpp"
#include "tune/store.hpp"

namespace tune {

// TUNE_CACHE: whether the persistent store is used, and how ("off", "readonly",
// "readwrite"; also "0"/"1", "false"/"true", "ro"/"rw", any case).
enum class CacheMode : std::uint8_t { off, readonly, readwrite };
std::string_view to_string(CacheMode mode) noexcept;
// TUNE_CACHE from the environment; unset or empty is readwrite. An invalid value logs a
// warning naming the variable and its value and yields readwrite.
CacheMode cache_mode_from_env();
// $TUNE_CACHE_DIR/tune.db, else $XDG_CACHE_HOME/libtune/tune.db, else
// $HOME/.cache/libtune/tune.db; empty when none of these variables is set.
std::string default_cache_path();

// One StoreKey's summary, as `tune cache list` shows it.
struct CacheEntry {
  StoreKey key;
  // The winner by the one winner rule (README, "The same decision everywhere"; the default
  // BenchOptions::tolerance) among ok rows; empty when none is ok.
  std::string best_config;
  SampleStats best_stats;
  std::size_t rows = 0;          // configs stored for this key
  std::size_t failed = 0;        // of which not ok
  std::int64_t newest_time = 0;  // unix time of the most recent row
  std::size_t verified = 0;      // ok rows whose output was verified (StoredResult::verified)
  bool best_verified = false;    // best_config's output was verified
  // The key's latest decision record (StoredResult::decision), on whichever row carries it;
  // none when no row does (rows of a libtune that did not record decisions).
  std::optional<DecisionRecord> decision;
};

// What import_json did. A row is `added` when no row had its identity, `replaced` when the
// imported row has better provenance than the stored one, `kept` when it does not, and
// `rejected` when it failed validation. The first kMaxListedProblems rejections are
// described in `problems`; the rest are only counted, in `problems_not_listed` (so that the
// memory an import takes does not grow with the number of rows it rejects).
struct ImportStats {
  static constexpr std::size_t kMaxListedProblems = 1000;
  std::size_t added = 0;
  std::size_t replaced = 0;
  std::size_t kept = 0;
  std::size_t rejected = 0;
  std::vector<std::string> problems;
  std::size_t problems_not_listed = 0;
};

struct ImportOptions {
  // The declared space of a kernel, when the importer knows it; imported rows whose config is
  // not a point of that space are rejected. Null or returning null: only the space-independent
  // checks apply (they apply again, with the space, when the Autotuner loads the rows).
  std::function<const ConfigSpace*(const StoreKey&)> space_for;
};

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
  // rows(filter), or none when the file cannot be read (rows() warns).
  std::vector<CacheRow> find_rows(const CacheFilter& filter) override;
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
  // Every row matching the filter, ordered by kernel, key, device, toolchain; within one key
  // the ok rows in the winner rule's order (the winner first: within the default
  // race_tolerance of the fastest, by config text; then by median), then the failed ones.
  Result<std::vector<CacheRow>> rows(const CacheFilter& filter = {});
  // Deletes the rows matching the filter; returns how many. failed_precondition-like
  // invalid_argument when the store is not writable.
  Result<std::size_t> clear(const CacheFilter& filter = {});

  // The rows matching the filter as JSON, the interchange format of `tune cache export` /
  // `import`:
  //   {"format": "libtune-cache", "version": 1, "rows": [
  //     {"kernel": "...", "source_hash": "0x<16 hex digits>", "key": "...", "device": "...",
  //      "toolchain": "...", "config": "BM=64,...", "status": "ok", "reason": "",
  //      "unix_time": 1700000000, "verified": true,
  //      "stats": {"count": 40, "min": .., "p20": .., "median": .., "p80": .., "max": ..,
  //                "mean": ..},
  //      "decision": null or {"runner_up": "...", "margin": .., "confidence": .., "timing":
  //                  "flush", "sustained_turns": 0, "library_version": "...", "unix_time": ..,
  //                  "tunings": 1, "flips": 0}}]}
  // Statistics are nanoseconds; a non-finite value is written as null. "verified" is
  // StoredResult::verified (whether the row's output was checked; optional on import, absent
  // reads as false: not checked), "verification" the row's Verification for readers
  // (verified, not_checked, wrong_output; written, ignored on import). "decision" is
  // StoredResult::decision, round-tripped (optional on import: absent or null is none; NaN
  // margin and confidence are null).
  Result<std::string> export_json(const CacheFilter& filter = {});
  // Parses that format (a document that is not JSON or not this format is an error:
  // invalid_argument / data_loss), validates every row (the row checks above, and the space
  // when `opts` knows it) and merges the valid ones in one transaction by provenance: an
  // imported row replaces a stored one of the same identity when it is measured (ok) and the
  // stored one is a failure, or both are ok and only the imported one is verified, or, between
  // two rows of the same kind, when it has more samples, then when it is newer; on a full tie
  // the stored row stays.
  //
  // The document is read as a stream, one row at a time (each row is checked and written
  // before the next is read), so memory stays bounded whatever its size: no limit on the
  // file size or row count, only on one value (a string of at most 4 MiB, nesting at most 64
  // levels; cache/cache_json.hpp). Time grows with the rows (a 100 MB export of 232k rows:
  // 5 s of CPU and a 9 MiB peak on a 2-core x86 VM). All or nothing: the rows are written in
  // one IMMEDIATE transaction that is rolled back when the document turns out to be
  // malformed, truncated or of another format or version (which may come after the rows), so
  // nothing is written then; other processes' writes wait for the import (up to their busy
  // timeout), a slow stream delaying them.
  Result<ImportStats> import_json(std::string_view text, const ImportOptions& opts = {});
  Result<ImportStats> import_json(std::istream& in, const ImportOptions& opts = {});
  // `tune cache merge`: every row of the database file `other` (another machine's, say),
  // merged in by import_json's validation and provenance rule, each row keeping its own
  // identity (kernel, source hash, key, device and toolchain fingerprints), so results of
  // other devices sit next to this machine's and are used only on a matching device.
  // Idempotent: merging the same file again changes nothing (a full tie keeps the stored row).
  // `other` is opened read-only and never modified; it is refused before anything is written
  // (this database left as it was) when it is absent, a link or special file, empty, not a
  // libtune database, damaged, of a newer schema, or this database itself: invalid_argument,
  // data_loss, failed_precondition or not_found naming the file and the problem. Its rows
  // that fail the row checks are skipped with a warning, as on load.
  Result<ImportStats> merge_database(const std::string& other, const ImportOptions& opts = {});

 private:
  struct Impl;
  explicit SqliteStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The store the environment asks for, freshly opened (default_store() caches one of these):
// null when TUNE_CACHE=off; a store in memory only (with a warning) when no cache path can be
// derived.
std::shared_ptr<SqliteStore> open_store_from_env();

}  // namespace tune
