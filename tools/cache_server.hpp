// `tune cache push|pull` and `tune cache list --store`: the tune program's side of a shared
// PostgreSQL server (tune/postgres_store.hpp). In a tune built without the PostgreSQL
// component (TUNE_POSTGRESQL), each returns unavailable saying so.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tune/sqlite_store.hpp"
#include "tune/status.hpp"

namespace tune::cli {

// What a push or pull did (TransferStats of tune/postgres_store.hpp).
struct ServerTransfer {
  std::size_t keys = 0;
  std::size_t sent = 0;
  std::size_t kept = 0;
  std::string server;  // as messages name it: no password
};

// The server's entries (PostgresStore::list_entries); `*server` names it.
Result<std::vector<CacheEntry>> server_entries(const std::string& url, const CacheFilter& filter,
                                               std::string* server);
Result<ServerTransfer> push_to_server(SqliteStore& local, const std::string& url,
                                      const CacheFilter& filter);
Result<ServerTransfer> pull_from_server(const std::string& url, SqliteStore& local,
                                        const CacheFilter& filter);

}  // namespace tune::cli
