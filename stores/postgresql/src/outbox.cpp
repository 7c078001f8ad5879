// The outbox of keys not yet sent to the server. See outbox.hpp.
#include "outbox.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "tune/log.hpp"

namespace tune::pg {
namespace {

std::string identity(const StoreKey& k) {
  return nlohmann::json::array(
             {k.kernel, std::to_string(k.source_hash), k.key, k.device, k.toolchain})
      .dump();
}

bool parse_line(const std::string& line, StoreKey* k) {
  const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (!j.is_array() || j.size() != 5) return false;
  for (const auto& v : j)
    if (!v.is_string()) return false;
  const std::string hash = j[1].get<std::string>();
  if (hash.empty() || hash.find_first_not_of("0123456789") != std::string::npos) return false;
  errno = 0;
  k->source_hash = std::strtoull(hash.c_str(), nullptr, 10);
  if (errno != 0) return false;
  k->kernel = j[0].get<std::string>();
  k->key = j[2].get<std::string>();
  k->device = j[3].get<std::string>();
  k->toolchain = j[4].get<std::string>();
  return !k->kernel.empty();
}

// The outbox file, locked for the life of this object; fd < 0 when it cannot be opened. The
// lock is on the file now at `path`: a drain that emptied the file removed it (under its
// lock), so a file found removed or replaced once locked is opened again.
struct LockedFile {
  explicit LockedFile(const std::string& path) {
    for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
      fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (fd < 0) return;
      struct stat held {
      }, now{};
      if (::flock(fd, LOCK_EX) == 0 && ::fstat(fd, &held) == 0 &&
          ::lstat(path.c_str(), &now) == 0 && held.st_ino == now.st_ino &&
          held.st_dev == now.st_dev)
        return;
      ::close(fd);
      fd = -1;
    }
  }
  ~LockedFile() {
    if (fd >= 0) ::close(fd);  // releases the lock
  }
  LockedFile(const LockedFile&) = delete;
  LockedFile& operator=(const LockedFile&) = delete;
  int fd = -1;
};

}  // namespace

std::vector<StoreKey> Outbox::read_locked(int fd) {
  std::string text;
  char buf[4096];
  ::lseek(fd, 0, SEEK_SET);
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  std::vector<StoreKey> keys;
  std::set<std::string> seen;
  std::size_t bad = 0;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(at, end - at);
    at = end + 1;
    if (line.empty()) continue;
    StoreKey k;
    if (!parse_line(line, &k)) {
      ++bad;
      continue;
    }
    if (seen.insert(identity(k)).second) keys.push_back(std::move(k));
  }
  if (bad > 0 && !warned_) {
    warned_ = true;
    log_warning(path_ + ": ignored " + std::to_string(bad) +
                " damaged line(s) of the queue of keys for the server (their rows stay in the "
                "local file; `tune cache push` sends them)");
  }
  return keys;
}

void Outbox::write_locked(int fd, const std::vector<StoreKey>& keys) {
  std::string text;
  for (const StoreKey& k : keys) text += identity(k) + "\n";
  if (::ftruncate(fd, 0) != 0) return;
  ::lseek(fd, 0, SEEK_SET);
  for (std::size_t at = 0; at < text.size();) {
    const ssize_t n = ::write(fd, text.data() + at, text.size() - at);
    if (n <= 0) break;
    at += static_cast<std::size_t>(n);
  }
}

void Outbox::add(const StoreKey& key, std::span<const StoredResult> rows) {
  std::lock_guard lock(mu_);
  if (path_.empty()) {
    const std::string id = identity(key);
    auto [it, added] = memory_.try_emplace(id, key, std::map<std::string, StoredResult>{});
    if (added) memory_order_.push_back(id);
    for (const StoredResult& r : rows) it->second.second[r.config] = r;
    return;
  }
  LockedFile f(path_);
  std::string line = identity(key) + "\n";
  if (f.fd >= 0 && ::lseek(f.fd, 0, SEEK_END) >= 0 &&
      ::write(f.fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()))
    return;
  if (!warned_) {
    warned_ = true;
    log_warning(path_ + ": cannot queue a key for the server (" + std::strerror(errno) +
                "); its rows stay in the local file (`tune cache push` sends them)");
  }
}

std::size_t Outbox::drain(const Sender& send) {
  std::lock_guard lock(mu_);
  if (path_.empty()) {
    std::size_t sent = 0;
    for (; sent < memory_order_.size(); ++sent) {
      const auto& [key, by_config] = memory_.at(memory_order_[sent]);
      std::vector<StoredResult> rows;
      for (const auto& [config, r] : by_config) rows.push_back(r);
      if (!send(key, &rows)) break;
      memory_.erase(memory_order_[sent]);
    }
    memory_order_.erase(memory_order_.begin(),
                        memory_order_.begin() + static_cast<std::ptrdiff_t>(sent));
    return memory_order_.size();
  }
  if (::access(path_.c_str(), F_OK) != 0) return 0;  // nothing was ever queued here
  LockedFile f(path_);
  if (f.fd < 0) return 0;
  std::vector<StoreKey> keys = read_locked(f.fd);
  std::size_t sent = 0;
  while (sent < keys.size() && send(keys[sent], nullptr)) ++sent;
  keys.erase(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(sent));
  if (keys.empty())
    ::unlink(path_.c_str());  // under the lock: nothing is waiting, and saves skip the file
  else
    write_locked(f.fd, keys);
  return keys.size();
}

std::size_t Outbox::size() {
  std::lock_guard lock(mu_);
  if (path_.empty()) return memory_order_.size();
  if (::access(path_.c_str(), F_OK) != 0) return 0;
  LockedFile f(path_);
  return f.fd < 0 ? 0 : read_locked(f.fd).size();
}

}  // namespace tune::pg
