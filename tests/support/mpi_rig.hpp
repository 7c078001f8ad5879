// The MPI rig of the programs that run tune::mpi under mpirun (tests/mpi's mpi_sim_test and
// mpi_vulkan_test, bench/mpi_tuning): this rank's place in MPI_COMM_WORLD and its failed
// checks, a plain blocking allgather of texts (to compare what the ranks decided), each rank's
// decisions as one text, and a Coordinator over MPI_COMM_WORLD.
//
// Thread safety: MPI is initialised MPI_THREAD_FUNNELED; only the main thread calls these.
// Blocking: allgather_texts and decisions_agree wait for every rank (plain MPI collectives,
// no deadline): call them only where every rank is alive.
#pragma once

#include <mpi.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tune/mpi.hpp"

namespace tune::testing {

// This process as one rank of MPI_COMM_WORLD, and the checks it failed.
struct MpiRank {
  int rank = 0;
  int size = 1;
  int failures = 0;

  // MPI_Init_thread and this rank's place: the first thing main() does.
  static MpiRank start(int* argc, char*** argv) {
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    MpiRank r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &r.size);
    return r;
  }

  // Counts a failed check and prints it, naming this rank.
  void check(bool ok, const std::string& what) {
    if (ok) return;
    ++failures;
    std::fprintf(stderr, "rank %d: FAILED: %s\n", rank, what.c_str());
  }

  // The last thing main() does: the exit code (`rc`, or 1 when rc is 0 but a check failed);
  // when it is 0 and `passed` is not empty, rank 0 prints "<passed>: passed on <n> ranks".
  // Then MPI_Finalize.
  int finish(int rc, const std::string& passed = {}) {
    if (rc == 0 && failures > 0) rc = 1;
    if (rc == 0 && rank == 0 && !passed.empty())
      std::printf("%s: passed on %d ranks\n", passed.c_str(), size);
    MPI_Finalize();
    return rc;
  }
};

// Every rank's `text`, in rank order.
inline std::vector<std::string> allgather_texts(const std::string& text) {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int n = static_cast<int>(text.size());
  std::vector<int> sizes(static_cast<std::size_t>(size)), displs(sizes.size());
  MPI_Allgather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, MPI_COMM_WORLD);
  int total = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) displs[i] = total, total += sizes[i];
  std::string all(static_cast<std::size_t>(total), '\0');
  MPI_Allgatherv(text.data(), n, MPI_CHAR, all.data(), sizes.data(), displs.data(), MPI_CHAR,
                 MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < sizes.size(); ++i)
    out.push_back(
        all.substr(static_cast<std::size_t>(displs[i]), static_cast<std::size_t>(sizes[i])));
  return out;
}

// The keys a mode decided and their configs, as "key=>config;" text: equal texts on two
// ranks mean equal decisions.
inline std::string decisions_text(const std::vector<mpi::KeyOutcome>& outcomes) {
  std::string s;
  for (const auto& o : outcomes) s += o.key + "=>" + o.config.to_string() + ";";
  return s;
}

// Every rank's `mine` (e.g. decisions_text) compared with rank 0's: the ranks whose text
// differs, each with its text, checked on `me` ("rank r decided '...', rank 0 '...'").
// Returns how many ranks agree with rank 0 (rank 0 included).
inline int decisions_agree(MpiRank& me, const std::string& mine) {
  const auto all = allgather_texts(mine);
  int same = 0;
  for (std::size_t r = 0; r < all.size(); ++r) {
    same += all[r] == all[0] ? 1 : 0;
    me.check(all[r] == all[0],
             "rank " + std::to_string(r) + " decided '" + all[r] + "', rank 0 '" + all[0] + "'");
  }
  return same;
}

// How many ranks measured each config: every rank's `measured_here` (KeyOutcome's), counted by
// config text; share_space measures each candidate on exactly one rank.
inline std::map<std::string, int> measured_counts(const std::vector<Config>& measured_here) {
  std::string mine;
  for (const auto& c : measured_here) mine += c.to_string() + "\n";  // config texts hold ';'
  std::map<std::string, int> count;
  for (const auto& s : allgather_texts(mine)) {
    std::size_t p = 0;
    for (std::size_t q; (q = s.find('\n', p)) != std::string::npos; p = q + 1)
      ++count[s.substr(p, q - p)];
  }
  return count;
}

// A Coordinator over MPI_COMM_WORLD whose exchanges wait at most `timeout_ms`.
inline Result<std::unique_ptr<mpi::Coordinator>> world_coordinator(const Device& dev,
                                                                   double timeout_ms) {
  mpi::CoordinatorOptions o;
  o.timeout_ms = timeout_ms;
  return mpi::Coordinator::make(MPI_COMM_WORLD, dev, o);
}

}  // namespace tune::testing
