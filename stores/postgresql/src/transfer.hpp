// Rows moved between two stores by import's provenance rule: what push_rows, pull_rows and
// SharedStore (adopting the server's better rows of a key it saved) share.
//
// Stateless; the loader and saver do the I/O.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "tune/postgres_store.hpp"

namespace tune::pg {

using Loader = std::function<Result<std::vector<StoredResult>>(const StoreKey&)>;
using Saver = std::function<Status(const StoreKey&, std::span<const StoredResult>)>;

// Each key of `rows` (consecutive per key) merged into the receiver (`load`, `save`): a row is
// saved when the receiver has none for its config, or one of worse provenance
// (has_better_provenance). Stops at the first failure of `load` or `save`.
Result<TransferStats> transfer(const std::vector<CacheRow>& rows, const Loader& load,
                               const Saver& save);

}  // namespace tune::pg
