// Reading records straight from the pages of a damaged SQLite file, the way SQLite's own
// recovery extension (ext/recover, the `sqlite3` tool's `.recover`) does, without the
// b-tree above them: what salvage (salvage.hpp) uses for rows that no query can reach.
//
// Why not SQLite's: the Debian 12 library (3.40) ships neither the recovery extension nor the
// sqlite_dbpage table it reads pages through, and its `sqlite3 db .recover` fails on every
// file, intact or not, with "SQL logic error" for the same reason. The file format is
// documented and stable (https://www.sqlite.org/fileformat2.html); this reads only what the
// cache needs: the cells of index b-tree pages, where a WITHOUT ROWID table (`results`,
// `claims`) keeps its rows, leaf and interior alike, with their overflow chains.
//
// The pages are those of the main file, overlaid with the committed frames of its -wal
// companion when there is one (checked by salt and checksum, as SQLite checks them); pages
// on the freelist are skipped, so rows deleted before the damage stay deleted when the
// freelist can be read. Every length and offset is checked against the page and the file
// before use: garbage gives no record, never a read out of bounds. Records are returned as
// stored; whether they are rows worth keeping is the caller's decision (salvage checks each
// one like any stored row: types, checksum, row rules).
//
// Blocking: reads the whole file (and its -wal) once, one page at a time; memory is one page,
// one record and a map of WAL frames. Opens nothing that can block and follows no link.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tune::cache {

// One value of a record, with the SQLite storage class it was stored with.
struct RecordValue {
  int type = 0;  // SQLITE_NULL, SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT or SQLITE_BLOB
  std::int64_t integer = 0;
  double real = 0;
  std::string bytes;  // text or blob
};

struct PageScanStats {
  std::size_t pages = 0;        // pages looked at (main file and WAL overlay)
  std::size_t index_pages = 0;  // of which index b-tree pages
  std::size_t records = 0;      // records decoded from them
  std::size_t wal_frames = 0;   // committed WAL frames used
};

// Calls `on_record` with every record of every index b-tree page of the database file at
// `path` (UTF-8 databases only) that decodes cleanly: a header and body that account for
// exactly the payload, complete overflow chain, known serial types. Returns what was read.
PageScanStats scan_index_records(
    const std::string& path, const std::function<void(const std::vector<RecordValue>&)>& on_record);

// Whether the first 100 bytes at `path` are an SQLite header carrying the cache's
// application id and a schema version this libtune reads: a file of ours, worth salvaging whatever
// else is wrong.
bool has_cache_header(const std::string& path);

}  // namespace tune::cache
