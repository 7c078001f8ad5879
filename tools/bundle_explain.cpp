// `tune bundle explain`: which layer of the lookup (the user's database, or which bundle)
// serves each configuration of a kernel's keys, and the winner the Autotuner would take from
// them. The stack is the library's (stack_stores): the same rows, in the same precedence, as
// a run of the application with these bundles.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "cli_print.hpp"
#include "command_error.hpp"
#include "serving_lookup.hpp"
#include "time_text.hpp"

namespace tune::cli {
namespace {

using nlohmann::json;
struct ExplainArgs {
  CacheFilter filter;
  std::string db;
  std::vector<std::string> bundles;
  std::string for_device;  // --for-device: what the fallback chain gives this fingerprint
  std::string toolchain;   // --toolchain, with --for-device
  bool json = false;
};

// --for-device: for each kernel source and key of the selection, what an Autotuner on that
// device and toolchain serves with a fallback policy: its own decision, else the fallback
// chain's first level that holds one (the nearest key and the default configuration are
// decided at run time, in the process).
void explain_for_device(const ExplainArgs& a, TuningStore* stack,
                        const std::map<KeyId, StoreKey>& keys) {
  std::set<std::tuple<std::string, std::uint64_t, std::string>> seen;
  json out = json::array();
  for (const auto& [id, k] : keys) {
    if (!seen.emplace(k.kernel, k.source_hash, k.key).second) continue;
    const StoreKey want{k.kernel, k.source_hash, k.key, a.for_device, a.toolchain};
    const Served sv = served_from_stores(stack, want);
    const std::string level =
        sv.level.empty() ? "nearest key or default config (decided at run time)" : sv.level;
    const std::string &config = sv.config, &from = sv.decided_on, &origin = sv.origin;
    if (a.json) {
      out.push_back({{"kernel", k.kernel},
                     {"key", k.key},
                     {"device", a.for_device},
                     {"level", level},
                     {"config", config},
                     {"decided_on", from},
                     {"bundle", origin}});
      continue;
    }
    std::printf("%s  key %s\n  on %s: %s", k.kernel.c_str(), k.key.c_str(), a.for_device.c_str(),
                level.c_str());
    if (!config.empty())
      std::printf(" {%s} decided on %s%s", config.c_str(), from.c_str(),
                  origin.empty() ? "" : (" (bundle " + origin + ")").c_str());
    std::printf("\n");
  }
  if (a.json) print_json(out);
}

void cmd_explain(const ExplainArgs& a) {
  const LookupStack ls = open_lookup_stack(a.db, a.bundles);
  const std::shared_ptr<SqliteStore>& db = ls.db;
  const std::string& db_path = ls.db_path;
  const std::vector<std::string>& bundles = ls.bundles;
  TuningStore* stack = ls.stack.get();
  const std::string mine = "database " + (db ? db_path : std::string("(none)"));
  json out = json::array();
  auto selected = selected_keys(ls, a.filter);
  if (!selected.ok()) fail_command("tune bundle explain", selected.status());
  const std::map<KeyId, StoreKey>& keys = *selected;
  if (!a.for_device.empty()) return explain_for_device(a, stack, keys);
  for (const auto& [id, key] : keys) {
    const std::vector<StoredResult> rows = stack ? stack->load(key) : std::vector<StoredResult>{};
    const std::string winner = winner_of(key, rows);
    std::string winner_layer = "-";
    json jrows = json::array();
    std::vector<std::vector<std::string>> table;
    for (const StoredResult& r : rows) {
      const std::string layer = r.origin.empty() ? mine : "bundle " + r.origin;
      if (r.config == winner) winner_layer = layer;
      const bool ok = r.status == StatusCode::ok;
      table.push_back(
          {r.config, ok ? time_text(r.stats.median) : std::string(to_string(r.status)), layer});
      jrows.push_back({{"config", r.config},
                       {"status", std::string(to_string(r.status))},
                       {"stats", stats_json(r.stats)},
                       {"layer", r.origin.empty() ? "database" : "bundle"},
                       {"origin", r.origin.empty() ? (db ? db_path : "") : r.origin}});
    }
    if (a.json) {
      out.push_back({{"kernel", key.kernel},
                     {"key", key.key},
                     {"device", key.device},
                     {"toolchain", key.toolchain},
                     {"winner", winner},
                     {"served_by", winner_layer},
                     {"rows", jrows}});
      continue;
    }
    std::printf("%s  key %s\n  device %s\n  toolchain %s\n  winner {%s} served by %s\n",
                key.kernel.c_str(), key.key.c_str(), key.device.c_str(), key.toolchain.c_str(),
                winner.c_str(), winner_layer.c_str());
    print_table({"CONFIG", "MEDIAN", "LAYER"}, table);
  }
  if (a.json)
    print_json(out);
  else if (keys.empty())
    std::printf("no decision for %s in %s or in %zu bundles\n", a.filter.kernel.c_str(),
                mine.c_str(), bundles.size());
}

}  // namespace

void add_bundle_explain(CLI::App& bundle) {
  auto args = std::make_shared<ExplainArgs>();
  CLI::App* c = bundle.add_subcommand(
      "explain",
      "Which layer (your database, or which bundle) serves each configuration of a "
      "kernel's keys, and the winner taken from them");
  c->add_option("kernel", args->filter.kernel, "Kernel name")->required();
  c->add_option("--key", args->filter.key, "Only this tuning key (exact text)");
  c->add_option("--device", args->filter.device,
                "Only devices whose fingerprint contains this text");
  c->add_option("--db", args->db, "The user's database (default: the TUNE_CACHE_DIR one)");
  c->add_option("--bundle", args->bundles, "A bundle, looked up before TUNE_BUNDLES (repeatable)");
  c->add_option("--for-device", args->for_device,
                "A device fingerprint: what the fallback chain serves it for each key");
  c->add_option("--toolchain", args->toolchain,
                "With --for-device: its toolchain fingerprint (default none: this device's "
                "decisions show as level 'same device')");
  c->add_flag("--json", args->json, "Machine-readable output");
  c->callback([args] { cmd_explain(*args); });
}

}  // namespace tune::cli
