// Recognising and checking an open cache database: is it empty, ours and of this version,
// newer, foreign or damaged? The verdict decides what DbFile does with the file.
//
// Reads only; never writes, creates or moves anything. The functions take a connection the
// caller owns and serialises. Blocking: they read the whole file at worst (integrity_check)
// and may wait up to the connection's busy timeout for a lock.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>

namespace tune::cache {

// What opening found about a file.
enum class Verdict {
  ok,        // our schema, this version or an older one this libtune reads
  fresh,     // empty database: create the schema
  damaged,   // not a database, corrupt, truncated, foreign, old schema: move aside
  newer,     // a newer libtune's schema: leave it alone, work in memory
  readonly,  // SQLite opened it read-only although readwrite was asked: use it read-only
  unusable,  // cannot be opened or read for another reason (I/O, locks, permissions)
};

struct Finding {
  Verdict verdict = Verdict::ok;
  std::string what;      // for the warning
  bool salvage = false;  // damaged, but our schema: copy the readable rows into the new file
};

// Classifies an error met while inspecting the file: damaged when the code says the contents
// cannot be trusted (is_damage), else unusable. `what` is "<doing>: <SQLite's message>".
Finding failed(sqlite3* db, int rc, const std::string& doing);

// Looks at the database `db` opened at `path`: whether SQLite opened it read-only (only when
// `check_writable`), then integrity, owner and schema version. The reads run in one read
// transaction so they see one snapshot: read one by one, a schema that another process
// commits between them looks like a foreign file (application id 0, but tables). Files up to
// 4 MiB get the full integrity_check, larger ones the quick_check.
Finding inspect_database(sqlite3* db, const std::string& path, bool check_writable);

// Integrity of every page (quick_check), and of every record and constraint too (full
// integrity_check) when asked: catches truncation and corruption before a query trips on it.
Finding check_integrity(sqlite3* db, bool full);

}  // namespace tune::cache
