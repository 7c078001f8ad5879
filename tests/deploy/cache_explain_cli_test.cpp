// `tune cache explain <kernel> <key>` as a real process: which level of the lookup serves one
// key (an exact row of the database or of a bundle, the fallback chain, the nearest key, the
// default configuration), and the refusals that name their culprit.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../tools/tune_process.hpp"
#include "tune/sqlite_store.hpp"

using namespace tune;
using namespace tune::testing;
using nlohmann::json;

namespace {

const std::string kH100 = "cuda|NVIDIA H100|sm_90|550.54";
const std::string kToolchain = "nvrtc 12.4|libtune 0.1.0";

StoredResult ok_row(const std::string& config, double median) {
  StoredResult r;
  r.config = config;
  r.stats.count = 30;
  r.stats.min = r.stats.p20 = median * 0.95;
  r.stats.median = r.stats.mean = median;
  r.stats.p80 = r.stats.max = median * 1.05;
  r.unix_time = 1700000000;
  return r;
}

void save(const std::string& db, const std::string& key, const std::string& best) {
  SqliteStore::open(db)->save(StoreKey{"vector_add", 0xaa, key, kH100, kToolchain},
                              std::vector<StoredResult>{ok_row(best, 100), ok_row("BM=8", 200)});
}

// The user's database holds n=1024 (BM=16); the bundle, built on the same H100, n=4096 (BM=64).
struct Setup {
  ScratchDir scratch;
  TuneCli cli{scratch};
  std::string bundle = (scratch.path() / "app.tunebundle").string();
  Setup() {
    save(cli.db_path().string(), "n=1024;f32", "BM=16");
    const std::string farm = (scratch.path() / "farm.db").string();
    save(farm, "n=4096;f32", "BM=64");
    const ProcessResult r = cli.run({"bundle", "create", "--from", farm, "-o", bundle});
    REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  }
  json explain(const std::string& key, const std::string& device = kH100) const {
    const ProcessResult r = cli.run({"cache", "explain", "vector_add", key, "--bundle", bundle,
                                     "--for-device", device, "--toolchain", kToolchain, "--json"});
    REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
    const json j = json::parse(r.out);
    REQUIRE(j.size() == 1);
    return j[0];
  }
};

}  // namespace

TEST_CASE("tune cache explain: each level of the lookup, and the configuration it serves") {
  Setup s;
  // A row of the user's database.
  json j = s.explain("n=1024;f32");
  CHECK(j["level"] == "exact");
  CHECK(j["config"] == "BM=16");
  CHECK(j["layer"] == "database " + s.cli.db_path().string());
  // A row only the bundle holds.
  j = s.explain("n=4096;f32");
  CHECK(j["level"] == "exact");
  CHECK(j["config"] == "BM=64");
  CHECK(j["layer"] == "bundle " + s.bundle);
  // Another board of the architecture: the chain's level, from the bundle's row.
  j = s.explain("n=4096;f32", "cuda|NVIDIA H100 NVL|sm_90|560.1");
  CHECK(j["level"] == "same architecture");
  CHECK(j["config"] == "BM=64");
  CHECK(j["decided_on"] == kH100);
  // A key no store holds: the nearest key of this device (log2 distance), database or bundle.
  j = s.explain("n=1500;f32");
  CHECK(j["level"] == "nearest key");
  CHECK(j["nearest_key"] == "n=1024;f32");
  CHECK(j["config"] == "BM=16");
  j = s.explain("n=3000;f32");
  CHECK(j["nearest_key"] == "n=4096;f32");
  CHECK(j["config"] == "BM=64");
  // Other buffer types: no key is near, the default configuration.
  j = s.explain("n=1024;f16");
  CHECK(j["level"] == "default config");
  CHECK(j["config"] == "");
  // The text form names the level, the configuration and its layer.
  const ProcessResult r = s.cli.run({"cache", "explain", "vector_add", "n=4096;f32", "--bundle",
                                     s.bundle, "--for-device", kH100, "--toolchain", kToolchain});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK(r.has("served by: exact {BM=64} from bundle " + s.bundle));
}

TEST_CASE("tune cache explain refuses a malformed key, an unknown kernel, an unreadable db") {
  Setup s;
  const std::string junk = (s.scratch.path() / "junk.db").string();
  std::ofstream(junk) << "this is not a database\n";
  const std::string missing = (s.scratch.path() / "missing.db").string();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"vector_add", "n=1024", "--for-device", kH100},
       "malformed key 'n=1024': no ';' between the key arguments and the buffer types"},
      {{"vector_add", "n=x;f32", "--for-device", kH100},
       "malformed key 'n=x;f32': 'n=x' is not name=integer"},
      {{"gemm", "n=1024;f32", "--for-device", kH100}, "unknown kernel 'gemm'"},
      {{"vector_add", "n=1024;f32", "--db", junk, "--for-device", kH100},
       "database " + junk + " is unreadable"},
      {{"vector_add", "n=1024;f32", "--db", missing, "--for-device", kH100},
       "database " + missing + " does not exist"},
  };
  for (const auto& [args, message] : cases) {
    std::vector<std::string> full = {"cache", "explain"};
    full.insert(full.end(), args.begin(), args.end());
    const ProcessResult r = s.cli.run(full);
    CHECK_MESSAGE(r.exit_code != 0, r.describe());
    CHECK_MESSAGE(r.err.find("tune cache explain: " + message) != std::string::npos, r.describe());
  }
}
