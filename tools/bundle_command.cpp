// `tune bundle`. See bundle_command.hpp.
#include "bundle_command.hpp"

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "cli_print.hpp"
#include "command_error.hpp"
#include "time_text.hpp"
#include "tune/bundle.hpp"
#include "tune/sqlite_store.hpp"

namespace tune::cli {
namespace {

using nlohmann::json;

struct BundleArgs {
  std::string from;                // create: the database
  std::string out;                 // create, merge: -o
  std::vector<std::string> files;  // show (one), verify, merge: inputs
  BundleSelection selection;       // create
  bool json = false;
  std::string db;                    // explain: the user's database (default: TUNE_CACHE_DIR's)
  std::vector<std::string> bundles;  // explain: --bundle, before TUNE_BUNDLES
  CacheFilter filter;                // explain
};

std::string utc_text(std::int64_t unix_time) {
  if (unix_time <= 0) return "-";
  const std::time_t t = static_cast<std::time_t>(unix_time);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
  return buf;
}

std::string margin_text(double margin) {
  if (!std::isfinite(margin)) return "no runner-up";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100.0 * margin);
  return buf;
}

json decision_json(const BundleDecision& d) {
  return {{"kernel", d.key.kernel},
          {"source_hash", d.key.source_hash},
          {"key", d.key.key},
          {"device", d.key.device},
          {"toolchain", d.key.toolchain},
          {"winner", d.winner},
          {"runner_up", d.runner_up},
          {"margin", std::isfinite(d.margin) ? json(d.margin) : json(nullptr)},
          {"winner_stats", stats_json(d.winner_stats)},
          {"measured_unix", d.measured_unix},
          {"winner_verified", d.winner_verified},
          {"rows", d.rows}};
}

json info_json(const BundleInfo& info) {
  json decisions = json::array();
  for (const BundleDecision& d : info.decisions) decisions.push_back(decision_json(d));
  return {{"path", info.path},
          {"libtune_version", info.libtune_version},
          {"created_unix", info.created_unix},
          {"source", info.source},
          {"rows", info.rows},
          {"problems", info.problems},
          {"decisions", decisions}};
}

void print_info(const BundleInfo& info) {
  std::printf("bundle %s: libtune %s, written %s from %s; %zu decisions, %zu rows\n",
              info.path.c_str(), info.libtune_version.c_str(), utc_text(info.created_unix).c_str(),
              info.source.c_str(), info.decisions.size(), info.rows);
  std::vector<std::vector<std::string>> table;
  for (const BundleDecision& d : info.decisions) {
    table.push_back({d.key.kernel, d.key.key, d.key.device, d.key.toolchain, d.winner,
                     time_text(d.winner_stats.median), std::to_string(d.winner_stats.count),
                     d.winner_verified ? "verified" : "not_checked", margin_text(d.margin),
                     d.runner_up.empty() ? "-" : d.runner_up, utc_text(d.measured_unix),
                     std::to_string(d.rows)});
  }
  print_table({"KERNEL", "KEY", "DEVICE", "TOOLCHAIN", "WINNER", "MEDIAN", "SAMPLES", "OUTPUT",
               "MARGIN", "RUNNER-UP", "MEASURED", "ROWS"},
              table);
  for (const std::string& p : info.problems) std::printf("problem: %s\n", p.c_str());
}

void cmd_create(const BundleArgs& a) {
  Result<BundleInfo> info = create_bundle(a.from, a.out, a.selection);
  if (!info.ok()) fail_command("tune bundle", info.status());
  if (a.json) return print_json(info_json(*info));
  std::printf("wrote %s: %zu decisions, %zu rows\n", info->path.c_str(), info->decisions.size(),
              info->rows);
}

void cmd_show(const BundleArgs& a) {
  Result<BundleInfo> info = read_bundle(a.files.front());
  if (!info.ok()) fail_command("tune bundle", info.status());
  if (a.json) return print_json(info_json(*info));
  print_info(*info);
}

// Every file is read; the command fails when one is unusable or has a problem.
void cmd_verify(const BundleArgs& a) {
  int bad = 0;
  json out = json::array();
  for (const std::string& f : a.files) {
    Result<BundleInfo> info = read_bundle(f);
    const bool whole = info.ok() && info->problems.empty();
    bad += whole ? 0 : 1;
    if (a.json) {
      out.push_back({{"path", f},
                     {"ok", whole},
                     {"error", info.ok() ? json(nullptr) : json(info.status().to_string())},
                     {"problems", info.ok() ? json(info->problems) : json::array()}});
      continue;
    }
    if (!info.ok()) {
      std::printf("%s: FAILED: %s\n", f.c_str(), info.status().to_string().c_str());
      continue;
    }
    std::printf("%s: %s: %zu decisions, %zu rows, content checksum ok%s\n", f.c_str(),
                whole ? "ok" : "FAILED", info->decisions.size(), info->rows,
                whole ? "" : ", rows that fail the row checks:");
    for (const std::string& p : info->problems) std::printf("  %s\n", p.c_str());
  }
  if (a.json) print_json(out);
  if (bad > 0)
    fail_command("tune bundle",
                 std::to_string(bad) + " of " + std::to_string(a.files.size()) +
                     " bundles failed verification",
                 1);
}

void cmd_merge(const BundleArgs& a) {
  Result<BundleInfo> info = merge_bundles(a.files, a.out);
  if (!info.ok()) fail_command("tune bundle", info.status());
  if (a.json) return print_json(info_json(*info));
  std::printf("wrote %s: %zu decisions, %zu rows from %zu bundles\n", info->path.c_str(),
              info->decisions.size(), info->rows, a.files.size());
}

void add_create(CLI::App& bundle, const std::shared_ptr<BundleArgs>& args) {
  CLI::App* c = bundle.add_subcommand(
      "create", "Write a bundle of a database's decisions: each key with an ok row, all its rows");
  c->add_option("--from", args->from, "The tuning database (read, never modified)")->required();
  c->add_option("-o,--output", args->out, "The bundle to write (replaced whole)")->required();
  c->add_option("--kernel", args->selection.kernels, "Only this kernel (repeatable)");
  c->add_option("--device", args->selection.devices,
                "Only devices whose fingerprint contains this text (repeatable)");
  c->add_flag("--json", args->json, "Machine-readable output");
  c->callback([args] { cmd_create(*args); });
}

}  // namespace

// Defined in bundle_explain.cpp.
void add_bundle_explain(CLI::App& bundle);

void add_bundle_command(CLI::App& app) {
  auto args = std::make_shared<BundleArgs>();
  CLI::App* bundle = app.add_subcommand(
      "bundle", "Read-only files of tuning decisions shipped with an application");
  bundle->require_subcommand(1);
  add_create(*bundle, args);

  CLI::App* show = bundle->add_subcommand(
      "show", "Each decision: winner, timing, margin over the runner-up, provenance");
  show->add_option("file", args->files, "The bundle")->required()->expected(1);
  show->add_flag("--json", args->json, "Machine-readable output");
  show->callback([args] { cmd_show(*args); });

  CLI::App* verify = bundle->add_subcommand(
      "verify", "Check bundles whole: format, pages, content checksum, every row's checks");
  verify->add_option("files", args->files, "Bundles")->required();
  verify->add_flag("--json", args->json, "Machine-readable output");
  verify->callback([args] { cmd_verify(*args); });

  CLI::App* merge = bundle->add_subcommand(
      "merge",
      "One bundle of several: every device's rows kept, the better row of one "
      "configuration kept; idempotent");
  merge->add_option("-o,--output", args->out, "The bundle to write (may be an input)")->required();
  merge->add_option("inputs", args->files, "Bundles to merge")->required();
  merge->add_flag("--json", args->json, "Machine-readable output");
  merge->callback([args] { cmd_merge(*args); });

  add_bundle_explain(*bundle);
}

}  // namespace tune::cli
