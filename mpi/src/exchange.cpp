#include "exchange.hpp"

#include <cstdint>
#include <thread>

namespace tune::mpi::detail {
namespace {

// How long a waiting rank sleeps between two MPI_Test calls: short enough not to add latency
// that matters next to a tuning, long enough not to spin a core that a rank on the same node
// could use for compiling.
constexpr auto kPoll = std::chrono::microseconds(200);

std::string mpi_error_text(int err) {
  char buf[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(err, buf, &len) != MPI_SUCCESS) return "MPI error " + std::to_string(err);
  return std::string(buf, static_cast<std::size_t>(len));
}

// Displacements of a gathered buffer from its sizes; false when the total overflows an int
// (MPI counts are int).
bool displacements(const std::vector<std::int64_t>& sizes, std::vector<int>* counts,
                   std::vector<int>* displs, std::size_t* total) {
  counts->resize(sizes.size());
  displs->resize(sizes.size());
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0 || sum + sizes[i] > INT32_MAX) return false;
    (*counts)[i] = static_cast<int>(sizes[i]);
    (*displs)[i] = static_cast<int>(sum);
    sum += sizes[i];
  }
  *total = static_cast<std::size_t>(sum);
  return true;
}

}  // namespace

Exchange::Exchange(MPI_Comm comm, std::chrono::milliseconds timeout)
    : comm_(comm), timeout_(timeout) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

Status Exchange::usable(const std::string& what) const {
  if (!broken_) return {};
  return Status(StatusCode::failed_precondition,
                what +
                    ": an earlier exchange on this communicator timed out; its collective "
                    "cannot be cancelled, so the communicator cannot be used again (make a "
                    "new Coordinator on a new communicator)");
}

Status Exchange::check(int mpi_error, const char* call, const std::string& what) {
  if (mpi_error == MPI_SUCCESS) return {};
  broken_ = true;
  return Status(StatusCode::unavailable,
                what + ": " + call + " failed: " + mpi_error_text(mpi_error));
}

Status Exchange::wait(MPI_Request& req, const std::string& what) {
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  for (;;) {
    int done = 0;
    TUNE_RETURN_IF_ERROR(check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "MPI_Test", what));
    if (done != 0) return {};
    if (std::chrono::steady_clock::now() >= deadline) {
      broken_ = true;  // the request stays pending: it cannot be cancelled
      return Status(StatusCode::timeout,
                    what + ": not complete after " + std::to_string(timeout_.count()) +
                        " ms (a rank stalled, failed or exited; this communicator cannot be "
                        "used again)");
    }
    std::this_thread::sleep_for(kPoll);
  }
}

Status Exchange::complete(int start_error, const char* call, MPI_Request& req,
                          const std::string& what) {
  TUNE_RETURN_IF_ERROR(check(start_error, call, what));
  return wait(req, what);
}

Result<std::vector<std::string>> Exchange::allgather(const std::string& mine,
                                                     const std::string& what) {
  TUNE_RETURN_IF_ERROR(usable(what));
  const auto n = static_cast<std::size_t>(size_);
  std::int64_t my_size = static_cast<std::int64_t>(mine.size());
  std::vector<std::int64_t> sizes(n);
  MPI_Request req = MPI_REQUEST_NULL;
  TUNE_RETURN_IF_ERROR(
      complete(MPI_Iallgather(&my_size, 1, MPI_INT64_T, sizes.data(), 1, MPI_INT64_T, comm_, &req),
               "MPI_Iallgather", req, what));
  std::vector<int> counts, displs;
  std::size_t total = 0;
  if (!displacements(sizes, &counts, &displs, &total))
    return Status(StatusCode::invalid_argument, what + ": more than 2 GiB to exchange");
  std::string all(total, '\0');
  TUNE_RETURN_IF_ERROR(
      complete(MPI_Iallgatherv(mine.data(), static_cast<int>(mine.size()), MPI_CHAR, all.data(),
                               counts.data(), displs.data(), MPI_CHAR, comm_, &req),
               "MPI_Iallgatherv", req, what));
  std::vector<std::string> out(n);
  for (std::size_t i = 0; i < n; ++i)
    out[i] = all.substr(static_cast<std::size_t>(displs[i]), static_cast<std::size_t>(counts[i]));
  return out;
}

Result<std::string> Exchange::broadcast(int root, const std::string& mine,
                                        const std::string& what) {
  TUNE_RETURN_IF_ERROR(usable(what));
  std::int64_t size = rank_ == root ? static_cast<std::int64_t>(mine.size()) : 0;
  MPI_Request req = MPI_REQUEST_NULL;
  TUNE_RETURN_IF_ERROR(
      complete(MPI_Ibcast(&size, 1, MPI_INT64_T, root, comm_, &req), "MPI_Ibcast", req, what));
  if (size < 0 || size > INT32_MAX)
    return Status(StatusCode::invalid_argument, what + ": more than 2 GiB to broadcast");
  std::string text = rank_ == root ? mine : std::string(static_cast<std::size_t>(size), '\0');
  TUNE_RETURN_IF_ERROR(
      complete(MPI_Ibcast(text.data(), static_cast<int>(size), MPI_CHAR, root, comm_, &req),
               "MPI_Ibcast", req, what));
  return text;
}

Result<std::vector<std::string>> Exchange::gather(int root, const std::string& mine,
                                                  const std::string& what) {
  TUNE_RETURN_IF_ERROR(usable(what));
  const auto n = static_cast<std::size_t>(size_);
  std::int64_t my_size = static_cast<std::int64_t>(mine.size());
  std::vector<std::int64_t> sizes(rank_ == root ? n : 0);
  MPI_Request req = MPI_REQUEST_NULL;
  TUNE_RETURN_IF_ERROR(complete(
      MPI_Igather(&my_size, 1, MPI_INT64_T, sizes.data(), 1, MPI_INT64_T, root, comm_, &req),
      "MPI_Igather", req, what));
  std::vector<int> counts, displs;
  std::size_t total = 0;
  if (rank_ == root && !displacements(sizes, &counts, &displs, &total))
    return Status(StatusCode::invalid_argument, what + ": more than 2 GiB to gather");
  std::string all(total, '\0');
  TUNE_RETURN_IF_ERROR(
      complete(MPI_Igatherv(mine.data(), static_cast<int>(mine.size()), MPI_CHAR, all.data(),
                            counts.data(), displs.data(), MPI_CHAR, root, comm_, &req),
               "MPI_Igatherv", req, what));
  std::vector<std::string> out;
  if (rank_ != root) return out;
  out.resize(n);
  for (std::size_t i = 0; i < n; ++i)
    out[i] = all.substr(static_cast<std::size_t>(displs[i]), static_cast<std::size_t>(counts[i]));
  return out;
}

Status Exchange::barrier(const std::string& what) {
  TUNE_RETURN_IF_ERROR(usable(what));
  MPI_Request req = MPI_REQUEST_NULL;
  return complete(MPI_Ibarrier(comm_, &req), "MPI_Ibarrier", req, what);
}

Result<MPI_Comm> Exchange::duplicate(const std::string& what) {
  TUNE_RETURN_IF_ERROR(usable(what));
  MPI_Comm out = MPI_COMM_NULL;
  MPI_Request req = MPI_REQUEST_NULL;
  TUNE_RETURN_IF_ERROR(complete(MPI_Comm_idup(comm_, &out, &req), "MPI_Comm_idup", req, what));
  return out;
}

}  // namespace tune::mpi::detail
