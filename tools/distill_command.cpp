// `tune distill`. See distill_command.hpp.
#include "distill_command.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <memory>
#include <numeric>
#include <set>
#include <string>

#include "command_error.hpp"
#include "distill/decision_table.hpp"
#include "distill/distill_emit.hpp"
#include "distill/distill_fit.hpp"
#include "tune/sqlite_store.hpp"

namespace tune::cli {
namespace {

struct DistillArgs {
  std::string kernel;
  std::string db;  // empty: the default path
  std::string device;
  int configs = 4;
  bool single = false;
  bool worst = false;
  int depth = 4;
  int min_leaf = 2;
  double holdout = 0;  // 0: leave-one-out
  std::uint64_t seed = 1;
  std::string emit;  // "", "header" or "json"
  std::string out;   // empty: stdout (the summary then goes to stderr)
  std::string ns;    // the header's namespace; empty: distilled_<kernel>
};

// The command line that reproduces this fit, for the emitted files.
std::string command_text(const DistillArgs& a) {
  std::string s = "tune distill " + a.kernel;
  if (!a.device.empty()) s += " --device '" + a.device + "'";
  s += a.single ? std::string(" --single") + (a.worst ? " --worst" : "")
                : " --configs " + std::to_string(a.configs);
  s += " --depth " + std::to_string(a.depth) + " --min-leaf " + std::to_string(a.min_leaf);
  if (a.holdout > 0)
    s += " --holdout " + std::to_string(a.holdout) + " --seed " + std::to_string(a.seed);
  return s;
}

// Why no row of the kernel matched: the kernels the cache does hold.
std::string unknown_kernel_text(SqliteStore& store, const DistillArgs& a) {
  std::set<std::string> kernels;
  if (auto all = store.list_entries(); all.ok())
    for (const CacheEntry& e : *all) kernels.insert(e.key.kernel);
  std::string list;
  for (const auto& k : kernels) list += (list.empty() ? "" : ", ") + k;
  return "unknown kernel '" + a.kernel + "': no stored decision of it" +
         (a.device.empty() ? "" : " on a device matching '" + a.device + "'") + " in " +
         store.path() + (list.empty() ? " (the cache is empty)" : " (kernels there: " + list + ")");
}

void write_output(const DistillArgs& a, const std::string& text) {
  if (a.out.empty() || a.out == "-") {
    std::fputs(text.c_str(), stdout);
    return;
  }
  std::ofstream f(a.out, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f) fail_command("tune distill", "cannot write " + a.out);
}

void cmd_distill(const DistillArgs& a) {
  if (a.configs < 1)
    fail_command("tune distill",
                 "--configs " + std::to_string(a.configs) + ": at least 1 configuration");
  if (a.worst && !a.single)
    fail_command("tune distill", "--worst judges one configuration for every key: add --single");
  if (!a.emit.empty() && a.emit != "header" && a.emit != "json")
    fail_command("tune distill", "--emit '" + a.emit + "': header or json");
  const std::string path = a.db.empty() ? default_cache_path() : a.db;
  if (path.empty())
    fail_command("tune distill", "no cache path: set TUNE_CACHE_DIR, XDG_CACHE_HOME or HOME");
  SqliteStore::Options opts;
  opts.mode = CacheMode::readonly;
  auto store = SqliteStore::open(path, opts);
  CacheFilter filter;
  filter.kernel = a.kernel;
  filter.device = a.device;
  auto rows = store->rows(filter);
  if (!rows.ok()) fail_command("tune distill", rows.status().to_string());
  if (rows->empty()) fail_command("tune distill", unknown_kernel_text(*store, a));
  auto table = distill::decision_table(*rows, a.kernel);
  if (!table.ok()) fail_command("tune distill", table.status().message());

  distill::FitOptions fo;
  fo.configs = static_cast<std::size_t>(a.configs);
  fo.single = a.single;
  fo.objective = a.worst ? distill::Objective::worst : distill::Objective::geomean;
  fo.max_depth = std::max(a.depth, 0);
  fo.min_leaf = static_cast<std::size_t>(std::max(a.min_leaf, 1));
  std::vector<std::size_t> keys(table->keys.size());
  std::iota(keys.begin(), keys.end(), std::size_t{0});
  auto fitted = distill::fit(*table, keys, fo);
  if (!fitted.ok()) fail_command("tune distill", fitted.status().message());

  distill::DistillOutput o;
  o.table = &*table;
  o.fit = &*fitted;
  o.options = fo;
  o.command = command_text(a);
  o.training = distill::evaluate(*table, *fitted, keys);
  o.best_of_set = distill::best_of_set_geomean(*table, *fitted, keys);
  if (table->keys.size() >= 2) {
    auto h = distill::held_out(*table, fo, a.holdout, a.seed);
    if (!h.ok()) fail_command("tune distill", h.status().message());
    o.held_out = std::move(*h);
    o.has_held_out = true;
  }
  // Bundle rows (issue 37) would be emitted here, from o.training.picks, once bundles exist.
  std::string emitted;
  if (a.emit == "header") {
    auto h = distill::header_text(o, a.ns.empty() ? "distilled_" + a.kernel : a.ns);
    if (!h.ok()) fail_command("tune distill", h.status().message());
    emitted = std::move(*h);
  } else if (a.emit == "json") {
    emitted = distill::json_text(o);
  }
  const std::string summary = distill::summary_text(o);
  const bool emit_to_stdout = !a.emit.empty() && (a.out.empty() || a.out == "-");
  std::fputs(summary.c_str(), emit_to_stdout ? stderr : stdout);
  if (!a.emit.empty()) write_output(a, emitted);
  if (!a.emit.empty() && !emit_to_stdout)
    std::printf("wrote %s (%s)\n", a.out.c_str(), a.emit.c_str());
}

}  // namespace

void add_distill_command(CLI::App& app) {
  auto a = std::make_shared<DistillArgs>();
  CLI::App* cmd =
      app.add_subcommand("distill",
                         "Fit a few configurations and a decision tree over the key to a kernel's "
                         "stored decisions (one table for all sizes)");
  cmd->add_option("kernel", a->kernel, "The kernel whose stored keys to distill")->required();
  cmd->add_option("--db", a->db, "Database file (default: the TUNE_CACHE_DIR one)");
  cmd->add_option("--device", a->device, "Only devices whose fingerprint contains this text");
  cmd->add_option("--configs", a->configs, "At most this many configurations (default 4)");
  cmd->add_flag("--single", a->single, "One configuration for every key (no tree)");
  cmd->add_flag("--worst", a->worst,
                "With --single: minimise the worst slowdown instead of the geometric mean");
  cmd->add_option("--depth", a->depth, "The tree's depth limit (default 4)");
  cmd->add_option("--min-leaf", a->min_leaf, "Keys each side of a split keeps (default 2)");
  cmd->add_option("--holdout", a->holdout,
                  "Judge on this fraction of keys held out of the fit (default: leave-one-out)");
  cmd->add_option("--seed", a->seed, "Which keys --holdout draws (default 1)");
  cmd->add_option("--emit", a->emit, "Write the table as 'header' (C++) or 'json'");
  cmd->add_option("--out", a->out, "The file --emit writes (default: stdout)");
  cmd->add_option("--namespace", a->ns, "The header's namespace (default: distilled_<kernel>)");
  cmd->callback([a] { cmd_distill(*a); });
}

}  // namespace tune::cli
