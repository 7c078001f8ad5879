// push_rows / pull_rows: rows between the local file and the server by import's provenance
// rule. See tune/postgres_store.hpp.
#include <map>
#include <vector>

#include "cache/cache_entries.hpp"
#include "cache/row_rules.hpp"
#include "transfer.hpp"

namespace tune {
namespace pg {

Result<TransferStats> transfer(const std::vector<CacheRow>& rows, const Loader& load,
                               const Saver& save) {
  TransferStats stats;
  for (std::size_t i = 0; i < rows.size();) {
    const StoreKey& key = rows[i].key;
    std::size_t end = i;
    while (end < rows.size() && cache::same_key(rows[end].key, key)) ++end;
    Result<std::vector<StoredResult>> held = load(key);
    if (!held.ok()) return held.status();
    std::map<std::string, const StoredResult*> existing;
    for (const StoredResult& r : *held) existing[r.config] = &r;
    std::vector<StoredResult> better;
    for (std::size_t r = i; r < end; ++r) {
      const StoredResult& in = rows[r].result;
      auto it = existing.find(in.config);
      if (it == existing.end() || has_better_provenance(in, *it->second))
        better.push_back(in);
      else
        ++stats.kept;
    }
    if (!better.empty()) {
      if (Status s = save(key, better); !s.ok()) return s;
      stats.sent += better.size();
    }
    ++stats.keys;
    i = end;
  }
  return stats;
}

}  // namespace pg

Result<TransferStats> push_rows(SqliteStore& local, PostgresStore& remote,
                                const CacheFilter& filter) {
  Result<std::vector<CacheRow>> rows = local.rows(filter);
  if (!rows.ok()) return rows.status();
  return pg::transfer(
      *rows, [&](const StoreKey& k) { return remote.fetch(k); },
      [&](const StoreKey& k, std::span<const StoredResult> r) { return remote.put(k, r); });
}

Result<TransferStats> pull_rows(PostgresStore& remote, SqliteStore& local,
                                const CacheFilter& filter) {
  if (!local.writable())
    return Status(StatusCode::invalid_argument, local.path() + " is not writable");
  Result<std::vector<CacheRow>> rows = remote.rows(filter);
  if (!rows.ok()) return rows.status();
  return pg::transfer(
      *rows, [&](const StoreKey& k) { return Result<std::vector<StoredResult>>(local.load(k)); },
      [&](const StoreKey& k, std::span<const StoredResult> r) {
        local.save(k, r);
        return Status{};
      });
}

}  // namespace tune
