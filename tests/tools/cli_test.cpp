// The `tune` program's cache commands and its handling of user mistakes, run as real processes
// on a real database file in a scratch TUNE_CACHE_DIR. Needs no device (label core): rows are
// put into the cache with `tune cache import`. The Vulkan suite (vulkan_cli_test.cpp) does the
// same on rows that a real tuning wrote.
#include <doctest/doctest.h>

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "chromium.hpp"
#include "report_dom.hpp"
#include "scoped_env.hpp"
#include "space_files.hpp"
#include "t4_checks.hpp"
#include "tune/environment.hpp"
#include "tune_process.hpp"

namespace {

using nlohmann::json;
using tune::testing::check_mistakes;
using tune::testing::MistakeCase;
using tune::testing::ProcessResult;
using tune::testing::ScopedEnv;
using tune::testing::ScratchDir;
using tune::testing::TuneCli;
namespace fs = std::filesystem;

const char* const kDevice = "vulkan|Test GPU 9000|vk:1234:5678|testdrv 1.2.3";
const char* const kToolchain = "testcc 1.0|libtune test";

std::int64_t now_unix() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

json stats(double median, int count = 10) {
  return {{"count", count},       {"min", median * 0.9}, {"p20", median * 0.95}, {"median", median},
          {"p80", median * 1.05}, {"max", median * 1.1}, {"mean", median * 1.01}};
}

json row(const std::string& kernel, const std::string& key, const std::string& config,
         double median, const std::string& status = "ok", const std::string& reason = "") {
  json r = {{"kernel", kernel},
            {"source_hash", "0x00000000000000a1"},
            {"key", key},
            {"device", kDevice},
            {"toolchain", kToolchain},
            {"config", config},
            {"status", status},
            {"reason", reason},
            {"unix_time", now_unix() - 60}};
  r["stats"] = status == "ok" ? stats(median) : json{{"count", 0}};
  return r;
}

// Kernels that libtune does not ship, so only the space-independent row checks apply.
// cli_add: two keys (best BLOCK=128, then BLOCK=256) and one failed config; cli_mul: one row,
// wrong output. Only cli_add's n=1024 winner was verified; every other ok row was not checked.
json seed_document() {
  json rows = json::array();
  rows.push_back(row("cli_add", "n=1024;f32", "BLOCK=64", 3000));
  rows.push_back(row("cli_add", "n=1024;f32", "BLOCK=128", 2000));
  rows.back()["verified"] = true;
  rows.push_back(row("cli_add", "n=1024;f32", "BLOCK=256", 0, "compile_error",
                     "too many registers\nsecond line of the log"));
  rows.push_back(row("cli_add", "n=65536;f32", "BLOCK=128", 9000));
  rows.push_back(row("cli_add", "n=65536;f32", "BLOCK=256", 7000));
  rows.push_back(row("cli_mul", "M=N=K=64", "BM=32", 50000));
  rows.push_back(row("cli_mul", "M=N=K=64", "BM=64", 0, "wrong_output",
                     "output 'c' differs at 7 of 4096 elements"));
  rows.back()["verified"] = true;
  return {{"format", "libtune-cache"}, {"version", 1}, {"rows", rows}};
}
constexpr std::size_t kSeedRows = 7;

json parse_json(const ProcessResult& r) {
  json j = json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  REQUIRE_MESSAGE(!j.is_discarded(), "stdout is not JSON\n" << r.describe());
  return j;
}

// `tune cache list --json`, checked to be an array.
json list_json(const TuneCli& cli) {
  const ProcessResult r = cli.run({"cache", "list", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  json j = parse_json(r);
  REQUIRE_MESSAGE(j.is_array(), r.describe());
  return j;
}

const json* find_entry(const json& list, const std::string& kernel, const std::string& key) {
  for (const auto& e : list)
    if (e.at("kernel") == kernel && e.at("key") == key) return &e;
  return nullptr;
}

// Imports seed_document() into a fresh cache and checks that every row was added.
void seed(const TuneCli& cli, const fs::path& file) {
  tune::testing::write_text(file, seed_document().dump(2));
  const ProcessResult r = cli.run({"cache", "import", file.string()});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  REQUIRE_MESSAGE(r.out.find(std::to_string(kSeedRows) + " added") != std::string::npos,
                  r.describe());
  REQUIRE_MESSAGE(r.out.find("0 rejected") != std::string::npos, r.describe());
}

TEST_CASE("cache path prints the database under TUNE_CACHE_DIR") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  ProcessResult r = cli.run({"cache", "path"});
  CHECK_MESSAGE(r.exit_code == 0, r.describe());
  CHECK_MESSAGE(r.out == cli.db_path().string() + "\n", r.describe());

  r = cli.run({"cache", "path", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  const json j = parse_json(r);
  CHECK(j.at("path") == cli.db_path().string());
  CHECK(j.at("mode") == "readwrite");

  cli.set_env("TUNE_CACHE", "readonly");
  r = cli.run({"cache", "path"});
  CHECK_MESSAGE(r.exit_code == 0, r.describe());
  CHECK_MESSAGE(r.out == cli.db_path().string() + "\n", r.describe());
  CHECK_MESSAGE(r.err.find("TUNE_CACHE=readonly") != std::string::npos, r.describe());

  // Asking for the path creates nothing.
  CHECK_FALSE(fs::exists(cli.cache_dir()));
}

TEST_CASE("cache list on an empty cache says so and creates no file") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  ProcessResult r = cli.run({"cache", "list"});
  CHECK_MESSAGE(r.exit_code == 0, r.describe());
  CHECK_MESSAGE(r.out.find("no tuning results in " + cli.db_path().string()) != std::string::npos,
                r.describe());
  CHECK(list_json(cli).empty());
  CHECK_FALSE(fs::exists(cli.db_path()));
}

TEST_CASE("cache list, list --json and show describe imported rows") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  seed(cli, scratch.path() / "seed.json");
  CHECK(fs::exists(cli.db_path()));

  const json list = list_json(cli);
  REQUIRE_MESSAGE(list.size() == 3, list.dump(2));
  const json* small = find_entry(list, "cli_add", "n=1024;f32");
  const json* large = find_entry(list, "cli_add", "n=65536;f32");
  const json* mul = find_entry(list, "cli_mul", "M=N=K=64");
  REQUIRE(small != nullptr);
  REQUIRE(large != nullptr);
  REQUIRE(mul != nullptr);
  // The best config is the lowest median among the ok rows; the failure is counted.
  CHECK(small->at("best_config") == "BLOCK=128");
  CHECK(small->at("best_stats").at("median").get<double>() == doctest::Approx(2000));
  CHECK(small->at("rows") == 3);
  CHECK(small->at("failed") == 1);
  CHECK(small->at("device") == kDevice);
  CHECK(small->at("toolchain") == kToolchain);
  CHECK(large->at("best_config") == "BLOCK=256");
  CHECK(large->at("rows") == 2);
  CHECK(large->at("failed") == 0);
  CHECK(mul->at("best_config") == "BM=32");
  // Whether the winners' outputs were checked, and how many ok rows were.
  CHECK(small->at("best_verification") == "verified");
  CHECK(small->at("verified") == 1);
  CHECK(large->at("best_verification") == "not_checked");
  CHECK(large->at("verified") == 0);
  CHECK(mul->at("best_verification") == "not_checked");
  CHECK(mul->at("failed") == 1);

  // The table: a header and one line per key.
  ProcessResult r = cli.run({"cache", "list"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK_MESSAGE(r.out.rfind("KERNEL", 0) == 0, r.describe());
  for (const char* text :
       {"BEST", "MEDIAN", "BEST OUTPUT", "VERIFIED/OK", "AGE", "n=1024;f32", "n=65536;f32",
        "M=N=K=64", "Test GPU 9000", "2/3", "1/2", "0/2", "2.00 us", "verified", "not_checked"})
    CHECK_MESSAGE(r.out.find(text) != std::string::npos, "missing '" << text << "'\n"
                                                                     << r.describe());

  // Filters.
  r = cli.run({"cache", "list", "--json", "--kernel", "cli_mul"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK(parse_json(r).size() == 1);
  r = cli.run({"cache", "list", "--json", "--device", "no such device"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK(parse_json(r).empty());

  // show: every config of every key of one kernel, with the failure's first line only.
  r = cli.run({"cache", "show", "cli_add"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  for (const char* text : {"key n=1024;f32", "key n=65536;f32", "BLOCK=64", "BLOCK=128",
                           "BLOCK=256", "compile_error", "too many registers", "3.00 us"})
    CHECK_MESSAGE(r.out.find(text) != std::string::npos, "missing '" << text << "'\n"
                                                                     << r.describe());
  CHECK_MESSAGE(r.out.find("second line of the log") == std::string::npos, r.describe());
  CHECK_MESSAGE(r.out.find("BM=32") == std::string::npos, r.describe());

  CHECK_MESSAGE(r.out.find("OUTPUT") != std::string::npos, r.describe());

  r = cli.run({"cache", "show", "cli_add", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  const json rows = parse_json(r);
  REQUIRE(rows.size() == 5);
  for (const auto& x : rows) {
    CHECK(x.at("kernel") == "cli_add");
    // Only the n=1024 winner was checked; the failure to compile was not either.
    const bool checked = x.at("key") == "n=1024;f32" && x.at("config") == "BLOCK=128";
    CHECK(x.at("verified") == checked);
    CHECK(x.at("verification") == (checked ? "verified" : "not_checked"));
  }
  r = cli.run({"cache", "show", "cli_mul", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  const json mul_rows = parse_json(r);
  REQUIRE(mul_rows.size() == 2);
  CHECK(mul_rows[0].at("verification") == "not_checked");
  CHECK(mul_rows[1].at("verification") == "wrong_output");
  r = cli.run({"cache", "show", "cli_mul"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK_MESSAGE(r.out.find("wrong_output") != std::string::npos, r.describe());

  r = cli.run({"cache", "show", "no_such_kernel"});
  CHECK_MESSAGE(r.exit_code == 0, r.describe());
  CHECK_MESSAGE(r.out.find("no tuning results for no_such_kernel") != std::string::npos,
                r.describe());
}

TEST_CASE("cache export, clear and import restore the same entries") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  seed(cli, scratch.path() / "seed.json");
  const json before = list_json(cli);
  REQUIRE(before.size() == 3);

  const fs::path exported = scratch.path() / "exported.json";
  ProcessResult r = cli.run({"cache", "export", exported.string()});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK_MESSAGE(r.out.find("exported to " + exported.string()) != std::string::npos, r.describe());
  const json doc = json::parse(tune::testing::read_text(exported));
  CHECK(doc.at("format") == "libtune-cache");
  CHECK(doc.at("version") == 1);
  CHECK(doc.at("rows").size() == kSeedRows);

  // "-" writes the same document to stdout.
  r = cli.run({"cache", "export", "-"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK(parse_json(r) == doc);

  r = cli.run({"cache", "clear"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK_MESSAGE(r.out.find("removed " + std::to_string(kSeedRows) + " rows") != std::string::npos,
                r.describe());
  CHECK(list_json(cli).empty());

  r = cli.run({"cache", "import", exported.string(), "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  const json stats = parse_json(r);
  CHECK(stats.at("added") == kSeedRows);
  CHECK(stats.at("rejected") == 0);
  CHECK(list_json(cli) == before);

  // Importing the same rows again changes nothing: the stored rows are as good.
  r = cli.run({"cache", "import", exported.string()});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK_MESSAGE(r.out.find("0 added, 0 replaced, " + std::to_string(kSeedRows) + " kept") !=
                    std::string::npos,
                r.describe());
  CHECK(list_json(cli) == before);
}

TEST_CASE("cache export --format t4 writes one key's rows, failures with their reasons") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  seed(cli, scratch.path() / "seed.json");

  // Rows of two keys are two tuning problems: refused, naming both keys.
  const fs::path results = scratch.path() / "add.json";
  ProcessResult r =
      cli.run({"cache", "export", "--format", "t4", "--kernel", "cli_add", results.string()});
  CHECK_MESSAGE(r.exit_code != 0, r.describe());
  CHECK_MESSAGE(r.err.find("one tuning problem") != std::string::npos, r.describe());
  CHECK_MESSAGE(r.err.find("n=1024;f32") != std::string::npos, r.describe());
  CHECK_MESSAGE(r.err.find("n=65536;f32") != std::string::npos, r.describe());
  CHECK_FALSE(fs::exists(results));

  r = cli.run({"cache", "export", "--format", "t4", "--kernel", "cli_add", "--key", "n=1024;f32",
               results.string()});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  const fs::path metadata = scratch.path() / "add-metadata.json";
  CHECK_MESSAGE(r.out.find("metadata in " + metadata.string()) != std::string::npos, r.describe());
  const ProcessResult shown =
      cli.run({"cache", "show", "cli_add", "--key", "n=1024;f32", "--json"});
  REQUIRE_MESSAGE(shown.exit_code == 0, shown.describe());
  const json rows = parse_json(shown);
  REQUIRE(rows.size() == 3);
  tune::testing::check_t4_export(cli, results, metadata, rows);

  // The compile error: T4's "compile", Kernel Tuner's error name, the whole log as reason.
  const json doc = json::parse(tune::testing::read_text(results));
  bool found = false;
  for (const auto& res : doc.at("results")) {
    if (res.at("configuration").at("BLOCK") != 256) continue;
    found = true;
    CHECK(res.at("invalidity") == "compile");
    CHECK(tune::testing::t4_measurement(res, "time").at("value") == "CompilationFailedConfig");
    CHECK(tune::testing::t4_measurement(res, "reason").at("value") ==
          "too many registers\nsecond line of the log");
  }
  CHECK(found);

  // "-" writes the results document alone to stdout; --metadata names the metadata file.
  const fs::path meta2 = scratch.path() / "meta2.json";
  r = cli.run({"cache", "export", "--format", "t4", "--kernel", "cli_mul", "--metadata",
               meta2.string(), "-"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  const json one = parse_json(r);
  REQUIRE(one.at("results").size() == 2);
  CHECK(one.at("results")[0].at("configuration") == json{{"BM", 32}});
  // Not checked, and wrong: T4's correctness 1 and 0, and the verification measurement.
  CHECK(one.at("results")[0].at("correctness") == 1);
  CHECK(tune::testing::t4_measurement(one.at("results")[0], "verification").at("value") ==
        "not_checked");
  CHECK(one.at("results")[1].at("invalidity") == "correctness");
  CHECK(one.at("results")[1].at("correctness") == 0);
  CHECK(tune::testing::t4_measurement(one.at("results")[1], "verification").at("value") ==
        "wrong_output");
  CHECK(json::parse(tune::testing::read_text(meta2))
            .at("metadata")
            .at("environment")
            .at("device_query")
            .at("libtune")
            .at("device") == kDevice);

  // An unknown format is a usage error; nothing matching is an error that says so.
  r = cli.run({"cache", "export", "--format", "t5", "-"});
  CHECK_MESSAGE(r.exit_code != 0, r.describe());
  r = cli.run({"cache", "export", "--format", "t4", "--kernel", "nope", "-"});
  CHECK_MESSAGE(r.exit_code != 0, r.describe());
  CHECK_MESSAGE(r.err.find("no stored results") != std::string::npos, r.describe());
}

TEST_CASE("tune report of the cache renders in headless Chromium with every stored number") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  seed(cli, scratch.path() / "seed.json");
  const fs::path page = scratch.path() / "cache-report.html";
  ProcessResult r = cli.run({"report", "--kernel", "cli_add", "--out", page.string()});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK_MESSAGE(r.out.find("2 keys") != std::string::npos, r.describe());
  const std::string html = tune::testing::read_text(page);
  const std::string dom = tune::testing::rendered_dom(cli, tune::testing::require_chromium(), page);
  tune::testing::check_self_contained(html, dom, 5);
  using tune::testing::dom_elements;
  using tune::testing::dom_number;

  // Identity: the device and toolchain fingerprints of the rows.
  bool device_shown = false;
  for (auto& tr : dom_elements(dom, "tr"))
    if (tr["data-field"] == "device") device_shown = true;
  CHECK(device_shown);
  CHECK(dom.find(kToolchain) != std::string::npos);

  // One section per key with its winner; every stored row is a candidate row with its numbers.
  auto sections = dom_elements(dom, "section", "key");
  REQUIRE(sections.size() == 2);
  const ProcessResult shown = cli.run({"cache", "show", "cli_add", "--json"});
  REQUIRE_MESSAGE(shown.exit_code == 0, shown.describe());
  const json rows = parse_json(shown);
  REQUIRE(rows.size() == 5);
  const auto cands = dom_elements(dom, "tr", "cand");
  REQUIRE(cands.size() == 5);
  for (const json& row : rows) {
    const std::string config = row.at("config");
    const std::string key = row.at("key");
    CAPTURE(config);
    CAPTURE(key);
    std::size_t matches = 0;
    for (const auto& s : sections) {
      if (s.at("data-key") != key) continue;
      // Within this key's section: find the row (configs repeat across keys).
      const std::size_t from = dom.find("data-key=\"" + key + "\"");
      const std::size_t to = dom.find("</section>", from);
      const std::string part = dom.substr(from, to - from);
      for (auto& c : dom_elements(part, "tr", "cand")) {
        if (c["data-config"] != config) continue;
        ++matches;
        CHECK(c["data-verification"] == row.at("verification"));
        if (row.at("status") == "ok") {
          CHECK(c["data-state"] != "failed");
          CHECK(dom_number(c, "data-median-ns") == row.at("stats").at("median").get<double>());
          CHECK(dom_number(c, "data-p20-ns") == row.at("stats").at("p20").get<double>());
          CHECK(dom_number(c, "data-p80-ns") == row.at("stats").at("p80").get<double>());
          CHECK(dom_number(c, "data-n") == row.at("stats").at("count").get<double>());
        } else {
          CHECK(c["data-state"] == "failed");
        }
      }
    }
    CHECK(matches == 1);
  }
  // Winners: the fastest ok row of each key; the n=1024 runner-up is 50% slower.
  for (auto& s : sections) {
    if (s["data-key"] == "n=1024;f32") {
      CHECK(s["data-winner"] == "BLOCK=128");
      CHECK(s["data-failed"] == "1");
    } else {
      CHECK(s["data-winner"] == "BLOCK=256");
    }
    CHECK(s["data-measured"] == "false");
  }
  const auto margins = dom_elements(dom, "dd", "margin");
  REQUIRE(margins.size() == 2);
  CHECK(dom.find("is +50.0% slower") != std::string::npos);

  // The failure with its code and its whole reason.
  const auto failures = dom_elements(dom, "li", "failure");
  REQUIRE(failures.size() == 1);
  CHECK(failures[0].at("data-config") == "BLOCK=256");
  CHECK(failures[0].at("data-code") == "compile_error");
  CHECK(dom.find("too many registers\nsecond line of the log") != std::string::npos);

  // Parameter sensitivity of BLOCK at n=1024 (two ok values) and at n=65536.
  const auto sens = dom_elements(dom, "tr", "sens-value");
  CHECK(sens.size() == 4);
  // Winners across keys: BLOCK=128 wins n=1024, BLOCK=256 n=65536 (ratio 1 where each wins,
  // 9000/7000 for BLOCK=128 at n=65536; BLOCK=256 failed at n=1024).
  const auto heat = dom_elements(dom, "table", "heat");
  REQUIRE(heat.size() == 1);
  const auto cells = dom_elements(dom, "td", "cell");
  REQUIRE(cells.size() == 4);
  std::vector<double> ratios;
  for (const auto& c : cells) ratios.push_back(dom_number(c, "data-ratio"));
  CHECK(ratios[0] == 1.0);
  CHECK(ratios[1] == HUGE_VAL);
  CHECK(ratios[2] == doctest::Approx(9000.0 / 7000.0));
  CHECK(ratios[3] == 1.0);
  // No racing, compile or time breakdown: the cache does not keep them.
  CHECK(dom_elements(dom, "div", "times").empty());
  CHECK(dom_elements(dom, "svg", "best-so-far").empty());

  // Nothing matching is an error that says so, and writes no file.
  const fs::path none = scratch.path() / "none.html";
  r = cli.run({"report", "--kernel", "nope", "--out", none.string()});
  CHECK_MESSAGE(r.exit_code != 0, r.describe());
  CHECK_MESSAGE(r.err.find("nothing to report") != std::string::npos, r.describe());
  CHECK_FALSE(fs::exists(none));
}

// The T1 example's space, enumerated here: the points and those both conditions accept.
TEST_CASE("import-space reads a T1 file into a space file with the values evaluated") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  const std::string t1 = std::string(TUNE_TOOLS_TEST_DATA) + "/t1_stencil.json";
  // The example is valid T1 by Kernel Tuner's schema.
  tune::testing::check_schema(cli, t1, std::string(TUNE_T1_SCHEMA_DIR) + "/input-schema.json");

  const fs::path out = scratch.path() / "space.json";
  ProcessResult r = cli.run({"import-space", t1, "--out", out.string()});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  const auto [total, valid] = tune::testing::stencil_points();
  CHECK_MESSAGE(r.out.find(std::to_string(total) + " points, " + std::to_string(valid) +
                           " valid") != std::string::npos,
                r.describe());
  const json space = json::parse(tune::testing::read_text(out));
  CHECK(space.at("format") == "libtune-space");
  CHECK(space.at("kernel") == "stencil_kernel");
  CHECK(space.at("language") == "cuda");
  CHECK(space.at("kernel_file") == std::string(TUNE_TOOLS_TEST_DATA) + "/stencil.cu");
  CHECK(space.at("compiler_options") == json::array({"-std=c++17"}));
  REQUIRE(space.at("parameters").size() == 4);
  CHECK(space.at("parameters")[0] == json({{"name", "block_size_x"},
                                           {"type", "int"},
                                           {"values", {16, 32, 48, 64, 80, 96, 112, 128}}}));
  CHECK(space.at("parameters")[1].at("values") == json({1, 2, 4, 8}));
  CHECK(space.at("parameters")[2].at("values") == json({1, 2, 4}));
  CHECK(space.at("parameters")[3].at("values") == json({0, 1}));
  REQUIRE(space.at("conditions").size() == 2);
  CHECK(space.at("conditions")[1] ==
        json({{"expression", "use_shared == 0 or block_size_x % 32 == 0"},
              {"parameters", {"use_shared", "block_size_x"}}}));
  CHECK(space.at("t1_extra").at("General").at("TimeUnit") == "Milliseconds");
  CHECK(space.at("block") == json({{"x", "block_size_x"}, {"y", "block_size_y"}, {"z", "1"}}));
  CHECK(space.at("grid").at("x") ==
        "(4096 + block_size_x * tile_size_x - 1) // (block_size_x * tile_size_x)");
  CHECK(space.at("arguments").size() == 3);
  CHECK(space.at("points") == total);
  CHECK(space.at("valid_points") == valid);

  // '-' (the default) writes the same document to stdout.
  r = cli.run({"import-space", t1});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  json again = parse_json(r);
  CHECK(again == space);
}

TEST_CASE("import-space refuses hostile and broken T1 files, naming the field") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  const json base =
      json::parse(tune::testing::read_text(std::string(TUNE_TOOLS_TEST_DATA) + "/t1_stencil.json"));
  struct Case {
    const char* what;
    std::function<void(json&)> edit;
    const char* expect;
  };
  const Case cases[] = {
      {"no kernel specification", [](json& d) { d.erase("KernelSpecification"); },
       "KernelSpecification: missing"},
      {"unknown language", [](json& d) { d["KernelSpecification"]["Language"] = "Metal"; },
       "KernelSpecification.Language: 'Metal'"},
      {"values of another type",
       [](json& d) { d["ConfigurationSpace"]["TuningParameters"][2]["Values"] = "[1, 'x']"; },
       "TuningParameters[2].Values: 'x' is not of the declared Type int"},
      {"a huge range",
       [](json& d) {
         d["ConfigurationSpace"]["TuningParameters"][0]["Values"] = "[i for i in range(10**12)]";
       },
       "TuningParameters[0].Values: a list of more than"},
      {"code instead of values",
       [](json& d) {
         d["ConfigurationSpace"]["TuningParameters"][0]["Values"] =
             "__import__('os').system('touch pwned')";
       },
       "TuningParameters[0].Values: the call '__import__(...)' is not supported"},
      {"a condition over an unknown name",
       [](json& d) { d["ConfigurationSpace"]["Conditions"][1]["Expression"] = "bogus > 1"; },
       "Conditions[1].Expression: unknown name 'bogus'"},
      {"a condition naming a parameter that is not declared",
       [](json& d) { d["ConfigurationSpace"]["Conditions"][0]["Parameters"][0] = "nope"; },
       "Conditions[0].Parameters: 'nope' is not a parameter"},
      {"conditions no point passes",
       [](json& d) { d["ConfigurationSpace"]["Conditions"][0]["Expression"] = "False"; },
       "no point of the space passes"},
      {"a parameter declared twice",
       [](json& d) { d["ConfigurationSpace"]["TuningParameters"][1]["Name"] = "block_size_x"; },
       "TuningParameters[1].Name: 'block_size_x' is declared twice"},
      {"a launch size that divides by zero",
       [](json& d) { d["KernelSpecification"]["GlobalSize"]["X"] = "4096 // (block_size_x - 16)"; },
       "KernelSpecification.GlobalSize.X: division by zero"},
      {"a name that is not a string",
       [](json& d) { d["ConfigurationSpace"]["TuningParameters"][0]["Name"] = 7; },
       "TuningParameters[0].Name: not a string"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    json doc = base;
    c.edit(doc);
    const fs::path file = scratch.path() / "bad.json";
    tune::testing::write_text(file, doc.dump());
    const fs::path out = scratch.path() / "bad-space.json";
    const ProcessResult r = cli.run({"import-space", file.string(), "--out", out.string()});
    CHECK_MESSAGE(r.exit_code != 0, r.describe());
    CHECK_MESSAGE(r.err.find(c.expect) != std::string::npos, r.describe());
    CHECK_FALSE(fs::exists(out));
  }
  CHECK_FALSE(fs::exists(scratch.path() / "pwned"));
  CHECK_FALSE(fs::exists(cli.home() / "pwned"));

  // Not a file, not JSON, missing.
  ProcessResult r = cli.run({"import-space", scratch.path().string()});
  CHECK_MESSAGE(r.exit_code != 0, r.describe());
  CHECK_MESSAGE(r.err.find("not a regular file") != std::string::npos, r.describe());
  const fs::path junk = scratch.path() / "junk.json";
  tune::testing::write_text(junk, "{\"ConfigurationSpace\": [");
  r = cli.run({"import-space", junk.string()});
  CHECK_MESSAGE(r.err.find("is not JSON") != std::string::npos, r.describe());
  r = cli.run({"import-space", (scratch.path() / "absent.json").string()});
  CHECK_MESSAGE(r.err.find("no such file") != std::string::npos, r.describe());
}

TEST_CASE("cache clear --kernel removes only that kernel's rows") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  seed(cli, scratch.path() / "seed.json");

  ProcessResult r = cli.run({"cache", "clear", "--kernel", "cli_add"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK_MESSAGE(r.out.find("removed 5 rows from " + cli.db_path().string()) != std::string::npos,
                r.describe());
  json list = list_json(cli);
  REQUIRE(list.size() == 1);
  CHECK(list[0].at("kernel") == "cli_mul");

  r = cli.run({"cache", "clear", "--kernel", "no_such_kernel", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK(parse_json(r).at("removed") == 0);
  CHECK(list_json(cli).size() == 1);
}

TEST_CASE("cache --db works on another database file") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  const fs::path other = scratch.path() / "other" / "elsewhere.db";
  const fs::path file = scratch.path() / "seed.json";
  tune::testing::write_text(file, seed_document().dump());
  ProcessResult r = cli.run({"cache", "--db", other.string(), "import", file.string()});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK(fs::exists(other));
  CHECK_FALSE(fs::exists(cli.db_path()));
  r = cli.run({"cache", "--db", other.string(), "list", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK(parse_json(r).size() == 3);
  CHECK(list_json(cli).empty());
}

TEST_CASE("cache import of a damaged, foreign or missing file fails and names the file") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  seed(cli, scratch.path() / "seed.json");
  const json before = list_json(cli);

  struct Case {
    const char* name;
    std::string content;  // empty: the file does not exist
  };
  std::string truncated = seed_document().dump();
  truncated.resize(truncated.size() / 2);
  const std::vector<Case> cases = {
      {"truncated.json", truncated},
      {"binary.json", std::string("SQLite format 3\0\x01\x02garbage", 26)},
      {"foreign.json", R"({"format": "something-else", "version": 1, "rows": []})"},
      {"array.json", R"([{"kernel": "cli_add"}])"},
      {"newer.json", R"({"format": "libtune-cache", "version": 99, "rows": []})"},
      {"missing.json", ""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const fs::path file = scratch.path() / c.name;
    if (!c.content.empty()) tune::testing::write_text(file, c.content);
    const ProcessResult r = cli.run({"cache", "import", file.string()});
    CHECK_MESSAGE(r.exit_code != 0, r.describe());
    CHECK_MESSAGE(r.err.find(file.string()) != std::string::npos,
                  "the message does not name the file\n"
                      << r.describe());
    CHECK(list_json(cli) == before);
  }
}

TEST_CASE("cache merge adds another database's rows once; a damaged one is refused") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  // The other machine's database: the seed rows, and one of another device.
  const fs::path other = scratch.path() / "other" / "tune.db";
  json doc = seed_document();
  json foreign_row = row("cli_add", "n=1024;f32", "BLOCK=64", 2500);
  foreign_row["device"] = "cuda|NVIDIA H200|sm_90|580.1";
  doc["rows"].push_back(foreign_row);
  const fs::path file = scratch.path() / "seed.json";
  tune::testing::write_text(file, doc.dump());
  ProcessResult r = cli.run({"cache", "--db", other.string(), "import", file.string()});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());

  r = cli.run({"cache", "merge", other.string(), "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  json j = parse_json(r);
  CHECK(j.at("added") == kSeedRows + 1);
  CHECK(j.at("rejected") == 0);
  const json once = list_json(cli);
  CHECK(once.size() == 4);  // 3 keys on the test GPU, 1 on the H200: identities kept
  r = cli.run({"cache", "merge", other.string()});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK_MESSAGE(r.out.find("0 added, 0 replaced, " + std::to_string(kSeedRows + 1) + " kept") !=
                    std::string::npos,
                r.describe());
  CHECK(list_json(cli) == once);

  const fs::path damaged = scratch.path() / "damaged.db";
  tune::testing::write_text(damaged, std::string(8192, 'x'));
  r = cli.run({"cache", "merge", damaged.string()});
  CHECK_MESSAGE(r.exit_code != 0, r.describe());
  CHECK_MESSAGE(r.err.find(damaged.string()) != std::string::npos, r.describe());
  CHECK(list_json(cli) == once);
  r = cli.run({"cache", "merge", (scratch.path() / "missing.db").string()});
  CHECK_MESSAGE(r.exit_code != 0, r.describe());
  CHECK_MESSAGE(r.err.find("missing.db") != std::string::npos, r.describe());
}

TEST_CASE("cache import rejects bad rows one by one and keeps the good ones") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  json doc = seed_document();
  json bad_stats = row("cli_add", "n=1024;f32", "BLOCK=512", 1000);
  bad_stats["stats"]["min"] = 5000;  // min > median
  doc["rows"].push_back(bad_stats);
  doc["rows"].push_back(row("cli_add", "n=1024;f32", "BLOCK=", 1000));             // no value
  doc["rows"].push_back(row("cli_add", "n=1024;f32", "BLOCK=32", 1000, "bogus"));  // status
  const fs::path file = scratch.path() / "mixed.json";
  tune::testing::write_text(file, doc.dump());
  ProcessResult r = cli.run({"cache", "import", file.string(), "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  const json stats = parse_json(r);
  CHECK(stats.at("added") == kSeedRows);
  CHECK(stats.at("rejected") == 3);
  CHECK(stats.at("problems").size() == 3);
  const json list = list_json(cli);
  const json* small = find_entry(list, "cli_add", "n=1024;f32");
  REQUIRE(small != nullptr);
  CHECK(small->at("rows") == 3);
  CHECK(small->at("best_config") == "BLOCK=128");
}

TEST_CASE("cache writes are refused under TUNE_CACHE=readonly") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  seed(cli, scratch.path() / "seed.json");
  cli.set_env("TUNE_CACHE", "readonly");
  ProcessResult r = cli.run({"cache", "clear"});
  CHECK_MESSAGE(r.exit_code != 0, r.describe());
  CHECK_MESSAGE(!r.err.empty(), "no message\n" << r.describe());
  CHECK(list_json(cli).size() == 3);
}

TEST_CASE("user mistakes exit non-zero with a message") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  const std::vector<MistakeCase> cases = {
      {{"bogus"}, "unknown command 'bogus'"},
      {{"cache", "bogus"}, "unknown command 'bogus'"},
      {{"--bogus"}, "unknown option '--bogus'"},
      {{}, "subcommand is required"},
      {{"cache"}, "subcommand is required"},
      {{"cache", "list", "--bogus"}, "--bogus"},
      {{"cache", "show"}, "kernel is required"},
      {{"cache", "import"}, "file is required"},
      // Every command that opens a device says why it could not the same way (open_cli_device).
      {{"demo", "--device", "bogus"}, "tune demo: not_found: backend 'bogus' is not compiled"},
      {{"demo", "--device", "nosuchbackend:3", "--quick"}, "nosuchbackend"},
      // The research commands are tune-lab's (studies/tune_lab), not the installed program's.
      {{"stability"}, "unknown command 'stability'"},
      {{"flush-check"}, "unknown command 'flush-check'"},
  };
  check_mistakes(cli, cases);  // and none of them touches the cache
}

TEST_CASE("--version and --help exit 0") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  ProcessResult r = cli.run({"--version"});
  CHECK_MESSAGE(r.exit_code == 0, r.describe());
  CHECK_MESSAGE(!r.out.empty(), r.describe());
  // The user's commands, and no research command (those are tune-lab's).
  r = cli.run({"--help"});
  CHECK_MESSAGE(r.exit_code == 0, r.describe());
  for (const char* sub :
       {"devices", "env", "demo", "cache", "report", "import-space", "run-space", "export-space"})
    CHECK_MESSAGE(r.out.find(sub) != std::string::npos, r.describe());
  for (const char* sub : {"stability", "flush-check"})
    CHECK_MESSAGE(r.out.find(sub) == std::string::npos, r.describe());
  r = cli.run({"cache", "--help"});
  CHECK_MESSAGE(r.exit_code == 0, r.describe());
  for (const char* sub : {"list", "show", "clear", "export", "import", "merge", "path"})
    CHECK_MESSAGE(r.out.find(sub) != std::string::npos, r.describe());
}

TEST_CASE("env lists every variable libtune reads, with the value set now") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  cli.set_env("TUNE_BACKEND", "vulkan");
  const ProcessResult r = cli.run({"env"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  for (const auto& v : tune::environment_variables())
    CHECK_MESSAGE(r.out.find(std::string(v.name) + "=") != std::string::npos, r.describe());
  CHECK_MESSAGE(r.out.find("TUNE_BACKEND=vulkan\n") != std::string::npos, r.describe());
  CHECK_MESSAGE(r.out.find("TUNE_DISABLE=(unset)\n") != std::string::npos, r.describe());
}

// Every CLI test runs through TuneCli; its tune processes must not check bucket edges whatever
// this process inherited (the checks are on when unset; under load one can split a bucket after
// the tuning and the next process tunes again: d0715b5).
TEST_CASE("the CLI harness runs tune without bucket edge checks, whatever it inherited") {
  for (const char* inherited : {"1", "on", static_cast<const char*>(nullptr)}) {
    const char* shown = inherited != nullptr ? inherited : "(unset)";
    CAPTURE(shown);
    const ScopedEnv inherit("TUNE_BUCKET_EDGES", inherited);
    ScratchDir scratch;
    TuneCli cli(scratch);
    const ProcessResult r = cli.run({"env"});
    REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
    CHECK_MESSAGE(r.out.find("TUNE_BUCKET_EDGES=0\n") != std::string::npos, r.describe());
  }
}

}  // namespace
