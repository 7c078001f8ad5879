// tune::mpi on real Vulkan devices (lavapipe here; any Vulkan GPU when TUNE_VULKAN_DEVICE or
// VK_ICD_FILENAMES asks for one), under mpirun -np 4: the bundled vector_add, each mode, every
// rank's output checked against the CPU reference after launching the decided configuration.
// Each rank verifies the configurations it measures (KernelDef::verify, which also records
// which rank timed which configuration: share_space must split the space). Skips (exit 77 on
// every rank) when a rank opens no Vulkan device, except in CI (CI=true), where that fails.
//
//   mpi_vulkan_test <one_tunes | share_space | share_keys>
#include <mpi.h>

#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "interop_data.hpp"
#include "mpi_rig.hpp"
#include "skip.hpp"
#include "tune/kernels/bundled.hpp"
#include "tune/mpi.hpp"
#include "tune/tune.hpp"
#include "tune/vulkan.hpp"
#include "vulkan_env.hpp"
#include "workload_calls.hpp"

using namespace tune;

namespace {

tune::testing::MpiRank me;  // this process: its rank and failed checks

void check(bool ok, const std::string& what) { me.check(ok, what); }

int run(const std::string& mode) {
  tune::testing::use_lavapipe_unless_asked();
  auto dev = vulkan::open_device("");
  int have = dev.ok() ? 1 : 0, all_have = 0;
  MPI_Allreduce(&have, &all_have, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (all_have == 0) {
    const std::string why = dev.ok() ? "another rank opened no Vulkan device"
                                     : "no Vulkan device: " + dev.status().to_string();
    if (tune::testing::in_ci()) {
      std::fprintf(stderr, "rank %d: FAILED: %s (CI runs this on lavapipe)\n", me.rank,
                   why.c_str());
      return 1;
    }
    if (me.rank == 0) std::printf("SKIPPED: %s\n", why.c_str());
    return 77;
  }
  auto k = kernels::bundled_kernel(Language::glsl, "vector_add");
  check(k.has_value(), "the bundled GLSL vector_add");
  if (!k) return 1;
  // Which configurations this rank launched while tuning (the pre-hook wraps every tuning
  // launch, warm-up included, and no cache hit): what it measured. Not `verify`: only what
  // can win is verified.
  std::mutex mu;
  std::set<std::string> launched;
  KernelDef def = k->def;
  def.pre_hook = [&](Device&, ArgList, const Config& c) {
    std::lock_guard lock(mu);
    launched.insert(c.to_string());
    return Status();
  };
  auto tuner = Autotuner::make(def, tune::testing::interop_options());
  check(tuner.ok(), "Autotuner::make: " + tuner.status().to_string());
  if (!tuner.ok()) return 1;
  const std::vector<std::int64_t> sizes =
      mode == "share_keys" ? std::vector<std::int64_t>{1000, 3000, 5000, 7000, 9000, 20000}
                           : std::vector<std::int64_t>{4099};
  tune::testing::WorkloadCalls work;
  for (std::int64_t n : sizes) {
    const std::int64_t dims[] = {n};
    Status st = work.add(*k, **dev, dims, 7);
    check(st.ok(), "workload setup: " + st.to_string());
    if (!st.ok()) return 1;
  }
  const std::vector<ArgList>& calls = work.calls;
  auto coord = tune::testing::world_coordinator(**dev, 50000);
  check(coord.ok(), "Coordinator::make: " + coord.status().to_string());
  if (!coord.ok()) return 1;
  auto out = mode == "one_tunes"     ? (*coord)->tune_collective(**tuner, **dev, calls)
             : mode == "share_space" ? (*coord)->share_space(**tuner, **dev, calls)
                                     : (*coord)->share_keys(**tuner, **dev, calls);
  check(out.ok(), mode + ": " + out.status().to_string());
  if (!out.ok()) return 1;
  // Every rank decided the same configurations.
  tune::testing::decisions_agree(me, tune::testing::decisions_text(*out));
  // Who launched (= measured) what.
  auto cands = (*tuner)->candidates(**dev, calls[0]);
  check(cands.ok(), "candidates");
  if (mode == "one_tunes") {
    check(me.rank == 0 ? launched.size() == cands->size() : launched.empty(),
          "only the leader measured (" + std::to_string(launched.size()) + " here)");
  } else if (mode == "share_space") {
    std::set<std::string> share;
    for (const auto& c : (*out)[0].measured_here) share.insert(c.to_string());
    if (me.rank != 0) check(share == launched, "measured exactly its share");
    const auto count = tune::testing::measured_counts((*out)[0].measured_here);
    check(count.size() == cands->size(), "every candidate measured");
    for (const auto& [c, n] : count) check(n == 1, c + " measured by exactly one rank");
    // Two or more finalists are timed again on the leader.
    if (me.rank == 0 && (*out)[0].finalists.size() >= 2)
      for (const auto& f : (*out)[0].finalists)
        check(launched.count(f) == 1, "the leader timed finalist " + f);
  }
  // The decided configuration launches and computes the right answer on every rank.
  for (std::size_t i = 0; i < calls.size(); ++i) {
    check(work.loads[i]->poison_outputs(**dev).ok(), "poison");
    check((*tuner)->run(**dev, calls[i]).ok(), "run");
    Status st = work.loads[i]->check(**dev);
    check(st.ok(), "output of " + (*out)[i].config.to_string() + ": " + st.to_string());
    auto best = (*tuner)->best(**dev, calls[i]);
    check(best && best->to_string() == (*out)[i].config.to_string(), "remembered as decided");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  me = tune::testing::MpiRank::start(&argc, &argv);
  const std::string mode = argc > 1 ? argv[1] : "one_tunes";
  return me.finish(run(mode), mode + " on lavapipe");
}
