// Cross-process claims in the `claims` table. See claims.hpp.
#include "cache/claims.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "cache/row_codec.hpp"
#include "cache/store_schema.hpp"
#include "tune/log.hpp"

namespace tune::cache {
namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "?";
  return buf;
}

// Whether process `pid` exists on this host (EPERM: it exists, owned by someone else).
bool pid_alive(std::int64_t pid) {
  if (pid <= 0 || pid > std::numeric_limits<pid_t>::max()) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

// "<host>:<pid>" of this process.
const std::string& owner_id() {
  static const std::string id = host_name() + ":" + std::to_string(::getpid());
  return id;
}

}  // namespace

bool Claims::try_claim(const StoreKey& key, std::chrono::milliseconds ttl) {
  if (!file_.ensure_live() || !file_.writable() || file_.in_memory()) return true;
  sqlite3* db = file_.db();
  int rc = exec(db, "BEGIN IMMEDIATE");
  bool granted = true;
  if (rc == SQLITE_OK) rc = claim_in_transaction(key, ttl, &granted);
  if (rc == SQLITE_OK) rc = exec(db, "COMMIT");
  if (rc == SQLITE_OK) return granted;
  std::string msg = errmsg(db, rc);
  if (sqlite3_get_autocommit(db) == 0) exec(db, "ROLLBACK");
  if (!warned_) {
    warned_ = true;
    log_warning(file_.where() + ": claiming a key failed: " + msg +
                "; tuning it anyway (further failures of this kind are not reported)");
  }
  return true;
}

int Claims::claim_in_transaction(const StoreKey& key, std::chrono::milliseconds ttl,
                                 bool* granted) {
  sqlite3* db = file_.db();
  Stmt s;
  int rc =
      s.prepare(db, "SELECT owner, host, pid, expires_ms FROM claims" + std::string(kKeyWhere));
  if (rc != SQLITE_OK) return rc;
  bind_key(s, key);
  rc = s.step();
  const std::int64_t now = now_ms();
  if (rc == SQLITE_ROW) {
    const std::string owner = s.text(0), host = s.text(1);
    const std::int64_t pid = s.int64(2), expires = s.int64(3);
    const bool expired = expires < now || (host == host_name() && !pid_alive(pid));
    if (owner != owner_id() && !expired) {
      *granted = false;
      return SQLITE_OK;
    }
  } else if (rc != SQLITE_DONE) {
    return rc;
  }
  s = Stmt();
  rc = s.prepare(db, "INSERT OR REPLACE INTO claims (" + std::string(kKeyColumns) +
                         ", owner, host, pid, expires_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
                         "?8, ?9)");
  if (rc != SQLITE_OK) return rc;
  bind_key(s, key);
  s.bind(6, std::string_view(owner_id()));
  s.bind(7, std::string_view(host_name()));
  s.bind(8, static_cast<std::int64_t>(::getpid()));
  s.bind(9, now + static_cast<std::int64_t>(ttl.count()));
  rc = s.step();
  *granted = true;
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

void Claims::release(const StoreKey& key) {
  if (!file_.ensure_live() || !file_.writable() || file_.in_memory()) return;
  sqlite3* db = file_.db();
  Stmt s;
  int rc = s.prepare(db, "DELETE FROM claims" + std::string(kKeyWhere) + " AND owner = ?6");
  if (rc == SQLITE_OK) {
    bind_key(s, key);
    s.bind(6, std::string_view(owner_id()));
    rc = s.step();
  }
  if (rc != SQLITE_DONE && !warned_) {
    warned_ = true;
    log_warning(file_.where() + ": releasing a claim failed: " + errmsg(db, rc) +
                " (it expires by itself; further failures of this kind are not reported)");
  }
}

}  // namespace tune::cache
