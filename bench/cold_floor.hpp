// Cold tuning against its floor (issue 15): how close a tuning from nothing (no stored row, no
// compiled variant in memory or on disk) comes to the least it could cost on this machine.
//
//   cold   the wall time of the first Autotuner::run of a key, split as its TuningReport
//          splits it: waiting for compiles / timing (warm-up and timed launches with their
//          flushes) / the rest
//   floor  every candidate compiled at once on one thread per hardware thread (each thread
//          compiles the next variant not taken), so every core is busy: the compiles' span is
//          at least the slowest single compile, and at least the summed compile time spread
//          over the threads when there are more variants than threads; plus the tuning's own
//          timing (TuningTimes::benchmark), which no scheduling of the compiles can avoid
//
// Both sides start cold: each round salts the kernel's source with a comment naming the round
// and the side, so no cache of compiled code (ShaderCompiler's memory and disk caches, the
// binary cache of CUBINs) knows it; the tuner persists nothing. The caller opens the device
// with TUNE_CACHE_DIR on a new directory; on CUDA also set CUDA_CACHE_DISABLE=1. Rounds
// alternate (cold, floor, cold, floor, ...); the first round of a process also pays one-time
// initialisation (the compiler's first use), so it is printed apart and the ratio is taken
// on the medians of the later rounds. Blocks; prints to stdout.
#pragma once

#include <stdlib.h>  // mkdtemp, setenv

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tune/kernels/bundled.hpp"
#include "tune/tune.hpp"

namespace tune::bench {

struct ColdRound {
  double cold_ms = 0, compile_wait_ms = 0, timing_ms = 0, other_ms = 0;
  double slowest_compile_ms = 0, spread_compile_ms = 0, compile_span_ms = 0;
  double floor_ms() const { return std::max(slowest_compile_ms, spread_compile_ms) + timing_ms; }
};

// `def` with its source for `lang` made unknown to every compile cache by a comment.
inline KernelDef salted(const KernelDef& def, Language lang, const std::string& salt) {
  KernelDef out = def;
  for (KernelSource& s : out.sources)
    if (s.language == lang) s.text = "// libtune cold-floor " + salt + "\n" + s.text;
  return out;
}

// One cold tuning of `def` on `args`; fills the cold side of `r` and the candidates' configs.
inline Status time_cold_tuning(Device& dev, const KernelDef& def, ArgList args,
                               const BenchOptions& bench, ColdRound& r,
                               std::vector<Config>* configs) {
  AutotunerOptions opts;
  opts.persistent = false;
  opts.bench = bench;
  auto tuner = Autotuner::make(def, opts);
  if (!tuner.ok()) return tuner.status();
  TUNE_RETURN_IF_ERROR(dev.synchronize());
  const auto t0 = std::chrono::steady_clock::now();
  TUNE_RETURN_IF_ERROR((*tuner)->run(dev, args));
  TUNE_RETURN_IF_ERROR(dev.synchronize());
  r.cold_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  auto report = (*tuner)->last_report(dev, args);
  if (!report) return Status(StatusCode::internal, "the cold tuning left no report");
  r.compile_wait_ms = report->times.compile;
  r.timing_ms = report->times.benchmark + report->times.verify;
  r.other_ms = r.cold_ms - r.compile_wait_ms - r.timing_ms;
  configs->clear();
  for (const ConfigResult& c : report->results) configs->push_back(c.config);
  return {};
}

// Every config of `src` compiled at once, one thread per hardware thread; fills the floor side.
inline Status time_compile_floor(Device& dev, const KernelSource& src,
                                 const std::vector<Config>& configs, ColdRound& r) {
  using Clock = std::chrono::steady_clock;
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<double> ms(configs.size(), 0);
  std::vector<Status> status(configs.size());
  std::atomic<std::size_t> next{0};
  const auto t0 = Clock::now();
  {
    std::vector<std::jthread> pool;
    for (unsigned t = 0; t < threads; ++t) {
      pool.emplace_back([&] {
        for (std::size_t i = next++; i < configs.size(); i = next++) {
          const auto c0 = Clock::now();
          auto k = dev.compile(src, configs[i]);
          ms[i] = std::chrono::duration<double, std::milli>(Clock::now() - c0).count();
          if (!k.ok()) status[i] = k.status();
        }
      });
    }
  }
  r.compile_span_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  double sum = 0;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    // A config the device refuses (its limits) costs the tuning no compile either.
    if (!status[i].ok() && status[i].code() != StatusCode::out_of_resources)
      return Status(status[i]).with_context("compiling {" + configs[i].to_string() + "}");
    r.slowest_compile_ms = std::max(r.slowest_compile_ms, ms[i]);
    sum += ms[i];
  }
  r.spread_compile_ms = sum / threads;
  return {};
}

inline double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Runs `rounds` rounds (>= 2) of `k` at `size` on `dev`, timing with `bench` (the library's
// defaults unless the caller has a reason); returns 0, or 1 with a message.
inline int run_cold_floor(Device& dev, const kernels::BundledKernel& k,
                          const std::vector<std::int64_t>& size, int rounds,
                          const BenchOptions& bench = {}) {
  auto fail = [](const std::string& what, const Status& s) {
    std::fprintf(stderr, "cold-floor: %s: %s\n", what.c_str(), s.to_string().c_str());
    return 1;
  };
  auto w = k.workload(size);
  if (auto s = w->setup(dev, 3); !s.ok()) return fail("setup", s);
  std::string dims;
  for (std::int64_t d : size) dims += (dims.empty() ? "" : "x") + std::to_string(d);
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::printf("cold tuning vs its floor: %s %s on %s, %u hardware threads\n", k.name.c_str(),
              dims.c_str(), dev.info().name.c_str(), threads);
  std::printf("%-6s %9s %9s %9s %9s | %9s %9s %9s %9s | %6s\n", "round", "cold_ms", "compile",
              "timing", "other", "slowest", "spread", "span", "floor_ms", "ratio");
  std::vector<double> cold, floor;
  std::size_t candidates = 0;
  for (int i = 0; i < rounds; ++i) {
    ColdRound r;
    std::vector<Config> configs;
    const std::string tag = std::to_string(i);
    auto s = time_cold_tuning(dev, salted(k.def, dev.language(), "tune " + tag), w->args(), bench,
                              r, &configs);
    if (!s.ok()) return fail("cold tuning", s);
    const KernelDef floor_def = salted(k.def, dev.language(), "floor " + tag);
    s = time_compile_floor(dev, *floor_def.source_for(dev.language()), configs, r);
    if (!s.ok()) return fail("floor", s);
    candidates = configs.size();
    std::printf("%-6s %9.1f %9.1f %9.1f %9.1f | %9.1f %9.1f %9.1f %9.1f | %6.3f\n",
                i == 0 ? "first" : tag.c_str(), r.cold_ms, r.compile_wait_ms, r.timing_ms,
                r.other_ms, r.slowest_compile_ms, r.spread_compile_ms, r.compile_span_ms,
                r.floor_ms(), r.cold_ms / r.floor_ms());
    if (i > 0) {
      cold.push_back(r.cold_ms);
      floor.push_back(r.floor_ms());
    }
  }
  const double c = median_of(cold), f = median_of(floor);
  std::printf(
      "%zu candidates; median of rounds 1..%d: cold %.1f ms, floor %.1f ms, ratio %.3f "
      "(target <= 1.15)\n"
      "  compile/timing/other: the cold tuning's TuningTimes (compile = waiting for compiles);\n"
      "  slowest: the slowest single compile with every core busy; spread: the summed compile "
      "time over %u threads;\n"
      "  span: the floor pool's measured span; floor = max(slowest, spread) + timing\n",
      candidates, rounds - 1, c, f, c / f, threads);
  return 0;
}

// `--cold-floor[=ROUNDS]` among the arguments: the rounds asked for (default 4), else 0. With
// the flag, TUNE_CACHE_DIR is pointed at a new directory: call it before opening the device,
// whose disk caches open with it.
inline int cold_floor_flag(int argc, char** argv) {
  int rounds = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--cold-floor") == 0) rounds = 4;
    if (std::strncmp(argv[i], "--cold-floor=", 13) == 0)
      rounds = std::max(2, std::atoi(argv[i] + 13));
  }
  if (rounds > 0) {
    char dir[] = "/tmp/libtune-cold-floor-XXXXXX";
    if (::mkdtemp(dir) != nullptr) ::setenv("TUNE_CACHE_DIR", dir, 1);
    std::printf("TUNE_CACHE_DIR=%s\n", dir);
  }
  return rounds;
}

}  // namespace tune::bench
