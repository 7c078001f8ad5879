#include "published.hpp"

#include <algorithm>
#include <cmath>

#include "hit_memo.hpp"

namespace tune::detail {

void PublishedEntries::Table::insert(const Entry* e) noexcept {
  std::size_t i = e->key.hash & mask;
  while (slots[i].load(std::memory_order_relaxed) != nullptr) i = (i + 1) & mask;
  slots[i].store(e, std::memory_order_release);
  ++count;
}

void PublishedEntries::rebuild(std::size_t cap) {
  auto t = std::make_unique<Table>(cap);
  for (const auto& e : entries_) t->insert(e.get());
  table_.store(t.get(), std::memory_order_release);
  tables_.push_back(std::move(t));
}

const Entry* PublishedEntries::publish(std::unique_ptr<Entry> e) {
  const Table* cur = table_.load(std::memory_order_relaxed);
  if (cur == nullptr || (cur->count + 1) * 2 > cur->slots.size())
    rebuild(cur == nullptr ? 16 : cur->slots.size() * 2);
  tables_.back()->insert(e.get());
  entries_.push_back(std::move(e));
  return entries_.back().get();
}

void PublishedEntries::replace(std::unique_ptr<Entry> e) {
  auto old = std::find_if(entries_.begin(), entries_.end(), [&](const auto& x) {
    return x->device == e->device && x->key == e->key;
  });
  if (old != entries_.end()) {
    // A thread's HitMemo may still name the old entry: no memo matches after this.
    hit_generation.fetch_add(1, std::memory_order_acq_rel);
    released_.push_back(std::move(*old));
    entries_.erase(old);
    rebuild(tables_.empty() ? 16 : tables_.back()->slots.size());
  }
  publish(std::move(e));
}

void PublishedEntries::release(const Device& dev) {
  // Entries stay allocated (a reader on another device may still probe an old table), but
  // drop their variants so that every kernel of `dev` is destroyed now.
  for (auto it = entries_.begin(); it != entries_.end();) {
    if ((*it)->device == &dev) {
      (*it)->variant.reset();
      released_.push_back(std::move(*it));
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
  rebuild(tables_.empty() ? 16 : tables_.back()->slots.size());
}

const Entry* PublishedEntries::nearest(const Device& dev, const TuningKey& key,
                                       int key_args) const {
  const int n = key_args;
  const Entry* best = nullptr;
  double best_d = 0;
  for (const auto& e : entries_) {
    if (e->device != &dev || e->key.size != key.size || e->split_specs != 0) continue;
    bool same = true;
    for (int i = n; i < key.size; ++i) same = same && e->key.values[i] == key.values[i];
    if (!same) continue;
    double d = 0;
    for (int i = 0; i < n; ++i) {
      auto lg = [](std::int64_t v) {
        return std::log2(static_cast<double>(std::max<std::int64_t>(v, 1)));
      };
      d += std::fabs(lg(e->key.values[i]) - lg(key.values[i]));
    }
    if (best == nullptr || d < best_d) {
      best = e.get();
      best_d = d;
    }
  }
  return best;
}

}  // namespace tune::detail
