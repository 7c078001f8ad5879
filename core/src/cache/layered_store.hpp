// LayeredStore: the decision layers as one TuningStore (tune/bundle.hpp): the user's own store
// (read-write, may be null), then read-only bundles in order.
//
// load() returns, for each configuration, the row of the first layer that holds one: the
// user's row wins over a bundle's (a configuration timed or verified on this machine replaces
// what was shipped) and an earlier bundle's over a later one's; configurations only a later
// layer holds are added. Merging by configuration, not by key, matters: the first use of a
// shipped winner that was not verified stores its verified row in the user's database, which
// must not hide the bundle's other rows. Rows a bundle serves carry its path in
// StoredResult::origin. save(), try_claim() and release_claim() go to the user's store only
// (without one nothing is written and every claim is granted). A bundle that could not be
// opened is absent from the stack (warned about when it was opened).
//
// Thread safety: as the user's store; the bundles are immutable.
#pragma once

#include <memory>
#include <vector>

#include "cache/bundle_file.hpp"
#include "tune/store.hpp"

namespace tune::cache {

class LayeredStore final : public TuningStore {
 public:
  LayeredStore(std::shared_ptr<TuningStore> user,
               std::vector<std::shared_ptr<const BundleFile>> bundles)
      : user_(std::move(user)), bundles_(std::move(bundles)) {}

  std::vector<StoredResult> load(const StoreKey& key) override;
  void save(const StoreKey& key, std::span<const StoredResult> rows) override;
  // Every layer's rows, merged per key as load() merges them (the first layer holding a
  // configuration serves it), each key's rows in the winner rule's order.
  std::vector<CacheRow> find_rows(const CacheFilter& filter) override;
  bool try_claim(const StoreKey& key, std::chrono::milliseconds ttl) override;
  void release_claim(const StoreKey& key) override;

  const std::shared_ptr<TuningStore>& user() const noexcept { return user_; }
  const std::vector<std::shared_ptr<const BundleFile>>& bundles() const noexcept {
    return bundles_;
  }

 private:
  std::shared_ptr<TuningStore> user_;
  std::vector<std::shared_ptr<const BundleFile>> bundles_;
};

}  // namespace tune::cache
