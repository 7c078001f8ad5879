// The outbox: keys whose rows the server has not received yet (it was down or too slow), so
// that they are sent when it answers again.
//
// Beside a local file the outbox is a file too ("<tune.db>.pg-outbox": one JSON array a line,
// the key's five fields), shared by the processes of the host under flock(2), so a process that
// exits (or crashes) loses nothing: the next one to drain it sends the keys, their rows read
// from the local file then. Without a local file (TUNE_CACHE=off, a store in memory) the
// outbox holds the rows themselves, in memory.
//
// A line that does not parse (damage) is dropped with one warning naming the file. The file
// is opened without following links (O_NOFOLLOW) and created 0600.
//
// Thread safety: every member may be called concurrently (a mutex, and the file lock between
// processes).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "tune/store.hpp"

namespace tune::pg {

class Outbox {
 public:
  // `path` empty: in memory.
  explicit Outbox(std::string path) : path_(std::move(path)) {}
  Outbox(const Outbox&) = delete;
  Outbox& operator=(const Outbox&) = delete;

  // Queues `key` (in memory: with `rows`, merged by config into what is queued for it).
  void add(const StoreKey& key, std::span<const StoredResult> rows);
  // Gives each queued key (in memory: with its rows; from the file: null rows) to `send`, in
  // the order queued, until `send` returns false; the keys sent leave the outbox. Returns how
  // many are left.
  using Sender = std::function<bool(const StoreKey&, const std::vector<StoredResult>* rows)>;
  std::size_t drain(const Sender& send);
  std::size_t size();
  const std::string& path() const noexcept { return path_; }

 private:
  std::vector<StoreKey> read_locked(int fd);
  void write_locked(int fd, const std::vector<StoreKey>& keys);

  std::string path_;
  std::mutex mu_;
  // In memory only: key identity -> (key, rows by config).
  std::map<std::string, std::pair<StoreKey, std::map<std::string, StoredResult>>> memory_;
  std::vector<std::string> memory_order_;
  bool warned_ = false;
};

}  // namespace tune::pg
