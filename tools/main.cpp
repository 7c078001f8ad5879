// tune: libtune's command-line program.
//
//   tune devices                      devices of every compiled-in backend
//   tune env                          the environment variables libtune reads, and their values
//   tune demo [--device SPEC] [--kernel NAME] [--quick] [--effort NAME] [--no-cache]
//             [--report FILE]
//                                     tunes the bundled kernels on the default device, prints
//                                     a table per kernel and size, verifies the winner; the
//                                     HTML report of those tunings into FILE
//   tune report ...                   the HTML report of the cache's keys
//   tune import-space <t1.json>       Kernel Tuner's T1 input as a libtune space file
//   tune run-space <space.json>       tunes a space file's kernel on a device (--list: its points)
//   tune export-space <space.json>    a space file written back as T1
//   tune cache ...
//   tune distill <kernel> ...         a few configurations and a decision tree over the key
//                                     fit to the kernel's stored keys (distill_command.hpp)
//   tune bundle ...                   read-only decision files shipped with an application
//   tune record tune <file.jsonl>     the keys a TUNE_RECORD run missed, tuned offline
//
// The research commands (stability, flush-check) are tune-lab's (studies/tune_lab), not here.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "tune/kernels/bundled.hpp"
#include "tune/tune.hpp"

#include "bundle_command.hpp"
#include "cache_command.hpp"
#include "convergence.hpp"
#include "distill_command.hpp"
#include "effort_option.hpp"
#include "export_space_command.hpp"
#include "html_report.hpp"
#include "import_space_command.hpp"
#include "open_cli_device.hpp"
#include "progress_line.hpp"
#include "record_command.hpp"
#include "report_command.hpp"
#include "run_space_command.hpp"

namespace {

using namespace tune;

int cmd_devices() {
  const auto backends = compiled_backends();
  if (backends.empty()) {
    std::printf("no backend is compiled into this build\n");
    return 1;
  }
  int found = 0;
  for (const auto& b : backends) {
    auto list = list_devices(b);
    if (!list.ok()) {
      std::printf("%-7s  unavailable: %s\n", b.c_str(), list.status().message().c_str());
      continue;
    }
    if (list->empty()) std::printf("%-7s  no devices\n", b.c_str());
    for (const auto& d : *list) {
      std::printf("%-7s  %d  %s  (%s)\n", b.c_str(), d.index, d.name.c_str(), d.detail.c_str());
      ++found;
    }
  }
  return found > 0 ? 0 : 1;
}

std::string human_time(double ns) {
  char buf[32];
  if (!std::isfinite(ns)) return "-";
  if (ns < 1e3) {
    std::snprintf(buf, sizeof buf, "%.0f ns", ns);
  } else if (ns < 1e6) {
    std::snprintf(buf, sizeof buf, "%.1f us", ns / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f ms", ns / 1e6);
  }
  return buf;
}

// "123.4 GB/s" for memory-bound kernels, "56.7 GFLOP/s" when flops dominate (T above 1000 G).
std::string throughput(const kernels::Workload& w, double ns) {
  if (!std::isfinite(ns) || ns <= 0) return "-";
  char buf[48];
  const bool compute = w.flops() > 4.0 * w.bytes();
  const double g = (compute ? w.flops() : w.bytes()) / ns;  // per ns = giga per second
  const char* unit = compute ? "FLOP/s" : "B/s";
  if (g >= 1000.0)
    std::snprintf(buf, sizeof buf, "%.1f T%s", g / 1000.0, unit);
  else
    std::snprintf(buf, sizeof buf, "%.1f G%s", g, unit);
  return buf;
}

struct DemoOptions {
  std::string device;
  std::string kernel;
  bool quick = false;
  bool no_cache = false;
  Effort effort = Effort::standard;
  std::string report;  // the HTML report's file; empty: none
};

// The bundled kernels the demo tunes on `info`: the one named, else every one that offers a
// configuration there (the sm_90 wgmma matmuls are left out elsewhere, and said so).
std::vector<kernels::BundledKernel> demo_kernels(Language language, const DeviceInfo& info,
                                                 const std::string& name) {
  std::vector<kernels::BundledKernel> ks;
  for (auto& k : kernels::bundled_kernels(language)) {
    if (!name.empty() && k.name != name) continue;
    if (name.empty() && !kernels::offered_on(k, info)) {
      std::printf("(%s: no configuration for %s; left out)\n", k.name.c_str(), info.arch.c_str());
      continue;
    }
    ks.push_back(std::move(k));
  }
  return ks;
}

// Every configuration's median, throughput and status (the winner starred), fastest first,
// then where the result came from and the search's convergence.
void print_demo_table(const TuningReport& report, const kernels::Workload& w, double wall_s) {
  auto rows = report.results;
  std::stable_sort(rows.begin(), rows.end(), [](const ConfigResult& a, const ConfigResult& b) {
    return a.stats.median < b.stats.median;
  });
  std::printf("   %-52s %11s %14s  %s\n", "config", "median", "throughput", "status");
  for (const auto& r : rows) {
    std::string status = r.status.ok() ? (r.raced_out ? "raced out" : "ok") : r.status.to_string();
    if (r.from_store) status += " (stored)";
    if (status.size() > 70) status = status.substr(0, 67) + "...";
    const bool win = r.config == report.winner;
    std::printf(" %c %-52s %11s %14s  %s\n", win ? '*' : ' ', r.config.to_string().c_str(),
                r.status.ok() ? human_time(r.stats.median).c_str() : "-",
                r.status.ok() ? throughput(w, r.stats.median).c_str() : "-", status.c_str());
  }
  std::printf("   source: %s, %zu candidates (%zu pruned)%s, %.2f s\n",
              std::string(to_string(report.source)).c_str(), report.results.size(), report.pruned,
              report.partial ? ", partial" : "", wall_s);
  if (const std::string text = cli::convergence_text(report); !text.empty())
    std::printf("   %s\n", text.c_str());
}

// The winner launched afresh on poisoned outputs, checked against the CPU reference.
Status verify_demo_winner(Autotuner& tuner, const kernels::BundledKernel& k, kernels::Workload& w,
                          Device& dev) {
  Status v = w.poison_outputs(dev);
  if (v.ok()) v = k.def.zero_reset_buffers(dev, w.args());
  if (v.ok()) v = tuner.run(dev, w.args());
  if (v.ok()) v = w.check(dev);
  return v;
}

// Writes the HTML report to `path`; false, with a message, when it cannot.
bool write_demo_report(const std::string& path, const cli::ReportInput& page) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << cli::html_report(page);
  out.close();
  if (!out) {
    std::fprintf(stderr, "tune demo: cannot write the report %s\n", path.c_str());
    return false;
  }
  std::printf("\nreport: %s\n", path.c_str());
  return true;
}

// What one tuning of the demo reports to it: the last report and the progress points.
struct DemoTuning {
  TuningReport report;
  bool have_report = false;
  cli::ProgressLine* live = nullptr;       // the live line of the size being tuned, if any
  std::vector<cli::ProgressPoint> points;  // best-so-far of that size, for the HTML report
};

// The demo's tuner options: the CLI's effort and cache choice, reporting into `t`.
AutotunerOptions demo_options(const DemoOptions& o, DemoTuning& t) {
  AutotunerOptions opts;
  opts.persistent = !o.no_cache;
  opts.effort = o.effort;
  if (o.quick) {
    opts.bench.warmup_ms = 2;
    opts.bench.rep_ms = 10;
  }
  opts.listener = [&t](const TuningReport& r) {
    t.report = r;
    t.have_report = true;
  };
  // The line stops at the tuning's last event, before TUNE_PRINT_AUTOTUNING's report
  // (printed after it) could land in the middle of it.
  opts.progress = [&t](const TuningProgress& p) {
    t.points.push_back({p.elapsed_ms, p.best_ns, p.candidates, p.compiled, p.timed, p.raced_out});
    if (t.live == nullptr) return;
    t.live->update(p);
    if (p.done) t.live->done();
  };
  return opts;
}

// One size of one kernel: tuned with a live line, its table printed, its winner verified.
// Returns whether it succeeded; adds its key to `page` when a report is asked for.
bool demo_one_size(const DemoOptions& o, Device& dev, Autotuner& tuner,
                   const kernels::BundledKernel& k, std::size_t si, DemoTuning& t,
                   const std::string& step, cli::ReportInput& page) {
  auto w = k.workload(k.demo_sizes[si]);
  const Status setup = w->setup(dev, 42 + si);
  std::printf("\n== %s  %s  (%.3g MFLOP, %.3g MB)\n", k.name.c_str(), w->size_text().c_str(),
              w->flops() / 1e6, w->bytes() / 1e6);
  if (!setup.ok()) {
    std::printf("   setup failed: %s\n", setup.to_string().c_str());
    return false;
  }
  t.have_report = false;
  t.points.clear();
  Result<Config> best = Status(StatusCode::internal, "not tuned");
  double wall_s = 0;
  {
    cli::ProgressLine progress(step + " tuning " + k.name + " " + w->size_text());
    t.live = &progress;
    best = tuner.tune(dev, w->args());
    t.live = nullptr;
    wall_s = progress.elapsed_s();
  }
  if (!t.have_report) {
    auto last = tuner.last_report(dev, w->args());
    if (last) t.report = *last, t.have_report = true;
  }
  if (t.have_report && !o.report.empty()) {
    cli::ReportKey key;
    key.report = t.report;
    key.toolchain = dev.info().toolchain_fingerprint();
    key.measured = true;
    key.progress = t.points;
    page.keys.push_back(std::move(key));
  }
  if (t.have_report) print_demo_table(t.report, *w, wall_s);
  if (!best.ok()) {
    std::printf("   tuning failed: %s\n", best.status().to_string().c_str());
    return false;
  }
  std::printf("   chosen: %s\n", best->to_string().c_str());
  if (Status v = verify_demo_winner(tuner, k, *w, dev); !v.ok()) {
    std::printf("   VERIFICATION FAILED: %s\n", v.to_string().c_str());
    return false;
  }
  std::printf("   verified: output matches the CPU reference\n");
  return true;
}

int cmd_demo(const DemoOptions& o) {
  std::unique_ptr<Device> dev = cli::open_cli_device("demo", o.device);
  if (!dev) return 1;
  const DeviceInfo& info = dev->info();
  std::printf("device : %s (%s, %s, driver %s)\n", info.name.c_str(), info.backend.c_str(),
              info.arch.c_str(), info.driver_version.c_str());
  std::printf("compiler: %s\n", info.compiler_version.c_str());
  const std::vector<kernels::BundledKernel> ks = demo_kernels(dev->language(), info, o.kernel);
  if (ks.empty()) {
    std::fprintf(stderr, "tune demo: no bundled kernel%s%s for %s\n",
                 o.kernel.empty() ? "" : " named ", o.kernel.c_str(), info.backend.c_str());
    return 1;
  }
  cli::ReportInput page;
  page.title = "libtune demo tuning on " + info.name;
  page.identity = cli::report_identity(info);
  int total = 0, step = 0, failures = 0;
  for (const auto& k : ks) total += o.quick ? 1 : static_cast<int>(k.demo_sizes.size());

  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& k : ks) {
    DemoTuning t;
    auto tuner = Autotuner::make(k.def, demo_options(o, t));
    if (!tuner.ok()) {
      std::printf("\n%s: %s\n", k.name.c_str(), tuner.status().to_string().c_str());
      ++failures;
      continue;
    }
    const std::size_t nsizes = o.quick ? 1 : k.demo_sizes.size();
    for (std::size_t si = 0; si < nsizes; ++si) {
      const std::string counter = "[" + std::to_string(++step) + "/" + std::to_string(total) + "]";
      if (!demo_one_size(o, *dev, **tuner, k, si, t, counter, page)) ++failures;
    }
    tuner->reset();  // before the device
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!o.report.empty() && !write_demo_report(o.report, page)) ++failures;
  std::printf("\n%d kernel/size pairs in %.1f s, %d failure%s\n", total, secs, failures,
              failures == 1 ? "" : "s");
  return failures == 0 ? 0 : 1;
}

// The environment variables libtune reads, what each does, and the value set now.
int cmd_env() {
  for (const auto& v : environment_variables()) {
    const std::string value = env_text(v.name);
    std::printf("%.*s=%s\n    %.*s\n", static_cast<int>(v.name.size()), v.name.data(),
                value.empty() ? "(unset)" : value.c_str(), static_cast<int>(v.effect.size()),
                v.effect.data());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"libtune: autotuning of GPU kernels on CUDA, HIP and Vulkan"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(tune::kVersion));

  auto* devices = app.add_subcommand("devices", "List the devices of every compiled-in backend");
  auto* env = app.add_subcommand("env", "List the environment variables libtune reads");

  DemoOptions demo_opts;
  auto* demo = app.add_subcommand(
      "demo", "Tune the bundled kernels on the default device and verify the winners");
  tune::cli::add_device_option(*demo, demo_opts.device);
  demo->add_option(
      "--kernel", demo_opts.kernel,
      "only this kernel (vector_add, reduce_sum, matmul_f32, matmul_f16, matmul_wgmma_f16, "
      "matmul_wgmma_bf16)");
  demo->add_flag("--quick", demo_opts.quick, "first demo size only, short timing budgets");
  demo->add_flag("--no-cache", demo_opts.no_cache, "do not read or write the tuning cache");
  tune::cli::add_effort_option(*demo, demo_opts.effort);
  demo->add_option("--report", demo_opts.report,
                   "write an HTML report of these tunings (racing, compile and time "
                   "breakdown included) into this file");

  tune::cli::add_cache_command(app);
  tune::cli::add_bundle_command(app);
  tune::cli::add_record_command(app);
  tune::cli::add_report_command(app);
  tune::cli::add_distill_command(app);
  tune::cli::add_import_space_command(app);
  tune::cli::add_run_space_command(app);
  tune::cli::add_export_space_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::RequiredError& e) {
    // CLI11 checks for a missing subcommand before it complains about extra arguments, so a
    // mistyped command ("tune devics", "tune cache lst") would only say "A subcommand is
    // required". Name the word it did not know instead.
    const std::vector<std::string> extra = app.remaining(true);
    if (extra.empty() || std::string(e.what()).find("subcommand") == std::string::npos)
      return app.exit(e);
    const std::string& word = extra.front();
    std::fprintf(stderr, "tune: unknown %s '%s'; run 'tune --help' for the commands\n",
                 word.rfind('-', 0) == 0 ? "option" : "command", word.c_str());
    return static_cast<int>(CLI::ExitCodes::ExtrasError);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (devices->parsed()) return cmd_devices();
  if (env->parsed()) return cmd_env();
  if (demo->parsed()) return cmd_demo(demo_opts);
  return 0;
}
