// PostgresStore: the rows and claims on the server. See tune/postgres_store.hpp.
#include <unistd.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <random>
#include <set>

#include "cache/cache_entries.hpp"
#include "cache/cache_validation.hpp"
#include "cache/row_rules.hpp"
#include "pg_connection.hpp"
#include "pg_rows.hpp"
#include "pg_schema.hpp"
#include "tune/log.hpp"
#include "tune/postgres_store.hpp"

namespace tune {

using pg::Answer;
using pg::Param;

namespace {

// "<host>:<pid>:<nonce>": one owner per store, so two stores of one process (two "machines"
// in a test) are different owners, and a reused pid on another boot is a new owner.
std::string new_owner() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '?';
  std::random_device rd;
  const std::uint64_t nonce = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  return std::string(host) + ":" + std::to_string(::getpid()) + ":" + std::to_string(nonce);
}

// decision_time (cache/row_rules.hpp) of a row of tune_results or EXCLUDED: the unix_time of
// the decision codec's compact JSON text, -1 for '' (or a text that has none).
std::string decision_time_sql(std::string_view row) {
  return "COALESCE(substring(" + std::string(row) +
         ".decision from '\"unix_time\":([0-9]{1,18})')::bigint, -1)";
}

// has_better_provenance (cache/row_rules.hpp) as a row comparison of PostgreSQL: ok first, then
// (for ok rows) verified, then more samples, then newer, then the newer decision record; a full
// tie keeps the stored row. The server applies it per row inside the upsert, so machines
// writing one key at once never replace a better-measured row nor a newer record. A test runs
// both rules on every kind of pair.
const std::string kBetterProvenance =
    "(EXCLUDED.status = 'ok', EXCLUDED.status = 'ok' AND EXCLUDED.verified, EXCLUDED.count, "
    "EXCLUDED.unix_time, " +
    decision_time_sql("EXCLUDED") +
    ") > (tune_results.status = 'ok', tune_results.status = 'ok' AND tune_results.verified, "
    "tune_results.count, tune_results.unix_time, " +
    decision_time_sql("tune_results") + ")";

// Inserts `rows` rows, replacing a stored row of the same config only where `condition` holds;
// returns the config of every row written.
std::string upsert_sql(std::size_t rows, std::string_view condition) {
  std::string sql = "INSERT INTO tune_results (" + std::string(pg::kKeyColumns) + ", " +
                    std::string(pg::kRowColumns) + ") VALUES ";
  int p = 1;
  for (std::size_t r = 0; r < rows; ++r) {
    sql += r == 0 ? "(" : ", (";
    for (int c = 0; c < 19; ++c) sql += (c == 0 ? "$" : ", $") + std::to_string(p++);
    sql += ")";
  }
  sql += " ON CONFLICT (key_id, config) DO UPDATE SET ";
  constexpr const char* kSet[] = {"status",   "reason",   "count",   "min",  "p20",
                                  "median",   "p80",      "max",     "mean", "unix_time",
                                  "checksum", "verified", "decision"};
  for (const char* c : kSet) sql += std::string(c == kSet[0] ? "" : ", ") + c + " = EXCLUDED." + c;
  return sql + " WHERE " + std::string(condition) + " RETURNING config";
}

}  // namespace

struct PostgresStore::Impl {
  explicit Impl(PostgresOptions o) : opts(o), conn(std::move(o)), owner(new_owner()) {}

  PostgresOptions opts;
  mutable std::mutex mu;
  pg::Connection conn;
  std::string owner;
  bool schema_ready = false;  // for the current connection
  bool writable = false;
  std::string row_columns;       // what a row's SELECT names (pg::ensure_schema)
  std::set<std::string> warned;  // kinds already warned about

  // Connected with a usable schema.
  Status ready() {
    if (!conn.connected()) schema_ready = false;
    if (schema_ready) return {};
    if (Status s = conn.connect(); !s.ok()) return s;
    bool may_write = false;
    if (Status s = pg::ensure_schema(conn, &may_write, &row_columns); !s.ok()) {
      if (s.code() == StatusCode::failed_precondition) conn.rest();
      return s;
    }
    schema_ready = true;
    writable = may_write && !opts.read_only;
    return {};
  }

  Result<Answer> exec(const std::string& sql, std::span<const Param> params) {
    if (Status s = ready(); !s.ok()) return s;
    return conn.exec(sql, params);
  }

  void warn_once(const std::string& kind, const Status& s) {
    if (!warned.insert(kind).second) return;
    log_warning(s.message() + "; " + kind + " (further failures of this kind are not reported)");
  }

  Result<std::vector<StoredResult>> fetch(const StoreKey& key) {
    std::vector<Param> params;
    pg::append_key(key, &params);
    if (Status s = ready(); !s.ok()) return s;
    Result<Answer> a = exec(
        "SELECT " + row_columns + " FROM tune_results WHERE " + std::string(pg::kKeyMatch), params);
    if (!a.ok()) return a.status();
    std::vector<StoredResult> out;
    std::vector<std::string> dropped;
    for (int i = 0; i < a->rows(); ++i) {
      StoredResult r;
      std::string why;
      if (pg::read_row(*a, i, 0, key, &r, &why))
        out.push_back(std::move(r));
      else
        dropped.push_back("config '" + r.config + "': " + why);
    }
    warn_ignored(conn.where() + " (kernel " + key.kernel + ", key " + key.key + ")", dropped,
                 "stored row");
    return out;
  }

  // Each row replaces the server's row of its config only when of better provenance, or when
  // the server's row fails the checks; `kept` counts the server's rows that stayed.
  Status put(const StoreKey& key, std::span<const StoredResult> rows, std::size_t* kept) {
    if (kept != nullptr) *kept = 0;
    if (rows.empty()) return {};
    if (Status s = ready(); !s.ok()) return s;
    if (!writable)
      return Status(StatusCode::failed_precondition,
                    conn.where() + ": read-only (" +
                        (opts.read_only ? "TUNE_CACHE=readonly" : "this role may not write") + ")");
    // One statement: atomic, one round trip. A config given twice keeps its last row.
    std::map<std::string, const StoredResult*> unique;
    for (const StoredResult& r : rows) unique[r.config] = &r;
    std::vector<Param> params;
    for (const auto& [config, r] : unique) {
      pg::append_key(key, &params);
      pg::append_row(key, *r, &params);
    }
    Result<Answer> a = conn.exec(upsert_sql(unique.size(), kBetterProvenance), params);
    if (!a.ok()) return a.status();
    if (Status s = settle_records(key, unique); !s.ok()) return s;
    for (int i = 0; i < a->rows(); ++i) unique.erase(std::string(a->text(i, 0)));
    if (unique.empty()) return {};
    Result<std::size_t> repaired = replace_damaged(key, unique);
    if (!repaired.ok()) return repaired.status();
    if (kept != nullptr) *kept = unique.size() - *repaired;
    return {};
  }

  // The server's rows of `key` with their xmin first (columns 1.. in kRowColumns' order).
  Result<Answer> held_rows(const StoreKey& key) {
    std::vector<Param> params;
    pg::append_key(key, &params);
    return conn.exec("SELECT xmin::text, " + std::string(pg::kRowColumns) +
                         " FROM tune_results WHERE " + std::string(pg::kKeyMatch),
                     params);
  }

  // `row` written over the server's row of its config unless that changed since it was read
  // at `xmin`; the answer names the config when written.
  Result<Answer> write_unchanged(const StoreKey& key, const StoredResult& row,
                                 std::string_view xmin) {
    std::vector<Param> one;
    pg::append_key(key, &one);
    pg::append_row(key, row, &one);
    one.emplace_back(std::string(xmin));
    return conn.exec(upsert_sql(1, "tune_results.xmin::text = $20"), one);
  }

  // Records after the upsert, which never erases one: a record newer than the server's row's
  // own goes onto that row even where the row stayed (better measured, by another machine or
  // an earlier tuning: the decision is the key's, not the measurement's); when `rows` (config
  // -> row) carry a record, the server's records older than the newest of them leave the rows
  // of the configs sent without one (the record moved). Each such row is written again as the
  // server holds it, but for its record (its checksum with it), unless it changed meanwhile
  // (its xmin). A newer record, of another machine's decision, stays.
  Status settle_records(const StoreKey& key,
                        const std::map<std::string, const StoredResult*>& rows) {
    std::int64_t newest = -1;
    for (const auto& [config, r] : rows) newest = std::max(newest, decision_time(*r));
    if (newest < 0) return {};
    Result<Answer> stored = held_rows(key);
    if (!stored.ok()) return stored.status();
    for (int i = 0; i < stored->rows(); ++i) {
      StoredResult held;
      std::string why;
      auto it = rows.find(std::string(stored->text(i, 1)));
      if (it == rows.end() || !pg::read_row(*stored, i, 1, key, &held, &why)) continue;
      const StoredResult& sent = *it->second;
      if (sent.decision && decision_time(held) < decision_time(sent))
        held.decision = sent.decision;
      else if (!sent.decision && held.decision && decision_time(held) < newest)
        held.decision.reset();
      else
        continue;
      Result<Answer> w = write_unchanged(key, held, stored->text(i, 0));
      if (!w.ok()) return w.status();
    }
    return {};
  }

  // The rows of `refused` (config -> row) whose stored row fails the checks, written over it
  // (as import replaces an unreadable row); a stored row changed meanwhile (its xmin) stays.
  // Returns how many were written.
  Result<std::size_t> replace_damaged(const StoreKey& key,
                                      const std::map<std::string, const StoredResult*>& refused) {
    Result<Answer> stored = held_rows(key);
    if (!stored.ok()) return stored.status();
    std::size_t written = 0;
    for (int i = 0; i < stored->rows(); ++i) {
      StoredResult old;
      std::string why;
      auto it = refused.find(std::string(stored->text(i, 1)));
      if (it == refused.end() || pg::read_row(*stored, i, 1, key, &old, &why)) continue;
      Result<Answer> w = write_unchanged(key, *it->second, stored->text(i, 0));
      if (!w.ok()) return w.status();
      written += static_cast<std::size_t>(w->rows());
    }
    return written;
  }

  Result<bool> claim(const StoreKey& key, std::chrono::milliseconds ttl) {
    std::vector<Param> params;
    pg::append_key(key, &params);
    params.emplace_back(owner);
    params.emplace_back(std::to_string(ttl.count()));
    // The server's clock decides expiry, so machines with skewed clocks agree.
    Result<Answer> a = exec(
        "INSERT INTO tune_claims (key_id, kernel, key, owner, expires_at) VALUES "
        "(tune_key_id($1::text, $2::bigint, $3::text, $4::text, $5::text), $1, $3, $6, "
        "clock_timestamp() + $7::bigint * interval '1 millisecond') "
        "ON CONFLICT (key_id) DO UPDATE SET owner = EXCLUDED.owner, kernel = EXCLUDED.kernel, "
        "key = EXCLUDED.key, expires_at = EXCLUDED.expires_at "
        "WHERE tune_claims.owner = EXCLUDED.owner OR tune_claims.expires_at < clock_timestamp() "
        "RETURNING owner",
        params);
    if (!a.ok()) return a.status();
    return a->rows() == 1;
  }

  Status release(const StoreKey& key) {
    std::vector<Param> params;
    pg::append_key(key, &params);
    params.emplace_back(owner);
    Result<Answer> a = exec(
        "DELETE FROM tune_claims WHERE key_id = tune_key_id($1::text, $2::bigint, $3::text, "
        "$4::text, $5::text) AND owner = $6",
        params);
    return a.ok() ? Status{} : a.status();
  }
};

std::shared_ptr<PostgresStore> PostgresStore::open(PostgresOptions opts) {
  return std::shared_ptr<PostgresStore>(new PostgresStore(std::make_unique<Impl>(std::move(opts))));
}

PostgresStore::PostgresStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PostgresStore::~PostgresStore() = default;

Result<std::vector<StoredResult>> PostgresStore::fetch(const StoreKey& key) {
  std::lock_guard lock(impl_->mu);
  return impl_->fetch(key);
}

Status PostgresStore::put(const StoreKey& key, std::span<const StoredResult> rows,
                          std::size_t* kept) {
  std::lock_guard lock(impl_->mu);
  return impl_->put(key, rows, kept);
}

Result<bool> PostgresStore::claim(const StoreKey& key, std::chrono::milliseconds ttl) {
  std::lock_guard lock(impl_->mu);
  return impl_->claim(key, ttl);
}

Status PostgresStore::unclaim(const StoreKey& key) {
  std::lock_guard lock(impl_->mu);
  return impl_->release(key);
}

std::vector<StoredResult> PostgresStore::load(const StoreKey& key) {
  std::lock_guard lock(impl_->mu);
  Result<std::vector<StoredResult>> r = impl_->fetch(key);
  if (r.ok()) return std::move(*r);
  impl_->warn_once("reading from it failed: tuning as if nothing were stored", r.status());
  return {};
}

void PostgresStore::save(const StoreKey& key, std::span<const StoredResult> rows) {
  std::lock_guard lock(impl_->mu);
  if (Status s = impl_->put(key, rows, nullptr); !s.ok())
    impl_->warn_once("saving to it failed: results kept in memory only", s);
}

bool PostgresStore::try_claim(const StoreKey& key, std::chrono::milliseconds ttl) {
  std::lock_guard lock(impl_->mu);
  Result<bool> r = impl_->claim(key, ttl);
  if (r.ok()) return *r;
  impl_->warn_once("claiming a key failed: tuning it anyway", r.status());
  return true;
}

void PostgresStore::release_claim(const StoreKey& key) {
  std::lock_guard lock(impl_->mu);
  if (Status s = impl_->release(key); !s.ok())
    impl_->warn_once("releasing a claim failed: it expires by itself", s);
}

Result<std::vector<CacheRow>> PostgresStore::rows(const CacheFilter& f) {
  std::lock_guard lock(impl_->mu);
  const std::vector<Param> params{f.kernel, f.key, f.device};
  if (Status s = impl_->ready(); !s.ok()) return s;
  Result<Answer> a = impl_->exec(
      "SELECT " + std::string(pg::kKeyColumns) + ", " + impl_->row_columns +
          " FROM tune_results WHERE ($1 = '' OR kernel = $1) AND ($2 = '' OR key = $2) AND "
          "($3 = '' OR strpos(device, $3) > 0) ORDER BY kernel, key, device, toolchain, "
          "source_hash, status <> 'ok', median, config",
      params);
  if (!a.ok()) return a.status();
  std::vector<CacheRow> out;
  std::map<std::string, std::vector<std::string>> dropped;  // per key, as the file warns
  for (int i = 0; i < a->rows(); ++i) {
    CacheRow row;
    std::string why;
    if (pg::read_key(*a, i, 0, &row.key, &why) &&
        pg::read_row(*a, i, 5, row.key, &row.result, &why)) {
      const Status key_ok = check_stored_key(row.key);
      if (key_ok.ok()) {
        out.push_back(std::move(row));
        continue;
      }
      why = key_ok.message();
    }
    dropped[row.key.kernel + ", key " + row.key.key].push_back("config '" + row.result.config +
                                                               "': " + why);
  }
  for (const auto& [k, reasons] : dropped)
    warn_ignored(impl_->conn.where() + " (kernel " + k + ")", reasons, "stored row");
  cache::drop_bookkeeping(out);
  cache::order_by_winner_rule(out);
  return out;
}

Result<std::vector<CacheEntry>> PostgresStore::list_entries(const CacheFilter& filter) {
  Result<std::vector<CacheRow>> all = rows(filter);
  if (!all.ok()) return all.status();
  return cache::summarize_entries(*all);
}

const std::string& PostgresStore::where() const noexcept { return impl_->conn.where(); }

bool PostgresStore::writable() const {
  std::lock_guard lock(impl_->mu);
  return impl_->schema_ready && impl_->writable;
}

}  // namespace tune
