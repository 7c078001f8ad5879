// BundleFile: one bundle (tune/bundle.hpp), read whole and checked, held in memory.
//
// The file is an SQLite database of its own kind: PRAGMA application_id kBundleApplicationId,
// user_version kBundleFormatVersion, and exactly four tables: `results` (the cache's table and
// row codec, store_schema.hpp and row_codec.hpp: every row with its checksum), `decisions`
// (one per key: winner, runner-up, margin, the winner's timing), `bundle_info` (name/value:
// libtune version, creation time, source) and `content_checksum` (one row: the hash of every
// cell of the other three tables in primary-key order). SQLite checks no page checksums by
// default, so the content checksum is what tells an altered or damaged bundle.
//
// A bundle is the application's file: it is opened read-only and immutable (no lock, no
// journal, nothing created beside it), never written or moved. Opening it checks, in order:
// a regular file (a link is followed, to a regular file only: a FIFO or device is never
// opened), at most kMaxBundleBytes, an SQLite database, our application id, a format this
// libtune reads, no objects but our four tables (a view or trigger in a hostile file could
// run arbitrary SQL), quick_check, then the content checksum; every row passes the row codec
// and the row checks (row_rules.hpp) or is listed in BundleInfo::problems and never served.
//
// Thread safety: an opened BundleFile is immutable; every const member may be called
// concurrently.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "tune/bundle.hpp"
#include "tune/sqlite_store.hpp"

struct sqlite3;

namespace tune::cache {

// PRAGMA application_id of a bundle ("ltbn"); a cache database has "ltun".
inline constexpr std::int32_t kBundleApplicationId = 0x6c74626e;
// The bundle format this libtune reads and writes (PRAGMA user_version).
inline constexpr int kBundleFormatVersion = 1;
// A larger file is refused before it is read (a bundle of 100k rows is about 20 MiB).
inline constexpr std::int64_t kMaxBundleBytes = std::int64_t{1} << 30;

inline constexpr std::string_view kDecisionsTableSql = R"sql(
CREATE TABLE decisions (
  kernel TEXT NOT NULL, source_hash INTEGER NOT NULL, key TEXT NOT NULL,
  device TEXT NOT NULL, toolchain TEXT NOT NULL,
  winner TEXT NOT NULL, runner_up TEXT NOT NULL, margin REAL,
  count INTEGER NOT NULL, min REAL, p20 REAL, median REAL, p80 REAL, max REAL, mean REAL,
  measured_unix INTEGER NOT NULL, winner_verified INTEGER NOT NULL, rows INTEGER NOT NULL,
  PRIMARY KEY (kernel, source_hash, key, device, toolchain)
) WITHOUT ROWID;
)sql";
inline constexpr std::string_view kBundleInfoTableSql =
    "CREATE TABLE bundle_info (name TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) WITHOUT "
    "ROWID;";
inline constexpr std::string_view kContentChecksumTableSql =
    "CREATE TABLE content_checksum (hash INTEGER NOT NULL);";

// The hash of every cell of `results`, `decisions` and `bundle_info`, in primary-key order
// (type and bytes of each), as the writer stores it and the reader recomputes it. An SQLite
// result code; `out` set on SQLITE_OK.
int content_checksum(sqlite3* db, std::int64_t* out);

// A key's identity as a map key.
using KeyTuple = std::tuple<std::string, std::uint64_t, std::string, std::string, std::string>;
KeyTuple key_tuple(const StoreKey& k);

class BundleFile {
 public:
  // Reads and checks the bundle at `path` (see the header comment); an error names the file.
  static Result<std::shared_ptr<const BundleFile>> open(const std::string& path);
  // The same, once per process and file (path, device, inode, size and modification time): a
  // bundle that fails is warned about once and null is returned; a bundle whose rows failed
  // the row checks is warned about once and served without them.
  static std::shared_ptr<const BundleFile> open_shared(const std::string& path);

  // The checked rows of `key`, each with origin = the bundle's path; empty when none.
  std::vector<StoredResult> load(const StoreKey& key) const;
  // Every checked row, each key's rows in the winner rule's order.
  const std::vector<CacheRow>& rows() const noexcept { return rows_; }
  const BundleInfo& info() const noexcept { return info_; }

 private:
  BundleInfo info_;
  std::vector<CacheRow> rows_;
  std::map<KeyTuple, std::vector<StoredResult>> by_key_;
};

}  // namespace tune::cache
