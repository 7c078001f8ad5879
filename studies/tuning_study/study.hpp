// tuning_study: what the subcommands share (main.cpp, racing.cpp, quality.cpp, record.cpp):
// the options, progress and error reporting, text formats, devices and workloads, the long
// interleaved re-timing and the output files.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "stats.hpp"
#include "timing_policy.hpp"
#include "tune/kernels/bundled.hpp"
#include "tune/tune.hpp"

namespace study {

using namespace tune;
using Clock = std::chrono::steady_clock;
using Size = std::vector<std::int64_t>;

inline constexpr double kInf = std::numeric_limits<double>::infinity();

struct Options {
  std::string command;
  std::string device;
  bool large = false;
  bool quick = false;
  std::string kernel;
  std::string out = "tuning_study_out";
  std::string space = "bundled";
  std::string size;
  int rounds = 4;
  double long_ms = 0;      // 0: the mode's default
  double max_seconds = 0;  // record: stop cleanly after this long (0: no limit)
  std::string resume;      // record: append to this recording, skipping what it has
  int jobs = 0;            // record: compile threads + 1 (0: hardware_concurrency)
};

double ms_since(Clock::time_point t0);

// When the program started (main resets it after parsing the command line).
extern Clock::time_point g_start;

// Progress line on stderr, prefixed with the elapsed time.
template <typename... A>
void progress(const char* fmt, A... a) {
  std::fprintf(stderr, "[%6.1f s] ", ms_since(g_start) / 1000.0);
  if constexpr (sizeof...(A) == 0) {
    std::fputs(fmt, stderr);
  } else {
    std::fprintf(stderr, fmt, a...);
  }
  std::fputc('\n', stderr);
}

[[noreturn]] void die(const std::string& what, const Status& st);

std::string size_text(const Size& s);
std::optional<Size> parse_size(const std::string& text);
std::string fmt(const char* f, double v);
// Nanoseconds as a short human string.
std::string ns_text(double ns);
bool is_matmul(const std::string& name);

// ---- device and workload helpers -------------------------------------------------------------

std::unique_ptr<Device> open(const Options& o);
// Before every launch of the study's timings: the accumulators zeroed, recorded by the backend
// beside its timed launches.
BeforeLaunch before_for(const KernelDef& def, ArgList args);
// One launch of `ck` on freshly poisoned outputs, compared with the CPU reference.
Status verify(Device& dev, const kernels::BundledKernel& k, kernels::Workload& w, const Config& c,
              const CompiledKernel& ck);
std::unique_ptr<kernels::Workload> make_workload(Device& dev, const kernels::BundledKernel& k,
                                                 const Size& s);
// Compiles configs on up to hardware_concurrency threads (Device::compile is thread-safe).
std::vector<Result<std::unique_ptr<CompiledKernel>>> compile_many(Device& dev,
                                                                  const KernelSource& src,
                                                                  const std::vector<Config>& cs);

// ---- long, interleaved re-timing ---------------------------------------------------------------

struct Contender {
  const CompiledKernel* kernel = nullptr;
  LaunchDims dims;
  std::vector<double> samples;
  Status status;
  SampleStats stats;
  Interval ci;  // 99% distribution-free interval of the median
};

// Warms every contender up, then times them in `rounds` interleaved rounds that together
// spend opts.rep_ms per contender (so slow drift of clocks or of a shared CPU hits all alike).
Status time_interleaved(Device& dev, std::vector<Contender>& cs, ArgList args,
                        const TimingPolicy& opts, int rounds, const BeforeLaunch& before);
// The long budget that re-timings use.
TimingPolicy long_budget(const Options& o);
std::string budget_text(const TimingPolicy& b, int rounds);

std::vector<kernels::BundledKernel> kernels_for(Device& dev, const Options& o);
void print_device(const DeviceInfo& info, const Options& o);
std::ofstream open_out(const Options& o, const std::string& name);
// The --large size of a kernel.
Size large_size(const kernels::BundledKernel& k);

// ---- the subcommands ---------------------------------------------------------------------------

int cmd_racing(const Options& o);   // racing.cpp
int cmd_quality(const Options& o);  // quality.cpp
int cmd_record(const Options& o);   // record.cpp
int cmd_slots(const Options& o);    // slots.cpp

}  // namespace study
