// The `tune` program on the Vulkan backend (label vulkan): `tune devices`, `tune demo` tuning
// for real (on lavapipe unless a device is asked for, see tests/support/vulkan_env.hpp), the
// second run reading the disk cache in a fresh process, and the cache commands on the rows
// that tuning wrote. Every run is a real process with a scratch TUNE_CACHE_DIR.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "chromium.hpp"
#include "python_helpers.hpp"
#include "report_dom.hpp"
#include "skip.hpp"
#include "t4_checks.hpp"
#include "tune_process.hpp"
#include "vulkan_env.hpp"

namespace {

using nlohmann::json;
using tune::testing::ProcessResult;
using tune::testing::ScratchDir;
using tune::testing::TuneCli;
namespace fs = std::filesystem;

// Set before any child is spawned, so every child inherits it.
const bool kOnLavapipe = tune::testing::use_lavapipe_unless_asked();

// The smallest bundled kernel: one size with --quick, 24 configs, about 1.5 s on lavapipe.
const char* const kKernel = "vector_add";

// Skips (fails in CI) when `tune devices` finds no Vulkan device.
void require_vulkan(const TuneCli& cli) {
  if (kOnLavapipe && !fs::exists(tune::testing::kLavapipeIcd)) {
    const std::string why =
        std::string("lavapipe is not installed (") + tune::testing::kLavapipeIcd + ")";
    if (tune::testing::in_ci()) FAIL(why << " (CI runs the Vulkan tests on lavapipe)");
    TUNE_SKIP(why);
  }
  const ProcessResult r = cli.run({"devices"});
  if (r.exit_code != 0 || r.out.find("vulkan   0") == std::string::npos) {
    if (tune::testing::in_ci()) FAIL("no Vulkan device\n" << r.describe());
    TUNE_SKIP("no Vulkan device: " + r.out + r.err);
  }
}

std::vector<std::string> demo_args(std::vector<std::string> extra = {}) {
  std::vector<std::string> a = {"demo", "--device", "vulkan", "--kernel", kKernel, "--quick"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// The value after "label" on its line of the demo's output ("chosen: <config>").
std::string field(const std::string& out, const std::string& label) {
  const std::regex re(label + "\\s*(\\S+)");
  std::smatch m;
  if (!std::regex_search(out, m, re)) return {};
  return m[1].str();
}

json parse_json(const ProcessResult& r) {
  json j = json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  REQUIRE_MESSAGE(!j.is_discarded(), "stdout is not JSON\n" << r.describe());
  return j;
}

json list_json(const TuneCli& cli) {
  const ProcessResult r = cli.run({"cache", "list", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  json j = parse_json(r);
  REQUIRE_MESSAGE(j.is_array(), r.describe());
  return j;
}

// Runs the demo once on an empty cache; checks the table, the winner and the verification.
ProcessResult tune_once(const TuneCli& cli) {
  ProcessResult r = cli.run(demo_args());
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  for (const char* text : {"== vector_add", "config", "median", "throughput", "status",
                           "source: tuned", "chosen: ", "verified: output matches", "0 failures"})
    CHECK_MESSAGE(r.out.find(text) != std::string::npos, "missing '" << text << "'\n"
                                                                     << r.describe());
  // Exactly one row is marked as the winner, and it is the chosen config.
  const std::string chosen = field(r.out, "chosen:");
  REQUIRE_MESSAGE(!chosen.empty(), r.describe());
  CHECK_MESSAGE(r.out.find(" * " + chosen + " ") != std::string::npos, r.describe());
  CHECK_MESSAGE(r.out.find("(stored)") == std::string::npos, r.describe());
  return r;
}

TEST_CASE("tune devices lists the Vulkan device") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  require_vulkan(cli);
  const ProcessResult r = cli.run({"devices"});
  CHECK_MESSAGE(r.exit_code == 0, r.describe());
  if (kOnLavapipe) CHECK_MESSAGE(r.out.find("llvmpipe") != std::string::npos, r.describe());
  CHECK_FALSE(fs::exists(cli.db_path()));
}

TEST_CASE("tune demo tunes, verifies, and a fresh process reads the result from disk") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  require_vulkan(cli);

  const ProcessResult first = tune_once(cli);
  const std::string chosen = field(first.out, "chosen:");
  CHECK(fs::exists(cli.db_path()));
  // Nothing was written under HOME: the cache lives where TUNE_CACHE_DIR says.
  CHECK_FALSE(fs::exists(cli.home() / ".cache"));

  const json list = list_json(cli);
  REQUIRE_MESSAGE(list.size() == 1, list.dump(2));
  CHECK(list[0].at("kernel") == kKernel);
  CHECK(list[0].at("best_config") == chosen);
  CHECK(list[0].at("failed") == 0);
  CHECK(list[0].at("device").get<std::string>().rfind("vulkan|", 0) == 0);

  // Second process: every timing comes from the cache, the winner is the same and verified.
  const ProcessResult second = cli.run(demo_args());
  REQUIRE_MESSAGE(second.exit_code == 0, second.describe());
  CHECK_MESSAGE(second.out.find("source: disk") != std::string::npos, second.describe());
  CHECK_MESSAGE(second.out.find("(stored)") != std::string::npos, second.describe());
  CHECK_MESSAGE(field(second.out, "chosen:") == chosen, second.describe());
  CHECK_MESSAGE(second.out.find("verified: output matches") != std::string::npos,
                second.describe());
  CHECK(list_json(cli) == list);

  // --no-cache neither reads nor writes the cache.
  const ProcessResult third = cli.run(demo_args({"--no-cache"}));
  REQUIRE_MESSAGE(third.exit_code == 0, third.describe());
  CHECK_MESSAGE(third.out.find("source: tuned") != std::string::npos, third.describe());
  CHECK_MESSAGE(third.out.find("(stored)") == std::string::npos, third.describe());
  CHECK(list_json(cli) == list);

  // TUNE_CACHE=off: the same.
  cli.set_env("TUNE_CACHE", "off");
  const ProcessResult fourth = cli.run(demo_args());
  REQUIRE_MESSAGE(fourth.exit_code == 0, fourth.describe());
  CHECK_MESSAGE(fourth.out.find("source: tuned") != std::string::npos, fourth.describe());
}

TEST_CASE("cache commands on tuned rows: list, show, export, clear, import") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  require_vulkan(cli);
  const std::string chosen = field(tune_once(cli).out, "chosen:");

  const json before = list_json(cli);
  REQUIRE(before.size() == 1);
  const std::size_t nrows = before[0].at("rows").get<std::size_t>();
  CHECK(nrows > 1);

  ProcessResult r = cli.run({"cache", "list"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK_MESSAGE(r.out.find(kKernel) != std::string::npos, r.describe());
  CHECK_MESSAGE(r.out.find(chosen) != std::string::npos, r.describe());
  if (kOnLavapipe) CHECK_MESSAGE(r.out.find("llvmpipe") != std::string::npos, r.describe());

  r = cli.run({"cache", "show", kKernel, "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  const json shown = parse_json(r);
  CHECK(shown.size() == nrows);
  REQUIRE_FALSE(shown.empty());
  CHECK(shown[0].at("config") == chosen);  // the winner rule's pick first
  r = cli.run({"cache", "show", kKernel});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK_MESSAGE(r.out.find("CONFIG") != std::string::npos, r.describe());
  CHECK_MESSAGE(r.out.find(chosen) != std::string::npos, r.describe());

  const fs::path file = scratch.path() / "f.json";
  r = cli.run({"cache", "export", file.string()});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  const json doc = json::parse(tune::testing::read_text(file));
  CHECK(doc.at("rows").size() == nrows);

  r = cli.run({"cache", "clear", "--kernel", kKernel});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK_MESSAGE(r.out.find("removed " + std::to_string(nrows) + " rows") != std::string::npos,
                r.describe());
  CHECK(list_json(cli).empty());

  // Import validates each row against the bundled kernel's declared space: all pass.
  r = cli.run({"cache", "import", file.string()});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK_MESSAGE(r.out.find(std::to_string(nrows) + " added") != std::string::npos, r.describe());
  CHECK_MESSAGE(r.out.find("0 rejected") != std::string::npos, r.describe());
  CHECK(list_json(cli) == before);

  // The imported rows serve the next process.
  r = cli.run(demo_args());
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK_MESSAGE(r.out.find("source: disk") != std::string::npos, r.describe());
  CHECK_MESSAGE(field(r.out, "chosen:") == chosen, r.describe());
}

TEST_CASE("cache export --format t4 of a real tuning follows the T4 schemas") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  require_vulkan(cli);
  const std::string chosen = field(tune_once(cli).out, "chosen:");

  const fs::path results = scratch.path() / "t4.json";
  const ProcessResult r =
      cli.run({"cache", "export", "--format", "t4", "--kernel", kKernel, results.string()});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  const ProcessResult shown = cli.run({"cache", "show", kKernel, "--json"});
  REQUIRE_MESSAGE(shown.exit_code == 0, shown.describe());
  const json rows = parse_json(shown);
  REQUIRE(rows.size() > 1);
  tune::testing::check_t4_export(cli, results, scratch.path() / "t4-metadata.json", rows);
  // The winner follows the winner rule (core/src/tuning/winner_rule.hpp) on the file's times:
  // within tie_tolerance (1%) of the fastest correct result, and first in text order among
  // the results in that tie band. It need not be the very fastest: a near-tie goes by text.
  const json doc = json::parse(tune::testing::read_text(results));
  double best = 1e300;
  for (const auto& res : doc.at("results")) {
    const json t = tune::testing::t4_measurement(res, "time");
    if (res.at("invalidity") == "correct") best = std::min(best, t.at("value").get<double>());
  }
  const double tie_band = best * 1.01 * (1 + 1e-9);
  const double winner_ms = rows[0].at("stats").at("median").get<double>() / 1e6;
  CHECK(winner_ms >= best * (1 - 1e-9));
  CHECK(winner_ms <= tie_band);
  for (const json& row : rows) {
    const double ms = row.at("stats").at("median").get<double>() / 1e6;
    if (row.at("status") != "ok" || ms > tie_band) continue;
    CHECK_MESSAGE(row.at("config").get<std::string>() >= rows[0].at("config").get<std::string>(),
                  (std::string("a tie-band result first in text order: ") + row.dump()));
  }
  CHECK(rows[0].at("config") == chosen);
}

TEST_CASE("tune demo draws a live progress line on a terminal, none into a pipe") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  require_vulkan(cli);

  // Under a pseudo-terminal: the line with its counts, redrawn with carriage returns, and
  // cleared at the end; TUNE_PRINT_AUTOTUNING's one report starts on the cleared line, or after
  // libtune's warnings that start there (a bucket's edge check may split it on a loaded machine).
  cli.set_env("TUNE_PRINT_AUTOTUNING", "1");
  const ProcessResult tty = tune::testing::run_in_pty(cli, demo_args({"--no-cache"}));
  cli.unset_env("TUNE_PRINT_AUTOTUNING");
  REQUIRE_MESSAGE(tty.exit_code == 0, tty.describe());
  const std::regex line(
      R"(\r[|/\\-] \[1/1\] tuning vector_add \S+  (\d+) configs: (\d+) compiled, (\d+) timed, (\d+) raced out, (\d+) failed  best \S+ \S+ \{[^}]*\}  \d+\.\d s)");
  std::smatch m;
  REQUIRE_MESSAGE(std::regex_search(tty.out, m, line), tty.describe());
  CHECK(std::stoi(m[2].str()) <= std::stoi(m[1].str()));
  const std::string report = "[libtune] vector_add key";
  const std::size_t at = tty.out.find(report);
  REQUIRE_MESSAGE(at != std::string::npos, tty.describe());
  CHECK_MESSAGE(tty.out.find(report, at + 1) == std::string::npos, tty.describe());  // once
  const std::size_t cleared = tty.out.rfind("\r\033[K", at);
  REQUIRE_MESSAGE(cleared != std::string::npos, tty.describe());
  std::istringstream between(tty.out.substr(cleared + 4, at - cleared - 4));
  for (std::string l; std::getline(between, l);) {
    CAPTURE(l);
    if (!l.empty() && l.back() == '\r') l.pop_back();
    while (l.starts_with("\033[K")) l.erase(0, 3);
    CHECK((l.empty() || l.starts_with("libtune: warning: ")));  // no progress left on it
  }
  CHECK_MESSAGE(tty.out.find("verified: output matches") != std::string::npos, tty.describe());

  // Into a pipe (stderr a file): no live line, no carriage returns, the one start line only.
  const ProcessResult piped = cli.run(demo_args({"--no-cache"}));
  REQUIRE_MESSAGE(piped.exit_code == 0, piped.describe());
  CHECK_MESSAGE(piped.err.find("configs:") == std::string::npos, piped.describe());
  CHECK_MESSAGE(piped.err.find('\r') == std::string::npos, piped.describe());
  CHECK_MESSAGE(piped.err.find("[1/1] tuning vector_add") != std::string::npos, piped.describe());
}

TEST_CASE("tune demo --report: the page of a real tuning renders in headless Chromium") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  require_vulkan(cli);
  const std::string chromium = tune::testing::require_chromium();
  const fs::path page = scratch.path() / "report.html";
  const ProcessResult tuned = cli.run(demo_args({"--report", page.string()}));
  REQUIRE_MESSAGE(tuned.exit_code == 0, tuned.describe());
  CHECK_MESSAGE(tuned.out.find("report: " + page.string()) != std::string::npos, tuned.describe());
  const std::string chosen = field(tuned.out, "chosen:");

  // The rows the tuning stored are the ones the page shows (the tuning measured them all).
  const ProcessResult shown = cli.run({"cache", "show", kKernel, "--json"});
  REQUIRE_MESSAGE(shown.exit_code == 0, shown.describe());
  const json rows = parse_json(shown);
  REQUIRE(rows.size() > 1);

  const std::string html = tune::testing::read_text(page);
  const std::string dom = tune::testing::rendered_dom(cli, chromium, page);
  tune::testing::check_self_contained(html, dom, rows.size());
  using tune::testing::dom_elements;
  using tune::testing::dom_number;

  // Identity: the device the demo printed, its driver and compiler.
  std::map<std::string, std::string> identity;
  for (const auto& tr : dom_elements(dom, "tr"))
    if (tr.count("data-field") != 0) identity[tr.at("data-field")] = "";
  for (const char* f : {"device", "driver", "compiler", "fingerprint", "toolchain", "libtune"})
    CHECK_MESSAGE(identity.count(f) == 1, f);
  if (kOnLavapipe) CHECK(dom.find("llvmpipe") != std::string::npos);
  CHECK(dom.find(rows[0].at("toolchain").get<std::string>()) != std::string::npos);

  auto sections = dom_elements(dom, "section", "key");
  REQUIRE(sections.size() == 1);
  CHECK(sections[0]["data-winner"] == chosen);
  CHECK(sections[0]["data-measured"] == "true");
  CHECK(sections[0]["data-key"] == rows[0].at("key"));

  // Every stored row is a candidate row with the same numbers; exactly one winner.
  const auto cands = dom_elements(dom, "tr", "cand");
  REQUIRE(cands.size() == rows.size());
  std::size_t winners = 0;
  double winner_ns = 0;
  for (const json& row : rows) {
    const std::string config = row.at("config");
    CAPTURE(config);
    std::size_t found = 0;
    for (auto c : cands) {
      if (c["data-config"] != config) continue;
      ++found;
      if (row.at("status") != "ok") {
        CHECK(c["data-state"] == "failed");
        continue;
      }
      const json& st = row.at("stats");
      CHECK(dom_number(c, "data-median-ns") == doctest::Approx(st.at("median").get<double>()));
      CHECK(dom_number(c, "data-p20-ns") == doctest::Approx(st.at("p20").get<double>()));
      CHECK(dom_number(c, "data-p80-ns") == doctest::Approx(st.at("p80").get<double>()));
      CHECK(dom_number(c, "data-n") == st.at("count").get<double>());
      CHECK(dom_number(c, "data-compile-ms") >= 0);
      const std::string state = c["data-state"];
      CHECK_MESSAGE(
          (state == "winner" || state == "ok" || state == "raced-out" || state == "settled"),
          state);
      if (state == "winner") {
        ++winners;
        winner_ns = dom_number(c, "data-median-ns");
        CHECK(config == chosen);
      }
    }
    CHECK(found == 1);
  }
  CHECK(winners == 1);

  // Where the time went: the seven parts, summing to the wall time.
  const auto times = dom_elements(dom, "div", "times");
  REQUIRE(times.size() == 1);
  const auto parts = dom_elements(dom, "tr", "time-part");
  CHECK(parts.size() == 7);
  double sum = 0;
  for (const auto& p : parts) sum += dom_number(p, "data-ms");
  CHECK(sum == doctest::Approx(dom_number(times[0], "data-wall-ms")).epsilon(1e-6).scale(0));
  // Best so far against time: ends at the winner's median (the last progress event).
  const auto best = dom_elements(dom, "svg", "best-so-far");
  REQUIRE(best.size() == 1);
  CHECK(dom_number(best[0], "data-points") >= 1);
  CHECK(dom_number(best[0], "data-last-ns") == winner_ns);
  // The points before the last are the race's best so far; the finalists' showdown then
  // re-times the few that can win together, so the winner's median may land on either side
  // of the race's (on lavapipe by more than the 1% tie band): only positive, finite medians.
  CHECK(dom_number(best[0], "data-first-ns") > 0);
  CHECK(std::isfinite(dom_number(best[0], "data-first-ns")));
  // Sensitivity of each parameter of vector_add's space.
  for (const char* param : {"EPT", "VEC4", "block"}) {
    bool present = false;
    for (auto t : dom_elements(dom, "table", "sens")) present = present || t["data-param"] == param;
    CHECK_MESSAGE(present, param);
  }

  // A screenshot: a PNG of the requested size with real content (a blank page of this size
  // compresses to a few kilobytes).
  const fs::path png = scratch.path() / "report.png";
  tune::testing::screenshot(cli, chromium, page, png, 1200, 900);
  const std::string bytes = tune::testing::read_text(png);
  REQUIRE(bytes.size() > 24);
  CHECK(bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
  auto be32 = [&bytes](std::size_t at) {
    return (static_cast<unsigned>(static_cast<unsigned char>(bytes[at])) << 24) |
           (static_cast<unsigned>(static_cast<unsigned char>(bytes[at + 1])) << 16) |
           (static_cast<unsigned>(static_cast<unsigned char>(bytes[at + 2])) << 8) |
           static_cast<unsigned>(static_cast<unsigned char>(bytes[at + 3]));
  };
  CHECK(be32(16) == 1200);
  CHECK(be32(20) == 900);
  CHECK_MESSAGE(bytes.size() > 20000, "a near-blank screenshot: " << bytes.size() << " bytes");
  // Kept for CI to upload when TUNE_TEST_ARTIFACTS names a folder.
  if (const char* dir = std::getenv("TUNE_TEST_ARTIFACTS"); dir != nullptr && *dir != '\0') {
    std::error_code ec;
    fs::create_directories(dir, ec);
    fs::copy_file(png, fs::path(dir) / "report.png", fs::copy_options::overwrite_existing, ec);
    fs::copy_file(page, fs::path(dir) / "report.html", fs::copy_options::overwrite_existing, ec);
  }
}

TEST_CASE("cache import rejects configs outside a bundled kernel's space") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  // No device needed: import checks vulkan rows of bundled kernels against their spaces.
  auto make_row = [](const std::string& config) {
    return json{{"kernel", "vector_add"},
                {"source_hash", "0x0000000000000001"},
                {"key", "n=4096;f32,f32,f32"},
                {"device", "vulkan|Some GPU|vk:1:2|drv 1"},
                {"toolchain", "shaderc|libtune test"},
                {"config", config},
                {"status", "ok"},
                {"reason", ""},
                {"unix_time", 1700000000},
                {"stats",
                 {{"count", 5},
                  {"min", 900},
                  {"p20", 950},
                  {"median", 1000},
                  {"p80", 1050},
                  {"max", 1100},
                  {"mean", 1000}}}};
  };
  json doc = {{"format", "libtune-cache"},
              {"version", 1},
              {"rows",
               {make_row("EPT=4,VEC4=true;block=256x1x1"),      // in the space
                make_row("EPT=3,VEC4=true;block=256x1x1"),      // EPT not a declared value
                make_row("EPT=4,VEC4=7;block=256x1x1"),         // VEC4 of the wrong type
                make_row("EPT=4,VEC4=true,X=1;block=256x1x1"),  // undeclared parameter
                make_row("EPT=4,VEC4=true;block=100x1x1")}}};   // block.x not declared
  const fs::path file = scratch.path() / "space.json";
  tune::testing::write_text(file, doc.dump());
  const ProcessResult r = cli.run({"cache", "import", file.string(), "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  const json stats = parse_json(r);
  CHECK_MESSAGE(stats.at("added") == 1, r.describe());
  CHECK_MESSAGE(stats.at("rejected") == 4, r.describe());
  const json list = list_json(cli);
  REQUIRE(list.size() == 1);
  CHECK(list[0].at("best_config") == "EPT=4,VEC4=true;block=256x1x1");
  CHECK(list[0].at("rows") == 1);
}

TEST_CASE("tune demo: an unknown kernel or device index exits non-zero with a message") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  require_vulkan(cli);

  ProcessResult r = cli.run({"demo", "--device", "vulkan", "--kernel", "no_such_kernel"});
  CHECK_MESSAGE(r.exit_code != 0, r.describe());
  CHECK_MESSAGE(r.err.find("no_such_kernel") != std::string::npos, r.describe());

  r = cli.run({"demo", "--device", "vulkan:99", "--quick"});
  CHECK_MESSAGE(r.exit_code != 0, r.describe());
  CHECK_MESSAGE(r.err.find("99") != std::string::npos, r.describe());
  CHECK_MESSAGE(r.out.find("== ") == std::string::npos, "tuned anyway\n" << r.describe());
  CHECK_FALSE(fs::exists(cli.db_path()));
}

}  // namespace
