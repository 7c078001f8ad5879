// Tuning results shared by many machines through a PostgreSQL server (the optional component
// tune::postgresql, CMake option TUNE_POSTGRESQL; guide: "Sharing results across machines").
//
// PostgresStore is a TuningStore on a server: the same rows as the SQLite file (one per kernel,
// source hash, key, device fingerprint, toolchain fingerprint and config, with the row
// checksum) and the same checks when they are read back: a row that fails them is ignored with
// the warning a damaged file gives, never chosen. A row is used only for the device and
// toolchain fingerprints it was stored under, like every row of the file.
//
// SharedStore puts the local SQLite file in front of it, and is what TUNE_STORE=postgresql://...
// gives default_store(): reads hit the local file; a miss asks the server and copies what it
// returns into the file; new results go to the file and to the server. When the server is down
// or slower than its timeouts, one warning, and tuning goes on from the file: writes wait in
// a queue of keys persisted beside the file ("<file>.pg-outbox") and are sent when the server
// answers again (the rows are read from the file then, so the newest rows of a key are sent).
// The Autotuner's cache-hit path never calls a store, so a hit never waits on the network.
//
// Credentials come only from the connection string, PGPASSFILE (~/.pgpass) or the libpq
// environment (PGPASSWORD, PGUSER, ...): they are never logged; every message names the server
// as user@host:port/database. TLS is used when the server offers it (libpq's sslmode=prefer,
// unless the connection string asks otherwise); a server certificate that fails verify-full
// is reported naming the CA file it was checked against (sslrootcert).
//
// Thread safety: every member may be called concurrently; calls to the server are serialised
// on one connection. No call blocks beyond the connect timeout plus the statement timeout (the
// connect timeout covers the host name lookup, a resolver that never answers included; a host
// named only through a pg_service.conf service is looked up by libpq, outside it), and after a
// failure the server is not asked again for `retry_after` (calls go on locally).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tune/sqlite_store.hpp"
#include "tune/status.hpp"
#include "tune/store.hpp"

namespace tune {

struct PostgresOptions {
  // A libpq connection string: "postgresql://user@host:5432/db?sslmode=require" or
  // "host=... dbname=...". A connect_timeout it holds wins over `connect_timeout`.
  std::string conninfo;
  // How long connecting may take (libpq's connect_timeout, whole seconds, at least 2), and
  // how long one statement may take (the session's statement_timeout; the client gives up
  // one second later when the server does not answer at all).
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds statement_timeout{5000};
  // After a failed connection or a timeout, how long calls skip the server.
  std::chrono::milliseconds retry_after{30000};
  // Never write to the server (TUNE_CACHE=readonly). A role without INSERT rights on the
  // tables is read-only too, found when connecting.
  bool read_only = false;
};

class PostgresStore final : public TuningStore {
 public:
  // Never fails and does not connect: the first call does. A server that cannot be used
  // (unreachable, a schema of a newer libtune, a role that cannot create the missing schema)
  // is one warning; the store then behaves as empty.
  static std::shared_ptr<PostgresStore> open(PostgresOptions opts);
  ~PostgresStore() override;
  PostgresStore(const PostgresStore&) = delete;
  PostgresStore& operator=(const PostgresStore&) = delete;

  // TuningStore: a failure is one warning per kind and the behaviour of an empty store.
  std::vector<StoredResult> load(const StoreKey& key) override;
  void save(const StoreKey& key, std::span<const StoredResult> rows) override;
  // Claims live in the server's tune_claims table, one row per key with its owner
  // ("<host>:<pid>:<nonce>") and an expiry in the server's clock: granted when no other
  // owner's claim is live; a machine that dies mid-tuning frees the key by expiry. Granted
  // when the server cannot record it (down, read-only): a failure never stops tuning.
  bool try_claim(const StoreKey& key, std::chrono::milliseconds ttl) override;
  void release_claim(const StoreKey& key) override;

  // The same, with the failure returned instead of logged: unavailable when the server is
  // down, too slow or skipped after a recent failure; failed_precondition for a schema it
  // cannot use, or for put() on a read-only server; io_error for another refusal of the
  // server. fetch() drops bad rows with the warning load() gives.
  //
  // put() and save() write by import's provenance rule (has_better_provenance: a measured row
  // before a failure, a verified one before an unchecked one, then more samples, then newer,
  // then the newer decision record), decided by the server per row and atomically: a row
  // replaces the server's row of its config only when better, or when the server's row fails
  // the checks. Two machines writing one key never replace a better-measured row nor a newer
  // record; `kept` (when given) counts the server's rows that stayed. A sent record newer than
  // the server row's own goes onto that row even where the row stays (a fresh tuning's winner
  // measured less than the server's row). A record is erased only when it moved: rows sent
  // without a record lose the server's records older than the newest record of the same call.
  Result<std::vector<StoredResult>> fetch(const StoreKey& key);
  Status put(const StoreKey& key, std::span<const StoredResult> rows, std::size_t* kept = nullptr);
  Result<bool> claim(const StoreKey& key, std::chrono::milliseconds ttl);
  Status unclaim(const StoreKey& key);
  // Every row matching `filter` (checked; bad rows dropped with one warning per key), ordered
  // as SqliteStore::rows orders them (each key's rows in the winner rule's order).
  Result<std::vector<CacheRow>> rows(const CacheFilter& filter = {});
  // One entry per key, as SqliteStore::list_entries (`tune cache list --store`).
  Result<std::vector<CacheEntry>> list_entries(const CacheFilter& filter = {});

  // The server as messages name it: "postgresql://user@host:port/db", never a password.
  const std::string& where() const noexcept;
  // Whether the server may be written (not read_only and the role may insert); false until
  // a call has connected.
  bool writable() const;

 private:
  struct Impl;
  explicit PostgresStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The local file in front of a server. See the header comment.
class SharedStore final : public TuningStore {
 public:
  // `local` may be null (TUNE_CACHE=off: the server alone, the queue in memory). The outbox
  // lives beside a local file; in memory when the file is ":memory:" or absent.
  static std::shared_ptr<SharedStore> open(std::shared_ptr<SqliteStore> local,
                                           std::shared_ptr<PostgresStore> remote);
  ~SharedStore() override;  // one last attempt to send the queue (within the timeouts)
  SharedStore(const SharedStore&) = delete;
  SharedStore& operator=(const SharedStore&) = delete;

  std::vector<StoredResult> load(const StoreKey& key) override;
  void save(const StoreKey& key, std::span<const StoredResult> rows) override;
  // The local file's rows (the server's keys are listed by `tune cache list --server`; a
  // warm start or fallback reads what this host already fetched). None without a local file.
  std::vector<CacheRow> find_rows(const CacheFilter& filter) override;
  // Granted when both the local file (the processes of this host) and the server (the other
  // machines) grant it; the server's refusal releases the local claim.
  bool try_claim(const StoreKey& key, std::chrono::milliseconds ttl) override;
  void release_claim(const StoreKey& key) override;

  // Sends the queued keys now; returns how many are still queued (0: all sent).
  std::size_t flush();
  // Keys waiting to be sent.
  std::size_t queued() const;
  const std::shared_ptr<SqliteStore>& local() const noexcept;
  const std::shared_ptr<PostgresStore>& remote() const noexcept;

 private:
  struct Impl;
  explicit SharedStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// What push_rows / pull_rows did: rows `sent` (new to the receiver or of better provenance
// than its row of the same config: SqliteStore::import_json's rule), `kept` (the receiver's
// row was as good), over `keys` keys.
struct TransferStats {
  std::size_t keys = 0;
  std::size_t sent = 0;
  std::size_t kept = 0;
};
// `tune cache push`: the local file's rows matching `filter` to the server. Stops at the first
// failure of the server (returned: unavailable, failed_precondition when read-only).
Result<TransferStats> push_rows(SqliteStore& local, PostgresStore& remote,
                                const CacheFilter& filter = {});
// `tune cache pull`: the server's rows matching `filter` into the local file (invalid_argument
// when it is not writable).
Result<TransferStats> pull_rows(PostgresStore& remote, SqliteStore& local,
                                const CacheFilter& filter = {});

// The store TUNE_STORE asks for, in C++: `url` ("postgresql://...", "postgres://...") behind
// `local` (null: the server alone); `mode` readonly never writes to the server. What
// default_store() returns when TUNE_STORE is set; pass it as AutotunerOptions::store to choose
// the server in code. A `url` of another scheme is invalid_argument.
Result<std::shared_ptr<SharedStore>> open_shared_store(std::shared_ptr<SqliteStore> local,
                                                       const std::string& url,
                                                       CacheMode mode = CacheMode::readwrite);

}  // namespace tune
