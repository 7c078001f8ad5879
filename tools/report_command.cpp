// `tune report`. See report_command.hpp.
#include "report_command.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "command_error.hpp"
#include "host_text.hpp"
#include "html_report.hpp"
#include "tune/sqlite_store.hpp"
#include "tune/version.hpp"

namespace tune::cli {
namespace {

struct ReportArgs {
  std::string db;  // empty: the default path
  CacheFilter filter;
  std::string out = "report.html";
};

// Adds `value` to the identity row `name` unless it is there already ("a; b" for several).
void add_identity(ReportInput& in, const std::string& name, const std::string& value) {
  for (auto& [n, v] : in.identity) {
    if (n != name) continue;
    if (v != value && v.find(value) == std::string::npos) v += "; " + value;
    return;
  }
  in.identity.emplace_back(name, value);
}

void cmd_report(const ReportArgs& a) {
  const std::string path = a.db.empty() ? default_cache_path() : a.db;
  if (path.empty())
    fail_command("tune report", "no cache path: set TUNE_CACHE_DIR, XDG_CACHE_HOME or HOME");
  SqliteStore::Options opts;
  opts.mode = CacheMode::readonly;
  auto store = SqliteStore::open(path, opts);
  auto rows = store->rows(a.filter);
  if (!rows.ok()) fail_command("tune report", rows.status().to_string());
  if (rows->empty())
    fail_command("tune report",
                 "no tuning results match in " + store->path() + ": nothing to report");

  ReportInput in;
  in.title = "libtune tuning report";
  in.keys = report_keys_from_rows(*rows);
  add_identity(in, "cache", store->path());
  for (const ReportKey& k : in.keys) {
    add_identity(in, "device", k.report.device);
    add_identity(in, "toolchain", k.toolchain);
  }
  add_identity(in, "host", host_os_text());
  add_identity(in, "libtune", std::string(kVersion));

  std::ofstream out(a.out, std::ios::binary | std::ios::trunc);
  out << html_report(in);
  out.close();
  if (!out) fail_command("tune report", "cannot write " + a.out);
  std::printf("wrote %s: %zu key%s\n", a.out.c_str(), in.keys.size(),
              in.keys.size() == 1 ? "" : "s");
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* report =
      app.add_subcommand("report", "Write an HTML report of the tuning cache's keys");
  report->add_option("--db", args->db, "Database file (default: the TUNE_CACHE_DIR one)");
  report->add_option("--kernel", args->filter.kernel, "Only this kernel");
  report->add_option("--device", args->filter.device,
                     "Only devices whose fingerprint contains this text");
  report->add_option("--key", args->filter.key, "Only this tuning key (exact text)");
  report->add_option("--out", args->out, "The HTML file to write (default: report.html)");
  report->callback([args] { cmd_report(*args); });
}

}  // namespace tune::cli
