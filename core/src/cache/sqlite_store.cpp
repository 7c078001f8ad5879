// SqliteStore: the rows of the cache (load, save, list, clear, import) over the database file
// (cache/db_file.hpp) and the claims table (cache/claims.hpp). See tune/sqlite_store.hpp.
#include "tune/sqlite_store.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <istream>
#include <map>
#include <mutex>
#include <utility>

#include "cache/cache_entries.hpp"
#include "cache/cache_json.hpp"
#include "cache/cache_validation.hpp"
#include "cache/claims.hpp"
#include "cache/db_file.hpp"
#include "cache/row_codec.hpp"
#include "cache/row_rules.hpp"
#include "cache/store_schema.hpp"
#include "tune/log.hpp"

namespace tune {

using cache::Stmt;
using cache::StmtScope;

namespace {

void bind_filter(Stmt& s, const CacheFilter& f) {
  s.bind(1, std::string_view(f.kernel));
  s.bind(2, std::string_view(f.key));
  s.bind(3, std::string_view(f.device));
}

Status validate_in_space(const StoredResult& r, const ConfigSpace& space) {
  Result<ValidatedRow> v = validate_row(r, space);
  return v.ok() ? Status{} : v.status();
}

}  // namespace

// ----------------------------------------------------------------------------------------
// Impl: the rows. Every member is called with `mu` held.

struct SqliteStore::Impl {
  Impl(std::string path, Options opts) : file(std::move(path), std::move(opts)), claims(file) {}

  mutable std::mutex mu;
  cache::DbFile file;
  cache::Claims claims;  // uses `file`

  sqlite3* db() const { return file.db(); }
  std::string where() const { return file.where(); }

  // Reads the rows of `key`; checks each. The first bad row also triggers the full integrity
  // check (once per store): when that finds damage, the file is moved aside and salvaged and the
  // read repeated.
  std::vector<StoredResult> load(const StoreKey& key) {
    if (!file.ensure_live()) return {};
    std::vector<StoredResult> out;
    std::vector<std::string> dropped;
    int rc = read_rows(key, &out, &dropped);
    if (rc != SQLITE_DONE) {
      file.on_error(rc, "loading");
      return {};
    }
    if (!dropped.empty() && file.recheck_after_bad_row()) {
      out.clear();
      dropped.clear();
      if (db() == nullptr || read_rows(key, &out, &dropped) != SQLITE_DONE) return {};
    }
    warn_ignored(where() + " (kernel " + key.kernel + ", key " + key.key + ")", dropped,
                 "stored row");
    return out;
  }

  int read_rows(const StoreKey& key, std::vector<StoredResult>* out,
                std::vector<std::string>* dropped) {
    if (db() == nullptr) return SQLITE_DONE;
    Stmt& load_stmt = file.load_stmt();
    StmtScope scope(load_stmt);
    cache::bind_key(load_stmt, key);
    int rc;
    while ((rc = load_stmt.step()) == SQLITE_ROW) {
      StoredResult r;
      std::string why;
      if (cache::read_result(load_stmt, 0, key, &r, &why)) {
        Status st = check_stored_row(r, &r.config);
        if (st.ok()) {
          out->push_back(std::move(r));
          continue;
        }
        why = st.message();
      }
      dropped->push_back("config '" + r.config + "': " + why);
    }
    return rc;
  }

  void save(const StoreKey& key, std::span<const StoredResult> rows) {
    if (rows.empty() || !file.ensure_live() || !file.writable()) return;
    Stmt& upsert_stmt = file.upsert_stmt();
    int rc = cache::exec(db(), "BEGIN IMMEDIATE");
    if (rc == SQLITE_OK) {
      for (const StoredResult& r : rows) {
        StmtScope scope(upsert_stmt);
        cache::bind_key(upsert_stmt, key);
        cache::bind_result(upsert_stmt, 6, key, r);
        rc = upsert_stmt.step();
        if (rc != SQLITE_DONE) break;
        rc = SQLITE_OK;
      }
      if (rc == SQLITE_OK) rc = cache::exec(db(), "COMMIT");
    }
    if (rc != SQLITE_OK) {
      // The failed write's own message: a ROLLBACK after SQLite already rolled back (a full
      // disk does that) would replace it with "cannot rollback - no transaction is active".
      std::string msg = cache::errmsg(db(), rc);
      if (sqlite3_get_autocommit(db()) == 0) cache::exec(db(), "ROLLBACK");
      file.on_error(rc, "saving", msg);
    }
  }

  // Every row matching `f`, checked (bad rows are dropped with one warning per key).
  Result<std::vector<CacheRow>> select(const CacheFilter& f) {
    std::vector<CacheRow> out;
    if (!file.ensure_live()) return out;
    std::string sql =
        "SELECT " + std::string(cache::kKeyColumns) + ", " + std::string(file.result_columns()) +
        " FROM results" + std::string(cache::kFilterWhere) +
        " ORDER BY kernel, key, device, toolchain, source_hash, status != 'ok', median, config";
    Stmt s;
    int rc = s.prepare(db(), sql);
    std::map<std::string, std::vector<std::string>> dropped;  // per key
    if (rc == SQLITE_OK) {
      bind_filter(s, f);
      while ((rc = s.step()) == SQLITE_ROW) {
        CacheRow row;
        cache::read_key(s, &row.key);
        std::string why = cache::key_columns_ok(s) ? "" : "a key column has the wrong type";
        if (why.empty() && cache::read_result(s, 5, row.key, &row.result, &why)) {
          Status st = check_stored_key(row.key);
          if (st.ok()) st = check_stored_row(row.result, &row.result.config);
          if (st.ok()) {
            out.push_back(std::move(row));
            continue;
          }
          why = st.message();
        }
        dropped["kernel " + row.key.kernel + ", key " + row.key.key].push_back(
            "config '" + row.result.config + "': " + why);
      }
    }
    if (rc != SQLITE_DONE) {
      std::string msg = cache::errmsg(db(), rc);
      Status st(cache::is_damage(rc) ? StatusCode::data_loss : StatusCode::io_error,
                where() + ": reading rows: " + msg);
      file.on_error(rc, "reading rows", msg);
      return st;
    }
    for (const auto& [k, reasons] : dropped)
      warn_ignored(where() + " (" + k + ")", reasons, "stored row");
    cache::order_by_winner_rule(out);
    return out;
  }

  Result<std::size_t> clear(const CacheFilter& f) {
    file.ensure_live();
    TUNE_RETURN_IF_ERROR(file.require_writable("clear"));
    Stmt s;
    int rc = s.prepare(db(), "DELETE FROM results" + std::string(cache::kFilterWhere));
    if (rc == SQLITE_OK) {
      bind_filter(s, f);
      rc = s.step();
    }
    if (rc != SQLITE_DONE) {
      std::string msg = cache::errmsg(db(), rc);
      Status st(StatusCode::io_error, where() + ": clearing: " + msg);
      file.on_error(rc, "clearing", msg);
      return st;
    }
    return static_cast<std::size_t>(sqlite3_changes64(db()));
  }

  // One import or merge: every row in one IMMEDIATE transaction, all or nothing. begin(),
  // then add() per row, then commit() or abort(). A failed SQLite call rolls back and ends it.
  class Import {
   public:
    Import(Impl& impl, const ImportOptions& opts) : impl_(impl), opts_(opts) {}
    Import(const Import&) = delete;
    Import& operator=(const Import&) = delete;
    ~Import() { (void)abort({}); }

    Status begin() {
      impl_.file.ensure_live();
      TUNE_RETURN_IF_ERROR(impl_.file.require_writable("import"));
      int rc = find_.prepare(impl_.db(), "SELECT " + std::string(cache::kResultColumns) +
                                             " FROM results" + std::string(cache::kKeyWhere) +
                                             " AND config = ?6");
      if (rc != SQLITE_OK)
        return Status(StatusCode::io_error, impl_.where() + ": " + cache::errmsg(impl_.db(), rc));
      rc = cache::exec(impl_.db(), "BEGIN IMMEDIATE");
      if (rc != SQLITE_OK) return failed(rc);
      open_ = true;
      return {};
    }

    // A row rejected before it reached the store (by the parser's row checks).
    void reject(std::string why) {
      ++stats_.rejected;
      if (stats_.problems.size() < ImportStats::kMaxListedProblems)
        stats_.problems.push_back(std::move(why));
      else
        ++stats_.problems_not_listed;
    }

    // Merges one row that passed the row checks: rejected when the importer knows the
    // kernel's space and the config is not a point of it, else written when it has better
    // provenance than the stored row of its identity.
    Status add(const CacheRow& row) {
      if (opts_.space_for) {
        if (const ConfigSpace* space = opts_.space_for(row.key)) {
          Status st = validate_in_space(row.result, *space);
          if (!st.ok()) {
            reject(row.key.kernel + " config '" + row.result.config + "': " + st.message());
            return {};
          }
        }
      }
      bool exists = false;
      bool replace = true;
      {
        StmtScope scope(find_);
        cache::bind_key(find_, row.key);
        find_.bind(6, std::string_view(row.result.config));
        int rc = find_.step();
        if (rc == SQLITE_ROW) {
          exists = true;
          StoredResult old;
          std::string why;
          // An existing row we cannot read is replaced by a valid one.
          if (cache::read_result(find_, 0, row.key, &old, &why) && check_stored_row(old).ok())
            replace = has_better_provenance(row.result, old);
        } else if (rc != SQLITE_DONE) {
          return failed(rc);
        }
      }
      if (!replace) {
        ++stats_.kept;
        return {};
      }
      Stmt& upsert = impl_.file.upsert_stmt();
      StmtScope scope(upsert);
      cache::bind_key(upsert, row.key);
      cache::bind_result(upsert, 6, row.key, row.result);
      if (int rc = upsert.step(); rc != SQLITE_DONE) return failed(rc);
      ++(exists ? stats_.replaced : stats_.added);
      return {};
    }

    Result<ImportStats> commit() {
      int rc = cache::exec(impl_.db(), "COMMIT");
      if (rc != SQLITE_OK) return failed(rc);
      open_ = false;
      return std::move(stats_);
    }

    // Undoes every row written so far (the document turned out to be bad); returns `why`.
    Status abort(Status why) {
      if (open_ && impl_.db() != nullptr && sqlite3_get_autocommit(impl_.db()) == 0)
        cache::exec(impl_.db(), "ROLLBACK");
      open_ = false;
      return why;
    }

   private:
    // A failed SQLite call `rc`: rolls back and reports (a damaged file is handled as on
    // load). The failed call's own message: a ROLLBACK after SQLite already rolled back
    // would replace it.
    Status failed(int rc) {
      std::string msg = cache::errmsg(impl_.db(), rc);
      Status st(StatusCode::io_error, impl_.where() + ": importing: " + msg);
      if (open_ && sqlite3_get_autocommit(impl_.db()) == 0) cache::exec(impl_.db(), "ROLLBACK");
      open_ = false;
      find_ = Stmt();
      impl_.file.on_error(rc, "importing", msg);
      return st;
    }

    Impl& impl_;
    const ImportOptions& opts_;
    ImportStats stats_;
    Stmt find_;
    bool open_ = false;  // inside BEGIN IMMEDIATE
  };

  Result<ImportStats> import_rows(const std::vector<CacheRow>& rows, const ImportOptions& opts) {
    Import imp(*this, opts);
    TUNE_RETURN_IF_ERROR(imp.begin());
    for (const CacheRow& row : rows) TUNE_RETURN_IF_ERROR(imp.add(row));
    return imp.commit();
  }

  // Reads the export format from `in` (a std::streambuf or a std::string_view) row by row
  // (cache/cache_json.hpp), merging each row before the next is read.
  template <class Input>
  Result<ImportStats> import_stream(Input& in, const ImportOptions& opts) {
    Import imp(*this, opts);
    TUNE_RETURN_IF_ERROR(imp.begin());
    CacheJsonSink sink;
    Status write_error;
    sink.row = [&](CacheRow&& row) {
      write_error = imp.add(row);
      return write_error;
    };
    sink.rejected = [&](std::string why) { imp.reject(std::move(why)); };
    Status st = read_cache_json(in, sink);
    if (!write_error.ok()) return write_error;  // already rolled back
    if (!st.ok()) return imp.abort(std::move(st));
    return imp.commit();
  }
};

// ----------------------------------------------------------------------------------------
// SqliteStore

SqliteStore::SqliteStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SqliteStore::~SqliteStore() = default;

std::shared_ptr<SqliteStore> SqliteStore::open(std::string path, Options opts) {
  if (opts.mode == CacheMode::off) opts.mode = CacheMode::readonly;
  auto impl = std::make_unique<Impl>(std::move(path), std::move(opts));
  impl->file.open();
  return std::shared_ptr<SqliteStore>(new SqliteStore(std::move(impl)));
}

std::vector<StoredResult> SqliteStore::load(const StoreKey& key) {
  std::lock_guard lock(impl_->mu);
  return impl_->load(key);
}

void SqliteStore::save(const StoreKey& key, std::span<const StoredResult> rows) {
  std::lock_guard lock(impl_->mu);
  impl_->save(key, rows);
}

bool SqliteStore::try_claim(const StoreKey& key, std::chrono::milliseconds ttl) {
  std::lock_guard lock(impl_->mu);
  return impl_->claims.try_claim(key, ttl);
}

void SqliteStore::release_claim(const StoreKey& key) {
  std::lock_guard lock(impl_->mu);
  impl_->claims.release(key);
}

const std::string& SqliteStore::path() const noexcept { return impl_->file.path(); }
CacheMode SqliteStore::mode() const noexcept { return impl_->file.mode(); }

bool SqliteStore::in_memory() const {
  std::lock_guard lock(impl_->mu);
  return impl_->file.in_memory();
}

bool SqliteStore::writable() const {
  std::lock_guard lock(impl_->mu);
  return impl_->db() != nullptr && impl_->file.writable();
}

std::string SqliteStore::moved_aside_to() const {
  std::lock_guard lock(impl_->mu);
  return impl_->file.moved_to();
}

Result<std::vector<CacheRow>> SqliteStore::rows(const CacheFilter& filter) {
  Result<std::vector<CacheRow>> out = Status(StatusCode::internal, "not read");
  {
    std::lock_guard lock(impl_->mu);
    out = impl_->select(filter);
  }
  if (out.ok()) cache::drop_bookkeeping(*out);  // merge_database's select keeps them
  return out;
}

std::vector<CacheRow> SqliteStore::find_rows(const CacheFilter& filter) {
  Result<std::vector<CacheRow>> all = rows(filter);
  return all.ok() ? std::move(*all) : std::vector<CacheRow>{};
}

Result<std::vector<CacheEntry>> SqliteStore::list_entries(const CacheFilter& filter) {
  Result<std::vector<CacheRow>> all = rows(filter);
  if (!all.ok()) return all.status();
  return cache::summarize_entries(*all);
}

Result<std::size_t> SqliteStore::clear(const CacheFilter& filter) {
  std::lock_guard lock(impl_->mu);
  return impl_->clear(filter);
}

Result<std::string> SqliteStore::export_json(const CacheFilter& filter) {
  Result<std::vector<CacheRow>> all = rows(filter);
  if (!all.ok()) return all.status();
  return cache_rows_to_json(*all);
}

Result<ImportStats> SqliteStore::import_json(std::string_view text, const ImportOptions& opts) {
  std::lock_guard lock(impl_->mu);
  return impl_->import_stream(text, opts);
}

Result<ImportStats> SqliteStore::import_json(std::istream& in, const ImportOptions& opts) {
  if (in.rdbuf() == nullptr) return Status(StatusCode::invalid_argument, "no input stream");
  std::lock_guard lock(impl_->mu);
  return impl_->import_stream(*in.rdbuf(), opts);
}

Result<ImportStats> SqliteStore::merge_database(const std::string& other,
                                                const ImportOptions& opts) {
  const auto refuse = [&](StatusCode code, const std::string& why) {
    return Status(code, "cannot merge " + other + ": " + why + "; " + path() + " left as it was");
  };
  if (const cache::PathCheck src = cache::inspect_path(other), dst = cache::inspect_path(path());
      src.kind == cache::PathKind::regular && dst.kind == cache::PathKind::regular &&
      src.st.st_dev == dst.st.st_dev && src.st.st_ino == dst.st.st_ino) {
    return refuse(StatusCode::invalid_argument, "it is the database being merged into");
  }
  Impl source(other, Options{CacheMode::readonly});
  const cache::Finding f = source.file.open_source();
  switch (f.verdict) {
    case cache::Verdict::ok:
      break;
    case cache::Verdict::fresh:
      return refuse(StatusCode::invalid_argument, "it is empty, not a libtune tuning database");
    case cache::Verdict::damaged:
      return refuse(StatusCode::data_loss, f.what);
    case cache::Verdict::newer:
      return refuse(StatusCode::failed_precondition, f.what);
    default:
      return refuse(cache::inspect_path(other).kind == cache::PathKind::absent
                        ? StatusCode::not_found
                        : StatusCode::invalid_argument,
                    f.what);
  }
  Result<std::vector<CacheRow>> rows = source.select({});
  if (!rows.ok()) return refuse(rows.status().code(), rows.status().message());
  std::lock_guard lock(impl_->mu);
  return impl_->import_rows(*rows, opts);
}

}  // namespace tune
