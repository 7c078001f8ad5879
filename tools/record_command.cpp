// `tune record`. See record_command.hpp.
#include "record_command.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "command_error.hpp"
#include "effort_option.hpp"
#include "open_cli_device.hpp"
#include "space/space_file.hpp"
#include "space/space_kernel.hpp"
#include "time_text.hpp"
#include "tune/autotuner.hpp"
#include "tune/bundle.hpp"
#include "tune/kernels/bundled.hpp"
#include "tune/record.hpp"
#include "tune/sqlite_store.hpp"

namespace tune::cli {
namespace {

struct RecordArgs {
  std::string file;
  std::string device;
  std::string db;                   // empty: the user's database
  std::string bundle;               // empty: no bundle written
  std::vector<std::string> spaces;  // --space: space files whose kernels it tunes too
  bool quick = false;
  Effort effort = Effort::standard;
};

// The offline tuner's options: tune every key (whatever TUNE_FALLBACK or TUNE_STRICT say: this
// is the place that tunes), into `db` or the user's database, each tuning printed.
AutotunerOptions offline_options(const RecordArgs& a) {
  AutotunerOptions opts;
  opts.effort = a.effort;
  if (a.quick) {
    opts.bench.warmup_ms = 2;
    opts.bench.rep_ms = 10;
  }
  if (!a.db.empty()) opts.store = SqliteStore::open(a.db);
  opts.fallback = FallbackPolicy::tune;
  opts.strict = false;
  opts.listener = [](const TuningReport& r) {
    if (!r.status.ok()) return;  // tune_recorded reports it among the skipped
    std::printf("tuned %s {%s}: %s, %zu candidates, %s\n", r.kernel.c_str(), r.key.c_str(),
                r.winner.to_string().c_str(), r.results.size(), time_text(r.wall_ms * 1e6).c_str());
  };
  return opts;
}

// The kernels the command can build: the bundled kernels of `lang`, then each --space file's.
Status offline_kernels(const RecordArgs& a, Language lang, std::vector<KernelDef>* defs) {
  for (kernels::BundledKernel& k : kernels::bundled_kernels(lang))
    defs->push_back(std::move(k.def));
  for (const std::string& path : a.spaces) {
    Result<SpaceFile> space = read_space_file(path);
    if (!space.ok()) return space.status();
    Result<KernelDef> def = kernel_def_from_space(*space);
    if (!def.ok()) return Status(def.status()).with_context("space file " + path);
    defs->push_back(std::move(*def));
  }
  return {};
}

// Writes the bundle of `dev`'s decisions of `defs`' kernels in the database the tunings went to.
int write_bundle(const RecordArgs& a, const Device& dev, const std::vector<KernelDef>& defs) {
  const std::string db = a.db.empty() ? default_cache_path() : a.db;
  if (db.empty())
    return command_failed("tune record tune",
                          "--bundle: no database to read (TUNE_CACHE is off; give --db)");
  BundleSelection selection;
  for (const KernelDef& d : defs) selection.kernels.push_back(d.name);
  selection.devices = {dev.info().fingerprint()};
  Result<BundleInfo> info = create_bundle(db, a.bundle, selection);
  if (!info.ok())
    return command_failed("tune record tune", "--bundle: " + info.status().to_string());
  std::printf("wrote %s: %zu decisions, %zu rows\n", info->path.c_str(), info->decisions.size(),
              info->rows);
  return 0;
}

int cmd_record_tune(const RecordArgs& a) {
  std::unique_ptr<Device> dev = open_cli_device("record tune", a.device);
  if (!dev) return 1;
  const DeviceInfo& info = dev->info();
  std::printf("device : %s (%s)\n", info.name.c_str(), info.fingerprint().c_str());
  std::vector<KernelDef> defs;
  if (Status st = offline_kernels(a, dev->language(), &defs); !st.ok())
    return command_failed("tune record tune", st.to_string());
  std::string names;
  for (const KernelDef& d : defs) names += (names.empty() ? "" : ", ") + d.name;
  std::printf(
      "kernels: %s (the bundled kernels in %s and --space files; others are tuned by "
      "the application, with tune::tune_recorded)\n",
      names.empty() ? "none" : names.c_str(), std::string(to_string(dev->language())).c_str());
  int rc = 0;
  {
    std::vector<std::unique_ptr<Autotuner>> tuners;
    std::vector<Autotuner*> list;
    for (const KernelDef& d : defs) {
      auto t = Autotuner::make(d, offline_options(a));
      if (!t.ok()) return command_failed("tune record tune", t.status().to_string());
      list.push_back(t->get());
      tuners.push_back(std::move(*t));
    }
    Result<RecordTuning> done = tune_recorded(a.file, *dev, std::span<Autotuner* const>(list));
    if (!done.ok()) return command_failed("tune record tune", done.status().to_string());
    for (const std::string& why : done->skipped) std::printf("not tuned: %s\n", why.c_str());
    std::printf("%zu tuned, %zu not tuned\n", done->tuned, done->skipped.size());
    if (!a.bundle.empty() && done->tuned > 0) rc = write_bundle(a, *dev, defs);
    if (!a.bundle.empty() && done->tuned == 0)
      std::printf("no bundle written: no key of %s was tuned\n", a.file.c_str());
    if (rc == 0 && !done->skipped.empty())
      rc = command_failed("tune record tune", std::to_string(done->skipped.size()) +
                                                  " lines or keys of " + a.file +
                                                  " were not tuned (listed above)");
    for (auto& t : tuners) t.reset();  // before the device
  }
  return rc;
}

}  // namespace

void add_record_command(CLI::App& app) {
  auto args = std::make_shared<RecordArgs>();
  CLI::App* record = app.add_subcommand(
      "record", "Keys missed in production (TUNE_RECORD), tuned offline on this device");
  record->require_subcommand(1);
  CLI::App* tune = record->add_subcommand(
      "tune", "Tune each recorded key of a bundled kernel; print each line not tuned and why");
  tune->add_option("file", args->file, "The record (JSON lines, as TUNE_RECORD writes them)")
      ->required();
  add_device_option(*tune, args->device);
  tune->add_option("--db", args->db,
                   "The database the results go to (default: the user's, as any program's)");
  tune->add_option("--bundle", args->bundle,
                   "Then write this device's decisions of the bundled kernels in that database "
                   "as this bundle (replaced whole)");
  tune->add_option("--space", args->spaces,
                   "A space file (tune import-space) whose kernel it tunes too (repeatable)");
  tune->add_flag("--quick", args->quick, "short timing budgets");
  add_effort_option(*tune, args->effort);
  tune->callback([args] {
    const int rc = cmd_record_tune(*args);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace tune::cli
