// node_store (tune/mpi.hpp): one writer of the tuning database per node.
#include <cmath>

#include "exchange.hpp"
#include "tune/mpi.hpp"
#include "tune/sqlite_store.hpp"

namespace tune::mpi {

Result<std::shared_ptr<TuningStore>> node_store(MPI_Comm comm, double timeout_ms) {
  if (!std::isfinite(timeout_ms) || timeout_ms <= 0 || timeout_ms > 1e9)
    return Status(
        StatusCode::invalid_argument,
        "node_store: timeout_ms must be in (0, 1e9] ms, not " + std::to_string(timeout_ms));
  const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(timeout_ms)));
  detail::Exchange outer(comm, timeout);
  auto own = outer.duplicate("node_store: duplicating the communicator");
  TUNE_RETURN_IF_ERROR(own.status());
  MPI_Comm world = *own;
  MPI_Comm_set_errhandler(world, MPI_ERRORS_RETURN);
  // Every rank arrived at the duplication above, so this blocking split cannot wait on a
  // missing rank.
  MPI_Comm node = MPI_COMM_NULL;
  int rank = 0;
  MPI_Comm_rank(world, &rank);
  if (MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) != MPI_SUCCESS) {
    MPI_Comm_free(&world);
    return Status(StatusCode::unavailable, "node_store: MPI_Comm_split_type failed");
  }
  MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN);
  detail::Exchange local(node, timeout);
  const CacheMode mode = cache_mode_from_env();
  const std::string path = default_cache_path();
  const bool use = mode != CacheMode::off && !path.empty();
  const bool writer = use && local.rank() == 0 && mode == CacheMode::readwrite;
  std::shared_ptr<TuningStore> store;
  // The writer opens (and creates) the file before the others open it read-only, so that
  // they find a database rather than nothing.
  if (writer) store = SqliteStore::open(path, SqliteStore::Options{CacheMode::readwrite});
  Status arrived = local.barrier("node_store: waiting for the node's writer to open " + path);
  if (arrived.ok() && use && !writer)
    store = SqliteStore::open(path, SqliteStore::Options{CacheMode::readonly});
  if (!local.broken()) {
    MPI_Comm_free(&node);
    MPI_Comm_free(&world);
  }
  TUNE_RETURN_IF_ERROR(arrived);
  return store;
}

}  // namespace tune::mpi
