// `tune record tune` on lavapipe, every step a real process: a `tune demo` run with
// TUNE_FALLBACK=keep and TUNE_RECORD serves its key by the fallback chain and records it; the
// command tunes the record (a kernel it cannot build, a line of another source version and a
// torn line reported, line by line, the rest tuned) into the database and a bundle; a new
// process then hits without tuning, and one on an empty database is served by the bundle.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "../tools/tune_process.hpp"
#include "skip.hpp"
#include "vulkan_env.hpp"

using namespace tune::testing;
using nlohmann::json;

namespace {

const bool kOnLavapipe = use_lavapipe_unless_asked();

std::vector<std::string> demo_args() {
  return {"demo", "--device", "vulkan", "--kernel", "vector_add", "--quick"};
}

// Skips (fails in CI) without a Vulkan device.
void require_vulkan(const TuneCli& cli) {
  if (kOnLavapipe && !fs::exists(kLavapipeIcd)) {
    const std::string why = std::string("lavapipe is not installed (") + kLavapipeIcd + ")";
    if (in_ci()) FAIL(why << " (CI runs the Vulkan tests on lavapipe)");
    TUNE_SKIP(why);
  }
  const ProcessResult r = cli.run({"devices"});
  if (r.exit_code != 0 || r.out.find("vulkan   0") == std::string::npos) {
    if (in_ci()) FAIL("no Vulkan device\n" << r.describe());
    TUNE_SKIP("no Vulkan device: " + r.out + r.err);
  }
}

// A production run's environment: never tune, record what the chain served.
void production(TuneCli& cli, const fs::path& record) {
  for (const char* v : {"TUNE_BUNDLES", "TUNE_STRICT", "TUNE_STORE"}) cli.unset_env(v);
  cli.set_env("TUNE_FALLBACK", "keep");
  cli.set_env("TUNE_RECORD", record.string());
}

std::vector<std::string> lines_of(const fs::path& p) {
  std::vector<std::string> out;
  std::istringstream in(read_text(p));
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// The value after "label" on its line of the output ("chosen: <config>").
std::string field(const std::string& out, const std::string& label) {
  const std::regex re(label + "\\s*(\\S+)");
  std::smatch m;
  return std::regex_search(out, m, re) ? m[1].str() : std::string();
}

// The winner `tune record tune` printed for vector_add ("tuned vector_add {key}: <config>, ").
std::string tuned_winner(const std::string& out) {
  const std::regex re(R"(tuned vector_add \{[^}]*\}: (\S+), \d+ candidates)");
  std::smatch m;
  return std::regex_search(out, m, re) ? m[1].str() : std::string();
}

}  // namespace

TEST_CASE("tune record tune: recorded misses tuned offline, then hits in a new process") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  require_vulkan(cli);
  const fs::path record = scratch.path() / "missed.jsonl";
  production(cli, record);

  // Production: no decision, the default configuration serves, the key is recorded.
  const ProcessResult served = cli.run(demo_args());
  REQUIRE_MESSAGE(served.exit_code == 0, served.describe());
  CHECK_MESSAGE(served.has("source: fallback"), served.describe());
  const std::vector<std::string> recorded = lines_of(record);
  REQUIRE(recorded.size() == 1);
  const json line = json::parse(recorded[0]);
  CHECK(line.at("kernel") == "vector_add");
  CHECK(line.at("served") == "default config");
  const std::string key = line.at("key").get<std::string>();
  const std::string hash = line.at("source_hash").get<std::string>();

  // What else a record may hold: a kernel of the application's own, a line recorded from
  // another version of vector_add's source, a line torn by a crash.
  const fs::path mixed = scratch.path() / "mixed.jsonl";
  {
    json mine = line, stale = line;
    mine["kernel"] = "my_app_kernel";
    stale["source_hash"] = "0x00000000000000ab";
    write_text(mixed, mine.dump() + "\n" + stale.dump() + "\n" + recorded[0] + "\n" +
                          recorded[0].substr(0, recorded[0].size() / 2) + "\n");
  }
  const fs::path bundle = scratch.path() / "app.tunebundle";
  const ProcessResult tuned = cli.run({"record", "tune", mixed.string(), "--device", "vulkan",
                                       "--quick", "--bundle", bundle.string()});
  CAPTURE(tuned.describe());
  CHECK(tuned.exit_code == 1);  // some lines not tuned; the rest was
  CHECK(tuned.has("tuned vector_add {" + key + "}: "));
  CHECK(tuned.has("not tuned: kernel my_app_kernel key {" + key +
                  "}: not_found: no Autotuner given defines it"));
  CHECK(tuned.has("not tuned: kernel vector_add key {" + key +
                  "}: failed_precondition: recorded from source hash 0x00000000000000ab, but "
                  "the kernel's glsl source given hashes to " +
                  hash));
  CHECK(tuned.has("not tuned: record file " + mixed.string() + " line 4 skipped: "));
  CHECK(tuned.has("1 tuned, 3 not tuned"));
  CHECK(tuned.has("wrote " + bundle.string() + ": 1 decisions"));
  CHECK(tuned.has("tune record tune: 3 lines or keys of " + mixed.string() + " were not tuned"));
  const std::string winner = tuned_winner(tuned.out);
  REQUIRE(!winner.empty());

  // The clean record again: everything is stored already, exit 0.
  const ProcessResult again =
      cli.run({"record", "tune", record.string(), "--device", "vulkan", "--quick"});
  CHECK_MESSAGE(again.exit_code == 0, again.describe());
  CHECK_MESSAGE(again.has("1 tuned, 0 not tuned"), again.describe());

  // A new production process: the key hits the database, nothing is tuned or recorded.
  const ProcessResult hit = cli.run(demo_args());
  REQUIRE_MESSAGE(hit.exit_code == 0, hit.describe());
  CHECK_MESSAGE(hit.has("source: disk"), hit.describe());
  CHECK_MESSAGE(!hit.has("source: tuned"), hit.describe());
  CHECK_MESSAGE(field(hit.out, "chosen:") == winner, hit.describe());
  CHECK(lines_of(record).size() == 1);

  // Another machine, an empty database, the bundle shipped: served by it, nothing recorded.
  ScratchDir elsewhere;
  TuneCli shipped(elsewhere);
  const fs::path record2 = elsewhere.path() / "missed.jsonl";
  production(shipped, record2);
  shipped.set_env("TUNE_BUNDLES", bundle.string());
  const ProcessResult from_bundle = shipped.run(demo_args());
  REQUIRE_MESSAGE(from_bundle.exit_code == 0, from_bundle.describe());
  CHECK_MESSAGE(from_bundle.has("source: disk"), from_bundle.describe());
  CHECK_MESSAGE(field(from_bundle.out, "chosen:") == winner, from_bundle.describe());
  CHECK_FALSE(fs::exists(record2));
}

TEST_CASE("tune record tune: a missing record or a record of unknown kernels fails, naming it") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  require_vulkan(cli);
  const fs::path absent = scratch.path() / "absent.jsonl";
  ProcessResult r = cli.run({"record", "tune", absent.string(), "--device", "vulkan"});
  CHECK_MESSAGE(r.exit_code == 1, r.describe());
  CHECK_MESSAGE(r.has("tune record tune: io_error: record file " + absent.string()), r.describe());

  const fs::path foreign = scratch.path() / "foreign.jsonl";
  write_text(foreign,
             "{\"kernel\":\"softmax\",\"source_hash\":\"0x1\",\"key\":\"n=8\",\"device\":\"d\","
             "\"args\":[]}\nnot json at all\n\n");
  r = cli.run({"record", "tune", foreign.string(), "--device", "vulkan"});
  CHECK_MESSAGE(r.exit_code == 1, r.describe());
  CHECK_MESSAGE(r.has("not tuned: kernel softmax key {n=8}: not_found"), r.describe());
  CHECK_MESSAGE(r.has("line 2 skipped: not a JSON object"), r.describe());
  CHECK_MESSAGE(r.has("0 tuned, 2 not tuned"), r.describe());
}

TEST_CASE(
    "tune record tune --space: a space file's kernel, told from the bundled one by its source") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  require_vulkan(cli);
  const fs::path record = scratch.path() / "missed.jsonl";
  production(cli, record);
  const std::string space = (scratch.path() / "va.space.json").string();
  ProcessResult r = cli.run(
      {"import-space", std::string(TUNE_TOOLS_TEST_DATA) + "/t1_vector_add.json", "--out", space});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  const std::vector<std::string> run_space = {"run-space", space, "--device", "vulkan", "--quick"};
  r = cli.run(run_space);  // production: served by the chain, recorded
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  REQUIRE(lines_of(record).size() == 1);
  // The space's kernel is called vector_add too: without --space, the bundled vector_add (other
  // source) refuses the line; with it, the space's kernel tunes it.
  r = cli.run({"record", "tune", record.string(), "--device", "vulkan", "--quick"});
  CHECK_MESSAGE(r.exit_code == 1, r.describe());
  CHECK_MESSAGE(r.has("another version of the kernel"), r.describe());
  CHECK_MESSAGE(r.has("0 tuned, 1 not tuned"), r.describe());
  r = cli.run(
      {"record", "tune", record.string(), "--device", "vulkan", "--quick", "--space", space});
  CHECK_MESSAGE(r.exit_code == 0, r.describe());
  CHECK_MESSAGE(r.has("1 tuned, 0 not tuned"), r.describe());
  // Production again: every configuration from the database, nothing more recorded.
  r = cli.run(run_space);
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK_MESSAGE(r.has("(stored)"), r.describe());
  CHECK(lines_of(record).size() == 1);
  r = cli.run({"record", "tune", record.string(), "--space", scratch.path().string() + "/absent"});
  CHECK_MESSAGE(r.exit_code == 1, r.describe());
  CHECK_MESSAGE(r.has("tune record tune: "), r.describe());
}

// Another device of the family on one machine: lavapipe with LP_NATIVE_VECTOR_WIDTH=128 is
// named "... 128 bits" (another fingerprint, shaders compiled for 128-bit vectors) with the same
// vendor and device ID. A bundle tuned on the 256-bit device serves it at level 'same
// architecture' with zero tunings, the output checked there, and `tune cache explain` agrees.
TEST_CASE("tune demo on another lavapipe of the family: the bundle's decision, same architecture") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  require_vulkan(cli);
  if (!cli.run({"devices"}).has("llvmpipe"))
    TUNE_SKIP("LP_NATIVE_VECTOR_WIDTH makes a second device on lavapipe only");
  cli.set_env("LP_NATIVE_VECTOR_WIDTH", "256");
  ProcessResult r = cli.run(demo_args());
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  REQUIRE(r.has("source: tuned"));
  const std::string farm_winner = field(r.out, "chosen:");
  const std::string bundle = (scratch.path() / "fam.tunebundle").string();
  r = cli.run({"bundle", "create", "--from", cli.db_path().string(), "-o", bundle});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  fs::remove_all(cli.cache_dir());
  production(cli, scratch.path() / "missed.jsonl");
  cli.set_env("LP_NATIVE_VECTOR_WIDTH", "128");
  cli.set_env("TUNE_BUNDLES", bundle);
  cli.set_env("TUNE_PRINT_AUTOTUNING", "1");
  r = cli.run(demo_args());
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK_MESSAGE(r.has(", 128 bits)"), r.describe());  // the second device
  CHECK_MESSAGE(r.has("served by fallback level 'same architecture'"), r.describe());
  CHECK_MESSAGE(r.has("256 bits)"), r.describe());  // the decision's device, named
  CHECK(field(r.out, "chosen:") == farm_winner);
  CHECK(r.has("source: fallback"));
  CHECK(r.has("verified: output matches the CPU reference"));
  r = cli.run({"cache", "explain", "vector_add", "n=1048576;f32,f32,f32", "--device", "vulkan"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK_MESSAGE(r.has("served by: same architecture {" + farm_winner + "} from bundle " + bundle),
                r.describe());
}
