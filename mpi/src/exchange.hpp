// Exchange: the collectives tune::mpi uses, each made of non-blocking MPI calls polled against
// a deadline, so that a rank that stalls, fails or dies makes the others return a timeout
// Status instead of hanging. Texts (std::string) are the only payload: sizes go first, then
// the bytes.
//
// After a timeout the communicator is unusable: an MPI collective cannot be cancelled, so the
// abandoned one is still pending on it. Exchange marks itself broken and refuses every later
// call (failed_precondition).
//
// Thread safety: none; one thread uses an Exchange at a time (MPI collectives on one
// communicator must be called in the same order by every rank anyway). Blocking: each call
// blocks until the collective completes or its deadline passes.
#pragma once

#include <mpi.h>

#include <chrono>
#include <string>
#include <vector>

#include "tune/status.hpp"

namespace tune::mpi::detail {

class Exchange {
 public:
  // Uses `comm` (not owned; the caller keeps it alive). `timeout` bounds each call's wait.
  Exchange(MPI_Comm comm, std::chrono::milliseconds timeout);

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  MPI_Comm comm() const noexcept { return comm_; }
  bool broken() const noexcept { return broken_; }

  // Every rank's `mine`, indexed by rank. `what` names what is awaited (in a timeout message).
  Result<std::vector<std::string>> allgather(const std::string& mine, const std::string& what);
  // Root's `mine` on every rank (`mine` is ignored elsewhere).
  Result<std::string> broadcast(int root, const std::string& mine, const std::string& what);
  // Every rank's `mine` at `root`, indexed by rank; other ranks get an empty vector.
  Result<std::vector<std::string>> gather(int root, const std::string& mine,
                                          const std::string& what);
  // Waits until every rank has arrived here (MPI_Ibarrier).
  Status barrier(const std::string& what);
  // A duplicate of the communicator (MPI_Comm_idup), owned by the caller (MPI_Comm_free).
  Result<MPI_Comm> duplicate(const std::string& what);

 private:
  // The stage every collective above is made of: `start_error` is what the non-blocking MPI
  // call `call` (which set `req`) returned; an error there, else `req` polled to the deadline.
  // Every error names `what` (the step and rank awaited) and the MPI call, a timeout its ms.
  Status complete(int start_error, const char* call, MPI_Request& req, const std::string& what);
  // Polls `req` until it completes or the deadline; timeout (and broken) when it passes.
  Status wait(MPI_Request& req, const std::string& what);
  Status check(int mpi_error, const char* call, const std::string& what);
  Status usable(const std::string& what) const;

  MPI_Comm comm_;
  std::chrono::milliseconds timeout_;
  int rank_ = 0;
  int size_ = 1;
  bool broken_ = false;
};

}  // namespace tune::mpi::detail
