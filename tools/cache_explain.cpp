// `tune cache explain <kernel> <key>`: which level of the lookup serves one key on this device
// (or --for-device): an exact row of the user's database or of a bundle, the device-family
// fallback chain's levels (same device with another toolchain, same architecture, same
// vendor), the nearest key, or the kernel's default configuration, and the configuration it
// serves. The stores are stacked as an application stacks them, and the first levels are the
// library's own lookup (serving_lookup.hpp, shared with `tune bundle explain`).
#include "cache_explain.hpp"
#include "command_error.hpp"

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cli_print.hpp"
#include "open_cli_device.hpp"
#include "serving_lookup.hpp"

namespace tune::cli {
namespace {

using nlohmann::json;

struct CacheExplainArgs {
  std::string kernel, key, db, device_spec, for_device, toolchain;
  std::vector<std::string> bundles;
  bool json = false;
};

// A key's text as KeyBuilder::to_string writes it, "M=4096,N=4096;f16,f16,f32[,heuristics]":
// the key arguments by name, and the rest (buffer types, heuristic values), which a nearest
// key must share.
struct KeyText {
  std::vector<std::pair<std::string, std::int64_t>> args;
  std::string rest;
};

// Empty when `text` is not a key's text; `why` says what is wrong with it.
std::optional<KeyText> parse_key_text(const std::string& text, std::string* why) {
  const std::size_t semi = text.find(';');
  if (semi == std::string::npos) {
    *why = "no ';' between the key arguments and the buffer types";
    return std::nullopt;
  }
  KeyText k;
  k.rest = text.substr(semi + 1);
  const std::string head = text.substr(0, semi);
  for (std::size_t at = 0; at < head.size();) {
    const std::size_t end = std::min(head.find(',', at), head.size());
    const std::string field = head.substr(at, end - at);
    const std::size_t eq = field.find('=');
    std::size_t used = 0;
    std::int64_t v = 0;
    try {
      if (eq != std::string::npos && eq > 0) v = std::stoll(field.substr(eq + 1), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (eq == std::string::npos || eq == 0 || used == 0 || used != field.size() - eq - 1) {
      *why = "'" + field + "' is not name=integer";
      return std::nullopt;
    }
    k.args.emplace_back(field.substr(0, eq), v);
    at = end + 1;
  }
  return k;
}

// The distance the Autotuner's nearest-key search uses (PublishedEntries::nearest): the sum of
// |log2| differences of the key arguments; none for a key with other argument names, buffer
// types or heuristic values.
std::optional<double> key_distance(const KeyText& a, const KeyText& b) {
  if (a.rest != b.rest || a.args.size() != b.args.size()) return std::nullopt;
  double d = 0;
  for (std::size_t i = 0; i < a.args.size(); ++i) {
    if (a.args[i].first != b.args[i].first) return std::nullopt;
    auto lg = [](std::int64_t v) {
      return std::log2(static_cast<double>(std::max<std::int64_t>(v, 1)));
    };
    d += std::fabs(lg(a.args[i].second) - lg(b.args[i].second));
  }
  return d;
}

// The nearest other key of `want`'s kernel source, device and toolchain that holds a decision
// in the stack, and its winner. Served only if that key ran in the same process first.
Served nearest_key(TuningStore* stack, const StoreKey& want, const KeyText& key,
                   std::string* near_key) {
  Served s;
  if (stack == nullptr) return s;
  std::optional<double> best;
  std::set<std::string> seen;
  for (const CacheRow& r : stack->find_rows(CacheFilter{want.kernel, "", want.device})) {
    const StoreKey& k = r.key;
    if (k.source_hash != want.source_hash || k.device != want.device ||
        k.toolchain != want.toolchain || k.key == want.key || !seen.insert(k.key).second)
      continue;
    std::string ignored;
    const std::optional<KeyText> other = parse_key_text(k.key, &ignored);
    const std::optional<double> d = other ? key_distance(key, *other) : std::nullopt;
    if (!d || (best && *d >= *best)) continue;
    const std::string winner = winner_of(k, stack->load(k));
    if (winner.empty()) continue;
    best = d;
    *near_key = k.key;
    s = Served{"nearest key", winner, k.device, r.result.origin};
  }
  return s;
}

// Whether `path` opens and starts as an SQLite file. A read-only store treats any other file as
// empty (with a warning), which an explanation must not do: "no row" would then be a lie.
bool reads_as_sqlite(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char header[16] = {};
  return in.read(header, sizeof header) &&
         std::string(header, sizeof header) == std::string("SQLite format 3\0", 16);
}

// The device and toolchain fingerprints asked about: --for-device, else the device opened.
std::pair<std::string, std::string> target(const CacheExplainArgs& a) {
  if (!a.for_device.empty()) return {a.for_device, a.toolchain};
  const std::unique_ptr<Device> dev = open_cli_device("cache explain", a.device_spec);
  if (!dev) throw CLI::RuntimeError(1);
  return {dev->info().fingerprint(), dev->info().toolchain_fingerprint()};
}

void cmd_cache_explain(CacheExplainArgs a, const std::string& parent_db) {
  if (a.db.empty()) a.db = parent_db;
  std::string why;
  const std::optional<KeyText> key = parse_key_text(a.key, &why);
  if (!key) fail_command("tune cache explain", "malformed key '" + a.key + "': " + why, 2);
  if (!a.db.empty() && !std::filesystem::exists(a.db))
    fail_command("tune cache explain", "database " + a.db + " does not exist", 1);
  const LookupStack ls = open_lookup_stack(a.db, a.bundles);
  if (ls.db && !reads_as_sqlite(ls.db_path))
    fail_command("tune cache explain",
                 "database " + ls.db_path + " is unreadable (damaged, or not a libtune database)",
                 1);
  auto keys = selected_keys(ls, CacheFilter{a.kernel, "", ""});
  if (!keys.ok()) fail_command("tune cache explain", keys.status());
  std::set<std::uint64_t> sources;
  for (const auto& [id, k] : *keys) sources.insert(k.source_hash);
  if (sources.empty())
    fail_command("tune cache explain",
                 "unknown kernel '" + a.kernel + "': no row of it in database " +
                     (ls.db ? ls.db_path : std::string("(none)")) + " or in " +
                     std::to_string(ls.bundles.size()) + " bundles",
                 1);
  const auto [device, toolchain] = target(a);
  json out = json::array();
  for (std::uint64_t source : sources) {
    const StoreKey want{a.kernel, source, a.key, device, toolchain};
    Served sv = served_from_stores(ls.stack.get(), want);
    std::string near;
    if (sv.level.empty()) sv = nearest_key(ls.stack.get(), want, *key, &near);
    if (sv.level.empty()) sv.level = "default config";
    const std::string layer =
        sv.config.empty() ? ""
                          : (sv.origin.empty() ? "database " + ls.db_path : "bundle " + sv.origin);
    if (a.json) {
      out.push_back({{"kernel", a.kernel},
                     {"source_hash", source},
                     {"key", a.key},
                     {"device", device},
                     {"toolchain", toolchain},
                     {"level", sv.level},
                     {"config", sv.config},
                     {"decided_on", sv.decided_on},
                     {"nearest_key", near},
                     {"layer", layer}});
      continue;
    }
    std::printf("%s  key %s  source %016llx\n  on %s\n  toolchain %s\n  served by: %s",
                a.kernel.c_str(), a.key.c_str(), static_cast<unsigned long long>(source),
                device.c_str(), toolchain.c_str(), sv.level.c_str());
    if (!sv.config.empty())
      std::printf(" {%s} from %s, decided on %s", sv.config.c_str(), layer.c_str(),
                  sv.decided_on.c_str());
    if (!near.empty())
      std::printf(
          "\n  (key %s's decision, when that key ran earlier in the process; else the "
          "default config)",
          near.c_str());
    if (sv.level == "default config")
      std::printf(" (the first candidate left after heuristics and pruning)");
    std::printf("\n");
  }
  if (a.json) print_json(out);
}

}  // namespace

void add_cache_explain(CLI::App& cache, std::shared_ptr<const std::string> parent_db) {
  auto args = std::make_shared<CacheExplainArgs>();
  CLI::App* c = cache.add_subcommand(
      "explain",
      "Which level of the lookup serves one key on this device (exact row of the database or "
      "a bundle, same device other toolchain, same architecture, same vendor, nearest key, "
      "default config) and its configuration");
  c->add_option("kernel", args->kernel, "Kernel name")->required();
  c->add_option("key", args->key, "Tuning key text, as `tune cache list` shows it")->required();
  c->add_option("--db", args->db, "The user's database (default: the TUNE_CACHE_DIR one)");
  c->add_option("--bundle", args->bundles, "A bundle, looked up before TUNE_BUNDLES (repeatable)");
  add_device_option(*c, args->device_spec);
  c->add_option("--for-device", args->for_device,
                "A device fingerprint to explain instead of an opened device");
  c->add_option("--toolchain", args->toolchain,
                "With --for-device: its toolchain fingerprint (default none)");
  c->add_flag("--json", args->json, "Machine-readable output");
  c->callback([args, parent_db] { cmd_cache_explain(*args, *parent_db); });
}

}  // namespace tune::cli
