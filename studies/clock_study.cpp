// clock_study: how a device's clock follows the load libtune puts on it, measured through
// tune::Device::time() alone (no vendor clock API), so the same run works on every backend.
// Issue 3: NVIDIA's Vulkan driver idles the H200's SM clock at 345 MHz between short bursts
// of work; this measures how long sustained work takes to bring it up, how long a pause
// takes to drop it, and which settling budget time_kernel needs.
//
//   clock_study [--device SPEC] [--n ELEMS] [--config TEXT] [--idle-s S] [--out FILE]
//               [--phases ramp,gap,duty,settle]
//
// Kernel: the bundled vector_add at n elements (default 2^26), config TEXT (default: the
// kernel's default config). Phases, each after `idle-s` seconds of host sleep (ramp always
// runs: it measures the full-clock reference the others are compared with):
//   ramp   back-to-back time() batches of ~1 ms for 1.5 s: per batch, wall and device ms since
//          the load began and the batch median (all rows in --out, a TSV);
//   gap    with the clock up (300 ms of batches), a host pause of G ms, then one batch:
//          its median against the full-clock median;
//   duty   cycles of B ms busy / I ms idle for 2 s: the median of the last second's batches;
//   settle time_kernel with the device's own settling window (DeviceInfo::clock_settle_ms)
//          and with settle_window_ms in {0, 100, 200, 300, 400}: the median it reports
//          against the full-clock median, and its wall time.
// Prints markdown tables; progress on stderr.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "stats.hpp"
#include "study_exit.hpp"
#include "tune/kernels/bundled.hpp"
#include "tune/tune.hpp"

namespace {

using namespace tune;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

using study::die;
using study::must;

void sleep_ms(double ms) {
  std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
}

struct Rig {
  Device* dev = nullptr;
  const CompiledKernel* kernel = nullptr;
  LaunchDims dims;
  ArgList args;
  // One time() call of `reps` launches (L2 flushed before each, as tuning does): median ns.
  double batch(int reps) const {
    TimingPlan plan;
    plan.reps = reps;
    auto t = must(dev->time(*kernel, dims, args, plan), "time");
    return summarize(t).median;
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::string spec, config_text, out_path = "clock_study.tsv";
  std::int64_t n = std::int64_t{1} << 26;
  double idle_s = 4.0;
  std::string phases = "ramp,gap,duty,settle";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "clock_study: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--device") {
      spec = value();
    } else if (a == "--n") {
      n = std::atoll(value().c_str());
    } else if (a == "--config") {
      config_text = value();
    } else if (a == "--idle-s") {
      idle_s = std::atof(value().c_str());
    } else if (a == "--out") {
      out_path = value();
    } else if (a == "--phases") {
      phases = value();
    } else {
      std::fprintf(stderr,
                   "usage: clock_study [--device SPEC] [--n ELEMS] [--config TEXT] [--idle-s S] "
                   "[--out FILE] [--phases ramp,gap,duty,settle]\n");
      return 2;
    }
  }
  auto dev = must(open_device(spec), "open_device");
  const DeviceInfo& info = dev->info();
  const kernels::BundledKernel* k = nullptr;
  const auto all = kernels::bundled_kernels(dev->language());
  for (const auto& b : all)
    if (b.name == "vector_add") k = &b;
  if (k == nullptr) die("vector_add", Status(StatusCode::not_found, "not built for this device"));
  const Config config =
      config_text.empty() ? k->default_config : must(Config::parse(config_text), "--config");
  auto w = k->workload(std::vector<std::int64_t>{n});
  if (Status s = w->setup(*dev, 7); !s.ok()) die("setup", s);
  auto ck = must(dev->compile(*k->def.source_for(dev->language()), config), "compile");
  Rig rig{dev.get(), ck.get(), k->def.dims(config, w->args()), w->args()};
  if (Status s = dev->launch(*ck, rig.dims, rig.args); !s.ok()) die("launch", s);
  if (Status s = w->check(*dev); !s.ok()) die("output", s);

  std::printf("# clock_study: %s (%s), vector_add n=%lld {%s}\n\n", info.name.c_str(),
              info.backend.c_str(), static_cast<long long>(n), config.to_string().c_str());
  std::ofstream tsv(out_path);
  tsv << "phase\tparam\twall_ms\tdevice_ms\tbatch_median_us\n";

  // Full clock: the best batch median seen after 1.5 s of sustained load (phase ramp).
  const double first = rig.batch(5);
  const int reps_1ms = std::max(1, static_cast<int>(std::lround(1e6 / first)));
  std::fprintf(stderr, "first batch right after device creation: %.1f us\n", first / 1e3);

  // ---- ramp
  std::fprintf(stderr, "ramp: idle %.1f s\n", idle_s);
  sleep_ms(idle_s * 1e3);
  std::vector<std::pair<double, double>> ramp;  // (wall ms, median ns)
  {
    const auto t0 = Clock::now();
    double device_ms = 0;
    while (ms_since(t0) < 1500) {
      const double m = rig.batch(reps_1ms);
      device_ms += m * reps_1ms / 1e6;
      ramp.emplace_back(ms_since(t0), m);
      tsv << "ramp\t" << reps_1ms << "\t" << ramp.back().first << "\t" << device_ms << "\t"
          << m / 1e3 << "\n";
    }
  }
  double full = ramp.back().second;
  for (const auto& [t, m] : ramp)
    if (t > 1000) full = std::min(full, m);
  double up_at = -1;
  for (const auto& [t, m] : ramp) {
    if (m <= full * 1.05) {
      up_at = t;
      break;
    }
  }
  std::printf("| phase | measure | value |\n|---|---|---|\n");
  std::printf("| creation | first batch after device creation | %.1f us (%.2fx full) |\n",
              first / 1e3, first / full);
  std::printf("| ramp | first batch after %.1f s idle | %.1f us (%.2fx full) |\n", idle_s,
              ramp.front().second / 1e3, ramp.front().second / full);
  std::printf("| ramp | full clock (best batch after 1 s of load) | %.1f us |\n", full / 1e3);
  std::printf("| ramp | load until a batch is within 5%% of full | %.0f ms |\n", up_at);

  auto bring_up = [&] {
    const auto t0 = Clock::now();
    while (ms_since(t0) < 300) rig.batch(reps_1ms);
  };

  auto wanted = [&](const char* phase) { return phases.find(phase) != std::string::npos; };

  // ---- gap
  for (double gap : {1.0, 5.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0}) {
    if (!wanted("gap")) break;
    bring_up();
    sleep_ms(gap);
    const double m = rig.batch(3);
    tsv << "gap\t" << gap << "\t0\t0\t" << m / 1e3 << "\n";
    std::printf("| gap | one batch after a %.0f ms pause | %.1f us (%.2fx full) |\n", gap, m / 1e3,
                m / full);
  }

  // ---- duty
  for (auto [busy, idle] :
       {std::pair{25.0, 50.0}, {25.0, 25.0}, {100.0, 100.0}, {5.0, 5.0}, {25.0, 5.0}}) {
    if (!wanted("duty")) break;
    bring_up();
    const auto t0 = Clock::now();
    std::vector<double> late;
    while (ms_since(t0) < 2000) {
      const auto b0 = Clock::now();
      while (ms_since(b0) < busy) {
        const double m = rig.batch(reps_1ms);
        if (ms_since(t0) > 1000) late.push_back(m);
      }
      sleep_ms(idle);
    }
    const double m = late.empty() ? 0 : quantile(late, 0.5);
    tsv << "duty\t" << busy << "/" << idle << "\t0\t0\t" << m / 1e3 << "\n";
    std::printf(
        "| duty | %.0f ms busy / %.0f ms idle, median of the last second | %.1f us "
        "(%.2fx full) |\n",
        busy, idle, m / 1e3, m / full);
  }

  // ---- settle: what time_kernel reports after an idle pause, per settling window
  for (double window : {-1.0, 0.0, 100.0, 200.0, 300.0, 400.0}) {
    if (!wanted("settle")) break;
    sleep_ms(idle_s * 1e3);
    BenchOptions opts;
    opts.expert.settle_window_ms = window;
    const auto t0 = Clock::now();
    auto st = must(time_kernel(*dev, *ck, rig.dims, rig.args, opts), "time_kernel");
    const double wall = ms_since(t0);
    const std::string which =
        window < 0 ? "the device's (" + std::to_string(std::lround(info.clock_settle_ms)) + " ms)"
                   : std::to_string(std::lround(window)) + " ms";
    tsv << "settle\t" << window << "\t" << wall << "\t0\t" << st.median / 1e3 << "\n";
    std::printf(
        "| settle | time_kernel after %.1f s idle, window %s (%.0f ms wall) | %.1f us "
        "(%.2fx full) |\n",
        idle_s, which.c_str(), wall, st.median / 1e3, st.median / full);
  }
  std::printf("\nGB/s at full clock: %.0f\n", w->bytes() / full);
  std::fflush(stdout);
  ck.reset();
  w.reset();
  return 0;
}
