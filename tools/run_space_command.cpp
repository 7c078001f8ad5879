// `tune run-space`. See run_space_command.hpp.
#include "run_space_command.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "command_error.hpp"
#include "convergence.hpp"
#include "effort_option.hpp"
#include "html_report.hpp"
#include "open_cli_device.hpp"
#include "progress_line.hpp"
#include "space/space_args.hpp"
#include "space/space_kernel.hpp"
#include "time_text.hpp"
#include "tune/tune.hpp"

namespace tune::cli {
namespace {

using nlohmann::json;

struct RunArgs {
  std::string file;
  std::string device;
  bool list = false;
  bool no_cache = false;
  bool quick = false;
  Effort effort = Effort::standard;
  std::string report;
};

json dim_json(const Dim3& d) { return json::array({d.x, d.y, d.z}); }

// --list: the KernelDef as JSON, for people and tests.
int list_space(const SpaceFile& space, const KernelDef& def) {
  json sig = json::array();
  for (const auto& d : def.signature.decls())
    sig.push_back({{"name", d.name},
                   {"kind", d.kind == ArgKind::buffer ? "buffer" : "scalar"},
                   {"type", std::string(to_string(d.type))}});
  auto counts = argument_counts(space);
  if (!counts.ok()) return command_failed("tune run-space", counts.status().message());
  json configs = json::array();
  std::string error;
  const DeviceInfo any;  // T1 conditions do not read the device
  def.space.for_each(any, [&](std::uint64_t, const Config& c) {
    auto d = space_launch_dims(space, c);
    if (!d.ok()) {
      error = c.to_string() + ": " + d.status().message();
      return false;
    }
    configs.push_back(
        {{"config", c.to_string()}, {"block", dim_json(d->block)}, {"grid", dim_json(d->grid)}});
    return true;
  });
  if (!error.empty()) return command_failed("tune run-space", error);
  const json out = {{"kernel", def.name},
                    {"language", std::string(to_string(def.sources.front().language))},
                    {"signature", sig},
                    {"counts", *counts},
                    {"points", def.space.raw_size()},
                    {"valid", configs.size()},
                    {"configs", configs}};
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}

void print_results(const TuningReport& report) {
  auto rows = report.results;
  std::stable_sort(rows.begin(), rows.end(), [](const ConfigResult& a, const ConfigResult& b) {
    return a.stats.median < b.stats.median;
  });
  std::printf("   %-60s %11s  %s\n", "config", "median", "status");
  for (const auto& r : rows) {
    std::string status = r.status.ok() ? (r.raced_out ? "raced out" : "ok") : r.status.to_string();
    if (r.from_store) status += " (stored)";
    if (status.size() > 90) status = status.substr(0, 87) + "...";
    std::printf(" %c %-60s %11s  %s\n", r.config == report.winner ? '*' : ' ',
                r.config.to_string().c_str(),
                r.status.ok() ? time_text(r.stats.median).c_str() : "-", status.c_str());
  }
  if (const std::string text = convergence_text(report); !text.empty())
    std::printf("%s\n", text.c_str());
}

int run_space(const SpaceFile& space, const KernelDef& def, const RunArgs& a) {
  std::unique_ptr<Device> dev = open_cli_device("run-space", a.device);
  if (!dev) return 1;
  const DeviceInfo& info = dev->info();
  if (def.source_for(dev->language()) == nullptr)
    return command_failed("tune run-space", "KernelSpecification.Language: " + space.language +
                                                " kernels do not run on " + info.backend + " (" +
                                                info.name + "); choose another --device");
  std::printf("device : %s (%s, %s)\nkernel : %s from %s\n", info.name.c_str(),
              info.backend.c_str(), info.arch.c_str(), def.name.c_str(), space.kernel_file.c_str());
  auto args = make_space_args(space, *dev);
  if (!args.ok()) return command_failed("tune run-space", args.status().to_string());

  AutotunerOptions opts;
  opts.persistent = !a.no_cache;
  opts.effort = a.effort;
  if (a.quick) {
    opts.bench.warmup_ms = 2;
    opts.bench.rep_ms = 10;
  }
  TuningReport report;
  bool have_report = false;
  opts.listener = [&](const TuningReport& r) {
    report = r;
    have_report = true;
  };
  std::vector<ProgressPoint> points;
  ProgressLine* live = nullptr;
  opts.progress = [&live, &points](const TuningProgress& p) {
    points.push_back({p.elapsed_ms, p.best_ns, p.candidates, p.compiled, p.timed, p.raced_out});
    if (live == nullptr) return;
    live->update(p);
    if (p.done) live->done();
  };
  auto tuner = Autotuner::make(def, opts);
  if (!tuner.ok()) return command_failed("tune run-space", tuner.status().to_string());
  Result<Config> best = Status(StatusCode::internal, "not tuned");
  {
    ProgressLine progress("tuning " + def.name);
    live = &progress;
    best = (*tuner)->tune(*dev, args->list());
    live = nullptr;
  }
  if (!have_report) {
    auto last = (*tuner)->last_report(*dev, args->list());
    if (last) report = *last, have_report = true;
  }
  int rc = 0;
  if (have_report) print_results(report);
  if (best.ok()) {
    std::printf("chosen: %s\n", best->to_string().c_str());
  } else {
    rc = command_failed("tune run-space", "tuning failed: " + best.status().to_string());
  }
  if (!a.report.empty() && have_report) {
    ReportInput page;
    page.title = "libtune tuning of " + def.name + " (Kernel Tuner T1) on " + info.name;
    page.identity = report_identity(info);
    ReportKey key;
    key.report = report;
    key.toolchain = info.toolchain_fingerprint();
    key.measured = true;
    key.progress = points;
    page.keys.push_back(std::move(key));
    std::ofstream out(a.report, std::ios::binary | std::ios::trunc);
    out << html_report(page);
    out.close();
    if (!out)
      rc = command_failed("tune run-space", "cannot write the report " + a.report);
    else
      std::printf("report: %s\n", a.report.c_str());
  }
  tuner->reset();  // before the arguments' buffers and the device
  return rc;
}

int cmd_run_space(const RunArgs& a) {
  auto space = read_space_file(a.file);
  if (!space.ok()) return command_failed("tune run-space", space.status().message());
  auto def = kernel_def_from_space(*space);
  if (!def.ok()) return command_failed("tune run-space", def.status().message());
  return a.list ? list_space(*space, *def) : run_space(*space, *def, a);
}

}  // namespace

void add_run_space_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand(
      "run-space", "Tune the kernel of a space file (from tune import-space) on a device");
  cmd->add_option("file", args->file, "The space file")->required();
  add_device_option(*cmd, args->device);
  cmd->add_flag("--list", args->list,
                "print the kernel's signature and every valid point with its block and grid "
                "(JSON), without a device");
  cmd->add_flag("--no-cache", args->no_cache, "do not read or write the tuning cache");
  cmd->add_flag("--quick", args->quick, "short timing budgets");
  add_effort_option(*cmd, args->effort);
  cmd->add_option("--report", args->report, "write the HTML report of the tuning into this file");
  cmd->callback([args] {
    const int rc = cmd_run_space(*args);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace tune::cli
