// The tune program's side of a shared server. See cache_server.hpp.
#include "cache_server.hpp"

#ifdef TUNE_HAVE_POSTGRESQL
#include "tune/postgres_store.hpp"
#endif

namespace tune::cli {

#ifdef TUNE_HAVE_POSTGRESQL
namespace {

// Any libpq connection string ("postgresql://...", "host=... dbname=...").
Result<std::shared_ptr<PostgresStore>> open_server(const std::string& url) {
  PostgresOptions opts;
  opts.conninfo = url;
  return PostgresStore::open(std::move(opts));
}

ServerTransfer transfer_of(const TransferStats& s, const PostgresStore& server) {
  return ServerTransfer{s.keys, s.sent, s.kept, server.where()};
}

}  // namespace

Result<std::vector<CacheEntry>> server_entries(const std::string& url, const CacheFilter& filter,
                                               std::string* server) {
  Result<std::shared_ptr<PostgresStore>> s = open_server(url);
  if (!s.ok()) return s.status();
  *server = (*s)->where();
  return (*s)->list_entries(filter);
}

Result<ServerTransfer> push_to_server(SqliteStore& local, const std::string& url,
                                      const CacheFilter& filter) {
  Result<std::shared_ptr<PostgresStore>> s = open_server(url);
  if (!s.ok()) return s.status();
  Result<TransferStats> t = push_rows(local, **s, filter);
  if (!t.ok()) return t.status();
  return transfer_of(*t, **s);
}

Result<ServerTransfer> pull_from_server(const std::string& url, SqliteStore& local,
                                        const CacheFilter& filter) {
  Result<std::shared_ptr<PostgresStore>> s = open_server(url);
  if (!s.ok()) return s.status();
  Result<TransferStats> t = pull_rows(**s, local, filter);
  if (!t.ok()) return t.status();
  return transfer_of(*t, **s);
}

#else

namespace {
Status not_built() {
  return Status(StatusCode::unavailable,
                "this tune was built without the PostgreSQL component (CMake option "
                "TUNE_POSTGRESQL, libpq)");
}
}  // namespace

Result<std::vector<CacheEntry>> server_entries(const std::string&, const CacheFilter&,
                                               std::string*) {
  return not_built();
}
Result<ServerTransfer> push_to_server(SqliteStore&, const std::string&, const CacheFilter&) {
  return not_built();
}
Result<ServerTransfer> pull_from_server(const std::string&, SqliteStore&, const CacheFilter&) {
  return not_built();
}

#endif

}  // namespace tune::cli
