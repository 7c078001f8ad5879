// `tune bundle` as a real process: create -> show -> verify round trip, merge, explain, and
// the refusals (damaged bundle, missing database, a cache database given as a bundle).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../tools/tune_process.hpp"
#include "tune/sqlite_store.hpp"

using namespace tune;
using namespace tune::testing;
using nlohmann::json;

namespace {

StoredResult ok_row(const std::string& config, double median, std::uint32_t count) {
  StoredResult r;
  r.config = config;
  r.stats.count = count;
  r.stats.min = r.stats.p20 = median * 0.95;
  r.stats.median = r.stats.mean = median;
  r.stats.p80 = r.stats.max = median * 1.05;
  r.unix_time = 1700000000;
  return r;
}

StoreKey key_on(const std::string& device) {
  return StoreKey{"vector_add", 0xaa, "n=1024|f32", device, "nvrtc 12.4|libtune 0.1.0"};
}

// The CLI's database holds vector_add n=1024 on an H100 (BM=16 100 ns verified, BM=32 125 ns)
// and on an MI300X (BM=64 80 ns).
void seed(const TuneCli& cli) {
  auto db = SqliteStore::open(cli.db_path().string());
  StoredResult best = ok_row("BM=16", 100, 40);
  best.verified = true;
  db->save(key_on("cuda|NVIDIA H100|sm_90|550.54"),
           std::vector<StoredResult>{best, ok_row("BM=32", 125, 40)});
  db->save(key_on("hip|AMD Instinct MI300X|gfx942|6.2"),
           std::vector<StoredResult>{ok_row("BM=64", 80, 30)});
}

}  // namespace

TEST_CASE("tune bundle: create, show and verify round trip with margin and provenance") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  seed(cli);
  const std::string out = (scratch.path() / "app.tunebundle").string();
  ProcessResult r = cli.run(
      {"bundle", "create", "--from", cli.db_path().string(), "--device", "H100", "-o", out});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK(r.has("1 decisions, 2 rows"));

  r = cli.run({"bundle", "show", out, "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  const json info = json::parse(r.out);
  CHECK(info["libtune_version"] == "0.1.0");
  CHECK(info["source"] == "tune.db");
  REQUIRE(info["decisions"].size() == 1);
  const json& d = info["decisions"][0];
  CHECK(d["winner"] == "BM=16");
  CHECK(d["runner_up"] == "BM=32");
  CHECK(d["margin"].get<double>() == doctest::Approx(0.25));
  CHECK(d["winner_verified"] == true);
  CHECK(d["winner_stats"]["count"] == 40);
  CHECK(d["measured_unix"] == 1700000000);
  CHECK(d["device"] == "cuda|NVIDIA H100|sm_90|550.54");
  CHECK(d["toolchain"] == "nvrtc 12.4|libtune 0.1.0");

  r = cli.run({"bundle", "show", out});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK(r.has("+25.0%"));
  r = cli.run({"bundle", "verify", out});
  CHECK_MESSAGE(r.exit_code == 0, r.describe());
  CHECK(r.has("content checksum ok"));

  // A damaged copy fails verification, naming the file; the good one still passes.
  const std::string bytes = read_text(out);
  const std::string bad = (scratch.path() / "bad.tunebundle").string();
  write_text(bad, bytes.substr(0, bytes.size() / 2));
  r = cli.run({"bundle", "verify", out, bad});
  CHECK_MESSAGE(r.exit_code != 0, r.describe());
  CHECK(r.has(out + ": ok"));
  CHECK(r.has("bad.tunebundle: FAILED"));
}

TEST_CASE("tune bundle merge is idempotent and keeps every device - explain names the layer") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  seed(cli);
  const std::string h100 = (scratch.path() / "h100.tunebundle").string();
  const std::string mi300 = (scratch.path() / "mi300.tunebundle").string();
  const std::string all = (scratch.path() / "all.tunebundle").string();
  for (const auto& [device, file] : {std::pair{"H100", h100}, std::pair{"MI300X", mi300}}) {
    ProcessResult r = cli.run(
        {"bundle", "create", "--from", cli.db_path().string(), "--device", device, "-o", file});
    REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  }
  ProcessResult r = cli.run({"bundle", "merge", "-o", all, h100, mi300});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK(r.has("2 decisions, 3 rows"));
  const std::string once = read_text(all);
  r = cli.run({"bundle", "merge", "-o", all, all, h100, mi300});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK(read_text(all) == once);

  // With no database of its own, the bundle serves; the database wins once it has the key.
  const std::string none = (scratch.path() / "none.db").string();
  r = cli.run(
      {"bundle", "explain", "vector_add", "--db", none, "--bundle", all, "--device", "H100"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK(r.has("winner {BM=16} served by bundle " + all));
  CHECK_FALSE(r.has("MI300X"));
  r = cli.run({"bundle", "explain", "vector_add", "--bundle", all, "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  const json keys = json::parse(r.out);
  REQUIRE(keys.size() == 2);
  for (const json& k : keys) CHECK(k["served_by"] == "database " + cli.db_path().string());
}

TEST_CASE("tune bundle explain --for-device shows the fallback chain's level") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  seed(cli);
  const std::string out = (scratch.path() / "app.tunebundle").string();
  ProcessResult r = cli.run({"bundle", "create", "--from", cli.db_path().string(), "-o", out});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  const std::string none = (scratch.path() / "none.db").string();
  // Another board of the H100's architecture: the H100's winner, from the bundle.
  r = cli.run({"bundle", "explain", "vector_add", "--db", none, "--bundle", out, "--for-device",
               "cuda|NVIDIA H100 NVL|sm_90|560.1"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK(r.has("same architecture {BM=16} decided on cuda|NVIDIA H100|sm_90|550.54 (bundle " + out +
              ")"));
  // Another NVIDIA architecture: the same vendor; another vendor's decision is never served.
  r = cli.run({"bundle", "explain", "vector_add", "--db", none, "--bundle", out, "--for-device",
               "cuda|NVIDIA A100|sm_80|550.54", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  json j = json::parse(r.out);
  REQUIRE(j.size() == 1);
  CHECK(j[0]["level"] == "same vendor");
  CHECK(j[0]["config"] == "BM=16");
  r = cli.run({"bundle", "explain", "vector_add", "--db", none, "--bundle", out, "--for-device",
               "vulkan|Some GPU|vk:4318:8817|1.0", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  j = json::parse(r.out);
  CHECK(j[0]["level"] == "nearest key or default config (decided at run time)");
  // The device's own decision (its toolchain given) is exact.
  r = cli.run({"bundle", "explain", "vector_add", "--db", none, "--bundle", out, "--for-device",
               "cuda|NVIDIA H100|sm_90|550.54", "--toolchain", "nvrtc 12.4|libtune 0.1.0"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK(r.has(": exact {BM=16}"));
}

TEST_CASE("tune bundle refuses a missing database, a cache given as a bundle, bad arguments") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  const std::string missing = (scratch.path() / "missing.db").string();
  const std::string out = (scratch.path() / "x.tunebundle").string();
  check_mistakes(cli, {
                          {{"bundle", "create", "--from", missing, "-o", out}, "missing.db"},
                          {{"bundle", "create", "-o", out}, "--from"},
                          {{"bundle", "show", missing}, "missing.db"},
                          {{"bundle", "merge", "-o", out, missing}, "missing.db"},
                      });
  CHECK_FALSE(fs::exists(out));
  seed(cli);
  ProcessResult r = cli.run({"bundle", "verify", cli.db_path().string()});
  CHECK(r.exit_code != 0);
  CHECK_MESSAGE(r.has("a libtune cache database, not a bundle"), r.describe());
}
