// mpi_tuning: what tuning across MPI ranks buys on real GPUs (issue 14's evidence), printed as
// markdown tables for bench/RESULTS.md. A plain program (not Google Benchmark): each figure is
// one run of a whole tuning, too long to repeat.
//
//   mpirun -np 2 build/gpu/bench/mpi_tuning [--device cuda] [--size 2048] [--keys 6] [--warm]
//                                          [--space wide|bundled]
//
// Each rank opens "<device>:<node-local rank>" (one GPU per rank; a --device with its own
// ':' selector is opened as given, e.g. vulkan:0 on a machine with one device). Every phase has a
// fresh memory-only Autotuner, so none finds rows of an earlier one. Compiles: by default
// TUNE_CACHE is set to off, so every phase compiles all it times (NVRTC on the host's cores, which
// the ranks of one host share: a compile-bound tuning cannot speed up with the GPU count). With
// --warm, the caches stay on (point TUNE_CACHE_DIR at a scratch directory) and rank 0 first
// compiles the whole wide space (Autotuner::warmup), so both phases load compiled variants
// from disk and the comparison is of the GPU work. Phases:
//   1. single GPU, exhaustive: rank 0 tunes matmul_f32 over the wide space (>= 500
//      configurations; 1329 on an H200) with Autotuner::tune, the others wait;
//   2. share_space on every rank's GPU: the same key, the candidates dealt over the ranks,
//      finalists timed again on rank 0; speed-up = phase 1 wall / phase 2 wall, and both
//      winners timed again together on rank 0 (the shared winner's median over the exhaustive
//      winner's: the target is <= 1.02);
//   3. tune_collective over --keys shapes (size/2 x size/2 x size/16 << i: 1024 x 1024 x 128,
//      256, ... at 2048) with the bundled space: the
//   leader's wall
//      (tuning) and the waiting ranks' (waiting, then compiling the winner in adopt);
//   4. share_keys over the same sizes with a fresh Autotuner;
//   agreement: every rank's decision for every key of phases 2-4, compared (allgather).
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "mpi_rig.hpp"
#include "tune/kernels/bundled.hpp"
#include "tune/mpi.hpp"
#include "tune/tune.hpp"
#include "workload_calls.hpp"

using namespace tune;

namespace {

tune::testing::MpiRank me;  // this process: its rank and failed checks

[[noreturn]] void die(const std::string& what, const Status& st) {
  std::fprintf(stderr, "rank %d: %s: %s\n", me.rank, what.c_str(), st.to_string().c_str());
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

template <class T>
T value_or_die(Result<T> r, const std::string& what) {
  if (!r.ok()) die(what, r.status());
  return std::move(*r);
}

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

// One line on stderr per finished phase (rank 0), so a long run shows where it is.
void progress(const char* phase, double ms) {
  if (me.rank == 0) std::fprintf(stderr, "[mpi_tuning] %s done in %.1f s\n", phase, ms / 1000);
}

std::unique_ptr<Autotuner> fresh_tuner(KernelDef def) {
  AutotunerOptions o;
  o.persistent = false;
  o.print = false;
  // The bench compares whole tunings: thorough times every candidate of the wide space (it has
  // fewer than thorough's 4096), where standard would search a space over 250.
  o.effort = Effort::thorough;
  return value_or_die(Autotuner::make(std::move(def), o), "Autotuner::make");
}

// A workload of matmul_f32 for m x n x kk on `dev`, and its call.
void add_matmul(tune::testing::WorkloadCalls& work, const kernels::BundledKernel& k, Device& dev,
                std::int64_t m, std::int64_t n, std::int64_t kk) {
  const std::int64_t dims[] = {m, n, kk};
  if (Status st = work.add(k, dev, dims, 11); !st.ok()) die("workload setup", st);
}

}  // namespace

int main(int argc, char** argv) {
  me = tune::testing::MpiRank::start(&argc, &argv);
  std::string device = "cuda";
  std::int64_t size = 2048;
  int nkeys = 6;
  bool warm = false;
  std::string space = "wide";  // or "bundled": a smoke test (lavapipe cannot time the wide one)
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--warm") {
      warm = true;
      continue;
    }
    if (i + 1 >= argc) break;
    const std::string v = argv[++i];
    if (a == "--device")
      device = v;
    else if (a == "--size")
      size = std::atoll(v.c_str());
    else if (a == "--keys")
      nkeys = std::atoi(v.c_str());
    else if (a == "--space")
      space = v;
  }
  if (!warm) ::setenv("TUNE_CACHE", "off", 1);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me.rank, MPI_INFO_NULL, &node);
  int local = 0;
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  auto dev = value_or_die(
      open_device(device.find(':') == std::string::npos ? device + ":" + std::to_string(local)
                                                        : device),
      "open_device");
  auto k = kernels::bundled_kernel(dev->language(), "matmul_f32");
  if (!k) die("matmul_f32", Status(StatusCode::not_found, "no bundled matmul_f32 here"));
  KernelDef wide = k->def;
  if (space == "wide")
    wide.space = value_or_die(kernels::wide_matmul_f32_space(*k, dev->language()), "wide space");
  tune::testing::WorkloadCalls big;
  add_matmul(big, *k, *dev, size, size, size);
  const ArgList big_args = big.calls[0];
  // A whole tuning of the wide space may be waited for: 30 minutes.
  auto coord = value_or_die(tune::testing::world_coordinator(*dev, 1800000), "Coordinator");
  if (me.rank == 0) {
    std::printf("# mpi_tuning: %d ranks, device %s (%s), matmul_f32 %lldx%lldx%lld\n\n", me.size,
                dev->info().name.c_str(), dev->info().fingerprint().c_str(),
                static_cast<long long>(size), static_cast<long long>(size),
                static_cast<long long>(size));
  }

  if (warm) {
    if (me.rank == 0) {
      const double t0 = now_ms();
      if (Status st = fresh_tuner(wide)->warmup(*dev); !st.ok()) die("warmup", st);
      std::printf("compiled the wide space into the cache in %.1f s (--warm)\n\n",
                  (now_ms() - t0) / 1000);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }

  // 1. One GPU, exhaustive.
  auto solo = fresh_tuner(wide);
  const std::size_t ncands = value_or_die(solo->candidates(*dev, big_args), "candidates").size();
  MPI_Barrier(MPI_COMM_WORLD);
  double t1 = 0;
  Config w1;
  if (me.rank == 0) {
    const double t0 = now_ms();
    w1 = value_or_die(solo->tune(*dev, big_args), "single-GPU tuning");
    t1 = now_ms() - t0;
  }
  progress("phase 1 (one GPU, exhaustive)", t1);
  MPI_Barrier(MPI_COMM_WORLD);

  // 2. share_space over every rank's GPU.
  auto shared = fresh_tuner(wide);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t2s = now_ms();
  auto out2 = value_or_die(coord->share_space(*shared, *dev, big.calls), "share_space");
  const double t2 = now_ms() - t2s;
  progress("phase 2 (share_space)", t2);
  const Config w2 = out2[0].config;
  double m1 = 0, m2 = 0;
  if (me.rank == 0) {
    // Both winners timed again, together, on rank 0's GPU.
    const std::vector<Config> pair = {w1, w2};
    auto again = value_or_die(solo->measure(*dev, big_args, pair), "timing the winners again");
    m1 = again[0].stats.median;
    m2 = again[1].stats.median;
  }
  std::string agree = tune::testing::decisions_text(out2);

  // 3. tune_collective over several sizes, bundled space: the cost of waiting.
  tune::testing::WorkloadCalls keys;
  for (int i = 0; i < nkeys; ++i) {
    // Distinct pow2 keys: (size/2) x (size/2) x (size/16 << i); 1024 x 1024 x 128.. at 2048.
    add_matmul(keys, *k, *dev, size / 2, size / 2, std::max<std::int64_t>(1, size / 16) << i);
  }
  const std::vector<ArgList>& calls = keys.calls;
  auto one = fresh_tuner(k->def);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t3s = now_ms();
  auto out3 = value_or_die(coord->tune_collective(*one, *dev, calls), "tune_collective");
  const double t3 = now_ms() - t3s;
  progress("phase 3 (tune_collective)", t3);
  agree += tune::testing::decisions_text(out3);
  const auto walls3 = tune::testing::allgather_texts(std::to_string(t3));

  // 4. share_keys over the same sizes.
  auto many = fresh_tuner(k->def);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t4s = now_ms();
  auto out4 = value_or_die(coord->share_keys(*many, *dev, calls), "share_keys");
  const double t4 = now_ms() - t4s;
  progress("phase 4 (share_keys)", t4);
  agree += tune::testing::decisions_text(out4);

  const int same = tune::testing::decisions_agree(me, agree);
  const std::size_t nk = out2.size() + out3.size() + out4.size();

  if (me.rank == 0) {
    std::printf("| phase | what | wall | result |\n|---|---|---|---|\n");
    std::printf("| 1 | one GPU, exhaustive, %zu configs | %.1f s | {%s} %.1f us |\n", ncands,
                t1 / 1000, w1.to_string().c_str(), m1 / 1000);
    std::printf("| 2 | share_space on %d GPUs (finalists %zu) | %.1f s | {%s} %.1f us |\n", me.size,
                out2[0].finalists.size(), t2 / 1000, w2.to_string().c_str(), m2 / 1000);
    std::printf("| 3 | tune_collective, %d keys: leader | %.1f s | tunes |\n", nkeys,
                std::atof(walls3[0].c_str()) / 1000);
    for (int r = 1; r < me.size; ++r)
      std::printf("| 3 | tune_collective, %d keys: rank %d | %.1f s | waits, then adopts |\n",
                  nkeys, r, std::atof(walls3[static_cast<std::size_t>(r)].c_str()) / 1000);
    std::printf("| 4 | share_keys, %d keys | %.1f s | |\n\n", nkeys, t4 / 1000);
    std::printf("speed-up of share_space over one GPU: %.2fx (target >= 1.8x)\n", t1 / t2);
    std::printf("shared winner / exhaustive winner, timed again together: %.4f (target <= 1.02)\n",
                m2 / m1);
    std::printf("agreement: %d of %d ranks decided the same %zu keys (%s)\n", same, me.size, nk,
                same == me.size ? "100%" : "DISAGREE");
  }
  coord.reset();  // frees its communicators: before MPI_Finalize
  return me.finish(same == me.size ? 0 : 1);
}
