// Claims: the cross-process "who tunes this key now" records behind
// TuningStore::try_claim / release_claim, kept in the database's `claims` table
// (store_schema.hpp): one row per key with its owner "<host>:<pid>", host, pid and expiry in
// unix milliseconds.
//
// A claim is live until its expiry, and, when its owner is on this host, only while that
// process exists. Granted always when the file is read-only or in memory, and when the claim
// cannot be written (with one warning per store): a failure never stops tuning.
//
// Ownership: uses the DbFile it is given (which must outlive it); owns only its warned flag.
// Thread safety: none; the owner serialises calls together with the DbFile's (SqliteStore's
// mutex). Blocking: one IMMEDIATE transaction per call, which may wait up to the busy timeout.
#pragma once

#include <chrono>

#include "cache/db_file.hpp"
#include "tune/store.hpp"

namespace tune::cache {

class Claims {
 public:
  explicit Claims(DbFile& file) : file_(file) {}
  Claims(const Claims&) = delete;
  Claims& operator=(const Claims&) = delete;

  // Grants `key` to this process for `ttl` unless another live claim holds it; renews a claim
  // this process holds. See TuningStore::try_claim.
  bool try_claim(const StoreKey& key, std::chrono::milliseconds ttl);
  // Deletes this process's claim on `key` (another process's claim is left alone).
  void release(const StoreKey& key);

 private:
  int claim_in_transaction(const StoreKey& key, std::chrono::milliseconds ttl, bool* granted);

  DbFile& file_;
  bool warned_ = false;  // one warning per store for failing claims
};

}  // namespace tune::cache
