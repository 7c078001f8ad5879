// Split buckets (AutotunerOptions::check_bucket_edges): a bucket whose winner failed or lost
// at an edge no longer shares one decision. Its members are keyed exactly (the key argument's
// own value in place of the bucket's), in this process at once and in every process sharing
// the store: a split is a row of one store key per kernel, source, device and toolchain (key
// text "#bucket-splits"; config "<arg>=<bucket value>", status failed_precondition, reason
// why it split), read once per device on its first miss. The row is bookkeeping
// (cache::is_bookkeeping): the stores' rows(), and so `tune cache list/show/export`, leave it
// out. The hit path never looks here: a member's first call misses and is re-keyed on the
// miss path, which also publishes a marker under the split bucket's key (Entry::split_specs);
// from then on a member's call finds the marker on the hit path and, with exact_member_key,
// its own entry, without a lock or an allocation. Thread-safe. Internal to the core.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "key_builder.hpp"
#include "tune/kernel.hpp"
#include "tune/store.hpp"

namespace tune::detail {

// The store key of `of`'s kernel, source, device and toolchain under which splits are kept.
StoreKey split_key(const StoreKey& of);

// The last value of a key re-keyed exactly (exact_where_split); its text ends ";split".
inline constexpr std::int64_t kExactMember = INT64_MIN + 0x5B;
inline bool is_exact_member(const TuningKey& key) noexcept {
  return key.size > 0 && key.values[key.size - 1] == kExactMember;
}

// `key` with the value of each key argument whose bit is set in `specs` (bit i: kb.specs()[i])
// replaced by the call's own value of that argument, and kExactMember appended (rehashed).
// `key` itself when `specs` is 0 or the key has no room left (KernelDef checks that it has).
// Allocates nothing: the hit path calls it for a split bucket's members.
TuningKey exact_member_key(const KeyBuilder& kb, ArgList args, const TuningKey& key,
                           std::uint32_t specs) noexcept;

class BucketSplits {
 public:
  // Reads `device`'s splits from `store` the first time it is asked for that device (later
  // calls return at once). `of`: any store key of the kernel on that device.
  void load_once(const Device* device, TuningStore* store, const StoreKey& of);
  // Forgets `device` (Autotuner::release): a device later made at its address reads its own.
  void forget(const Device* device);
  // Whether load_once ran for `device`.
  bool loaded(const Device* device) const;
  // Records a split in memory and in `store` (may be null): `why` is stored as the reason.
  void add(const Device* device, TuningStore* store, const StoreKey& of, const std::string& arg,
           std::int64_t bucket, const std::string& why);
  // The key arguments of `key` whose bucket is split on `device`: bit i for kb.specs()[i]; 0
  // when none is.
  std::uint32_t split_specs(const Device* device, const KeyBuilder& kb, const TuningKey& key) const;
  // exact_member_key(kb, args, key, split_specs(device, kb, key)): `key` with each split
  // bucket's value replaced by the call's own value of that key
  // argument and kExactMember appended (rehashed), so that the member equal to the bucket's
  // value has a key of its own; `key` itself when none of its buckets is split.
  TuningKey exact_where_split(const Device* device, const KeyBuilder& kb, ArgList args,
                              const TuningKey& key) const;

 private:
  using Set = std::set<std::pair<std::string, std::int64_t>>;
  mutable std::mutex mu_;
  std::map<const Device*, Set> splits_;
  std::set<const Device*> loaded_;
};

}  // namespace tune::detail
