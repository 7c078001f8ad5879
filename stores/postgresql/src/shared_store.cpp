// SharedStore: the local file in front of the server. See tune/postgres_store.hpp.
#include <atomic>
#include <utility>

#include "outbox.hpp"
#include "transfer.hpp"
#include "tune/log.hpp"
#include "tune/postgres_store.hpp"

namespace tune {

namespace {

// Beside a local file; in memory without one.
std::string outbox_path(const std::shared_ptr<SqliteStore>& local) {
  if (local == nullptr || local->in_memory() || !local->writable()) return {};
  return local->path() + ".pg-outbox";
}

}  // namespace

struct SharedStore::Impl {
  Impl(std::shared_ptr<SqliteStore> l, std::shared_ptr<PostgresStore> r)
      : local(std::move(l)), remote(std::move(r)), outbox(outbox_path(local)) {}

  std::shared_ptr<SqliteStore> local;
  std::shared_ptr<PostgresStore> remote;
  pg::Outbox outbox;
  std::atomic<bool> down{false};     // warned about the current outage
  std::atomic<bool> refused{false};  // warned that the server refuses (read-only, schema)

  // One warning per outage: the first failure after the server last answered.
  void note(const Status& s) {
    if (s.code() != StatusCode::unavailable) {
      if (!refused.exchange(true))
        log_warning(s.message() +
                    "; tuning goes on from the local file (further refusals are not reported)");
      return;
    }
    if (!down.exchange(true))
      log_warning(s.message() +
                  "; tuning goes on from the local file, new results are queued and sent "
                  "when the server answers (further failures are not reported until then)");
  }
  void note_up() {
    if (down.exchange(false)) log(LogLevel::info, remote->where() + ": answers again");
  }

  // Writes `rows` of `key` to the server by the provenance rule; where the server kept a
  // better-measured row of another machine, that row replaces ours in the local file too, so
  // this host's next process decides as the fleet does.
  Status put(const StoreKey& key, std::span<const StoredResult> rows) {
    std::size_t kept = 0;
    if (Status s = remote->put(key, rows, &kept); !s.ok()) return s;
    note_up();
    if (kept == 0 || !local || !local->writable()) return {};
    Result<std::vector<StoredResult>> server = remote->fetch(key);
    if (!server.ok()) return {};  // written; the better rows come with the next miss or pull
    std::vector<CacheRow> better;
    for (StoredResult& r : *server) better.push_back(CacheRow{key, std::move(r)});
    (void)pg::transfer(
        better,
        [&](const StoreKey& k) { return Result<std::vector<StoredResult>>(local->load(k)); },
        [&](const StoreKey& k, std::span<const StoredResult> r) {
          local->save(k, r);
          return Status{};
        });
    return {};
  }

  // Sends one queued key: its rows from the local file (or those queued in memory).
  bool send(const StoreKey& key, const std::vector<StoredResult>* queued) {
    const std::vector<StoredResult> rows =
        queued != nullptr ? *queued : (local ? local->load(key) : std::vector<StoredResult>{});
    const Status s = put(key, rows);
    if (s.ok()) return true;
    if (s.code() == StatusCode::unavailable) {
      note(s);
      return false;
    }
    note(s);  // read-only or refused: the key cannot be sent; it stays in the local file
    return true;
  }

  std::size_t flush() {
    return outbox.drain(
        [this](const StoreKey& k, const std::vector<StoredResult>* rows) { return send(k, rows); });
  }
};

std::shared_ptr<SharedStore> SharedStore::open(std::shared_ptr<SqliteStore> local,
                                               std::shared_ptr<PostgresStore> remote) {
  return std::shared_ptr<SharedStore>(
      new SharedStore(std::make_unique<Impl>(std::move(local), std::move(remote))));
}

SharedStore::SharedStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

SharedStore::~SharedStore() {
  // One last attempt, unless the server is known to be down (the file keeps the queue).
  if (!impl_->down) impl_->flush();
}

std::vector<StoredResult> SharedStore::load(const StoreKey& key) {
  if (impl_->local) {
    std::vector<StoredResult> rows = impl_->local->load(key);
    if (!rows.empty()) return rows;
  }
  Result<std::vector<StoredResult>> fetched = impl_->remote->fetch(key);
  if (!fetched.ok()) {
    impl_->note(fetched.status());
    return {};
  }
  impl_->note_up();
  // Copied into the local file: the next process of this host reads it there.
  if (!fetched->empty() && impl_->local && impl_->local->writable())
    impl_->local->save(key, *fetched);
  return std::move(*fetched);
}

std::vector<CacheRow> SharedStore::find_rows(const CacheFilter& filter) {
  return impl_->local ? impl_->local->find_rows(filter) : std::vector<CacheRow>{};
}

void SharedStore::save(const StoreKey& key, std::span<const StoredResult> rows) {
  if (rows.empty()) return;
  if (impl_->local) impl_->local->save(key, rows);
  if (impl_->local && !impl_->local->writable()) return;  // TUNE_CACHE=readonly
  if (impl_->outbox.size() > 0 && impl_->flush() > 0) {
    impl_->outbox.add(key, rows);  // still down: after the keys already waiting
    return;
  }
  const Status s = impl_->put(key, rows);
  if (s.ok()) return;
  impl_->note(s);
  if (s.code() == StatusCode::unavailable) impl_->outbox.add(key, rows);
}

bool SharedStore::try_claim(const StoreKey& key, std::chrono::milliseconds ttl) {
  if (impl_->local && !impl_->local->try_claim(key, ttl)) return false;
  Result<bool> r = impl_->remote->claim(key, ttl);
  if (!r.ok()) {
    impl_->note(r.status());
    return true;  // the server cannot say: tuning goes on (this host's claim holds)
  }
  impl_->note_up();
  if (!*r && impl_->local) impl_->local->release_claim(key);
  return *r;
}

void SharedStore::release_claim(const StoreKey& key) {
  if (impl_->local) impl_->local->release_claim(key);
  if (Status s = impl_->remote->unclaim(key); !s.ok()) impl_->note(s);  // it expires anyway
}

std::size_t SharedStore::flush() { return impl_->flush(); }
std::size_t SharedStore::queued() const { return impl_->outbox.size(); }
const std::shared_ptr<SqliteStore>& SharedStore::local() const noexcept { return impl_->local; }
const std::shared_ptr<PostgresStore>& SharedStore::remote() const noexcept { return impl_->remote; }

}  // namespace tune
