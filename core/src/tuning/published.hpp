// The Autotuner's published decisions: one Entry per (device, key), immutable once published,
// in an open-addressing table that every call reads without a lock (the hit path). Writers
// (under the Autotuner's mutex) fill empty slots with release, or publish a bigger copy.
// Entries and retired tables stay allocated while the Autotuner lives: a reader may still hold
// one (and a thread's HitMemo may name an entry: hit_memo.hpp). Internal to the core.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "key_builder.hpp"
#include "tune/device.hpp"
#include "variants.hpp"

namespace tune::detail {

// A remembered decision for one (device, key). Immutable once published.
struct Entry {
  TuningKey key;
  const Device* device = nullptr;
  Config config;
  std::shared_ptr<Variant> variant;
  // Nonzero: no decision but a split bucket's marker (bucket_splits.hpp), under the bucket's
  // key: bit i set when def.key[i]'s bucket is split. Its members' own entries are under
  // exact_member_key(keys, args, key, split_specs); config and variant are empty.
  std::uint32_t split_specs = 0;
  // The decided median in ns (the winner's row when it was published), the reference of drift
  // samples (AutotunerOptions::drift); 0 when none is known (nothing is sampled then).
  double decided_ns = 0;
  // Drift bookkeeping, the only state of a published entry that changes: hits left until the
  // next sample (0: none counted yet), and whether a drift re-validation was started for this
  // decision (at most one per entry; a new decision is a new entry). The countdown is a
  // relaxed load and store, not a read-modify-write: no locked instruction on the hit path;
  // concurrent hits may lose a count or sample twice, which only shifts which hit is timed.
  mutable std::atomic<std::uint32_t> until_sample{0};
  mutable std::atomic<bool> revalidated{false};

  // Whether this hit is the one in `period` to time (period > 0). Lock-free, allocation-free.
  bool sample_now(std::uint32_t period) const noexcept {
    if (decided_ns <= 0) return false;
    const std::uint32_t left = until_sample.load(std::memory_order_relaxed);
    if (left == 1) {
      until_sample.store(period, std::memory_order_relaxed);
      return true;
    }
    until_sample.store(left == 0 ? period - 1 : left - 1, std::memory_order_relaxed);
    return left == 0 && period == 1;
  }
};

class PublishedEntries {
 public:
  // Lock-free: any thread, any time. Inline: every cache-hit call that misses its thread's
  // HitMemo looks here.
  const Entry* find(const TuningKey& key, const Device& dev) const noexcept {
    const Table* t = table_.load(std::memory_order_acquire);
    return t == nullptr ? nullptr : t->find(key, &dev);
  }

  // The rest: the caller holds the Autotuner's mutex.
  // Publishes a new (device, key) and returns it.
  const Entry* publish(std::unique_ptr<Entry> e);
  // Publishes `e`, replacing an entry of the same device and key (kept allocated: a reader
  // may still hold it; no HitMemo matches after this).
  void replace(std::unique_ptr<Entry> e);
  // Makes `dev`'s entries unreachable and drops their variants, so that every kernel of
  // `dev` the table holds is destroyed now.
  void release(const Device& dev);
  // The entry of `dev` nearest to `key` (a split bucket's marker never): same buffer types and
  // heuristic values (the values
  // after the first `key_args`), least distance over the key arguments in log2 space.
  const Entry* nearest(const Device& dev, const TuningKey& key, int key_args) const;

 private:
  struct Table {
    explicit Table(std::size_t cap) : slots(cap), mask(cap - 1) {}
    std::vector<std::atomic<const Entry*>> slots;
    std::size_t mask;
    std::size_t count = 0;  // written under the Autotuner's mutex only

    const Entry* find(const TuningKey& key, const Device* dev) const noexcept {
      for (std::size_t i = key.hash & mask;; i = (i + 1) & mask) {
        const Entry* e = slots[i].load(std::memory_order_acquire);
        if (e == nullptr) return nullptr;
        if (e->device == dev && e->key == key) return e;
      }
    }
    void insert(const Entry* e) noexcept;
  };
  // A fresh table of `cap` slots holding every live entry, made the one readers load.
  void rebuild(std::size_t cap);

  std::atomic<const Table*> table_{nullptr};
  std::vector<std::unique_ptr<Table>> tables_;  // current and retired; readers may hold any
  std::vector<std::unique_ptr<Entry>> entries_;
  std::vector<std::unique_ptr<Entry>> released_;  // replaced, or of released devices
};

}  // namespace tune::detail
