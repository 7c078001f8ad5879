// `tune distill` end to end through the real `tune` program, on a cache filled by the store
// API: the summary, the emitted JSON, the emitted header compiled by the compiler CMake used
// (its picks checked at compile time against the fit's), and the user mistakes named.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "stored_row.hpp"
#include "tune/sqlite_store.hpp"
#include "tune_process.hpp"

namespace {

using namespace tune;
using namespace tune::testing;

// Medians of the kernel "mm" at 12 keys: BM=32 wins for M <= 256, BM=128 above; BM=64 is
// 1.1x of the winner everywhere; N only scales the time.
std::map<std::string, std::map<std::string, double>> mm_medians() {
  std::map<std::string, std::map<std::string, double>> m;
  for (long long M : {64, 128, 256, 512, 1024, 2048})
    for (long long N : {64, 1024}) {
      const std::string key = "M=" + std::to_string(M) + ",N=" + std::to_string(N) + ";f32,f32,f32";
      const double t = static_cast<double>(M * N);
      const bool small = M <= 256;
      m[key] = {{"BM=32", small ? t : 3 * t}, {"BM=128", small ? 2.5 * t : t}, {"BM=64", 1.1 * t}};
    }
  return m;
}

void fill_store(const fs::path& db) {
  auto store = SqliteStore::open(db.string());
  for (const auto& [key, medians] : mm_medians()) {
    std::vector<StoredResult> rows;
    for (const auto& [config, median] : medians) rows.push_back(stored(config, median));
    store->save({"mm", 1, key, "lavapipe|test", "tool|1"}, rows);
  }
  // A kernel whose every row failed, and one whose keys differ in their buffer types.
  store->save({"broken", 1, "n=1;f32", "lavapipe|test", "tool|1"},
              std::vector<StoredResult>{stored("B=1", 100, StatusCode::launch_failed)});
  for (const char* key : {"n=1;f32", "n=2;f16"})
    store->save({"typed", 1, key, "lavapipe|test", "tool|1"},
                std::vector<StoredResult>{stored("B=1", 100), stored("B=2", 120)});
}

// The C++ source that includes `header` and checks, at compile time, that pick() returns the
// JSON's pick at every key.
std::string pick_checks(const nlohmann::json& j) {
  std::string s = "#include \"distilled.hpp\"\n";
  s +=
      "static_assert(distilled_mm::kConfigCount == " + std::to_string(j["configs"].size()) + ");\n";
  for (const auto& k : j["keys"]) {
    const std::string key = k["key"];
    const std::string m = key.substr(2, key.find(',') - 2);
    const std::string n = key.substr(key.find("N=") + 2, key.find(';') - key.find("N=") - 2);
    s += "static_assert(distilled_mm::pick(" + m + ", " + n +
         ") == " + std::to_string(k["pick"].get<int>()) + ", \"" + key + "\");\n";
  }
  return s + "int main() { return distilled_mm::kConfigs[0][0] == '\\0'; }\n";
}

}  // namespace

TEST_CASE("tune distill: summary, JSON and a header that compiles and reproduces the fit") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  fill_store(cli.db_path());

  const ProcessResult sum = cli.run({"distill", "mm", "--configs", "2"});
  REQUIRE_MESSAGE(sum.exit_code == 0, sum.describe());
  CHECK_MESSAGE(sum.out.find("12 keys, 3 configurations stored") != std::string::npos,
                sum.describe());
  CHECK_MESSAGE(sum.out.find("| 2 | 1.000 | 1.000 | 1.000 |") != std::string::npos, sum.describe());
  CHECK_MESSAGE(sum.out.find("leave-one-out") != std::string::npos, sum.describe());
  CHECK_MESSAGE(sum.out.find("if M <= 256:") != std::string::npos, sum.describe());

  const fs::path json_path = scratch.path() / "mm.json";
  const ProcessResult js =
      cli.run({"distill", "mm", "--configs", "2", "--emit", "json", "--out", json_path.string()});
  REQUIRE_MESSAGE(js.exit_code == 0, js.describe());
  const nlohmann::json j = nlohmann::json::parse(read_text(json_path));
  CHECK(j["format"] == "libtune-distill");
  REQUIRE(j["keys"].size() == 12);
  // Every key's slowdown, recomputed from the medians written, within the reported figures.
  const auto medians = mm_medians();
  double log_sum = 0;
  for (const auto& k : j["keys"]) {
    const auto& m = medians.at(k["key"].get<std::string>());
    double best = 1e300;
    for (const auto& [c, t] : m) best = std::min(best, t);
    const double s = m.at(j["configs"][k["pick"].get<std::size_t>()].get<std::string>()) / best;
    CHECK(s <= j["training"]["max"].get<double>() + 1e-9);
    log_sum += std::log(s);
  }
  CHECK(std::exp(log_sum / 12) == doctest::Approx(j["training"]["geomean"].get<double>()));

  const fs::path header = scratch.path() / "distilled.hpp";
  const ProcessResult hd = cli.run({"distill", "mm", "--configs", "2", "--emit", "header", "--out",
                                    header.string(), "--namespace", "distilled_mm"});
  REQUIRE_MESSAGE(hd.exit_code == 0, hd.describe());
  write_text(scratch.path() / "check.cpp", pick_checks(j));
  const std::string compile = std::string("'") + TUNE_CXX_COMPILER + "' -std=c++17 -Wall -Wextra " +
                              "-Werror -c '" + (scratch.path() / "check.cpp").string() + "' -o '" +
                              (scratch.path() / "check.o").string() + "' 2>'" +
                              (scratch.path() / "compile.txt").string() + "'";
  const int rc = std::system(compile.c_str());
  CHECK_MESSAGE(rc == 0, compile << "\n"
                                 << read_text(scratch.path() / "compile.txt") << "\n"
                                 << read_text(header));
}

TEST_CASE("tune distill --single [--worst]: one configuration for every key") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  fill_store(cli.db_path());
  const ProcessResult r = cli.run({"distill", "mm", "--single"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK_MESSAGE(r.out.find("[0] BM=64  (12 keys)") != std::string::npos, r.describe());
  CHECK_MESSAGE(r.out.find("| 1 | 1.100 | 1.100 | 1.100 |") != std::string::npos, r.describe());
  const ProcessResult w = cli.run({"distill", "mm", "--single", "--worst"});
  REQUIRE_MESSAGE(w.exit_code == 0, w.describe());
  CHECK_MESSAGE(w.out.find("[0] BM=64") != std::string::npos, w.describe());
}

TEST_CASE("tune distill: mistakes are named") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  const ProcessResult empty = cli.run({"distill", "mm"});
  CHECK_MESSAGE(empty.exit_code != 0, empty.describe());
  CHECK_MESSAGE(empty.err.find("unknown kernel 'mm'") != std::string::npos, empty.describe());
  fill_store(cli.db_path());
  const std::vector<MistakeCase> cases = {
      {{"distill", "nope"}, "unknown kernel 'nope'"},
      {{"distill", "nope"}, "kernels there: broken, mm, typed"},
      {{"distill", "broken"}, "'broken' has no key with a successful configuration"},
      {{"distill", "mm", "--configs", "0"}, "--configs 0: at least 1"},
      {{"distill", "mm", "--worst"}, "--worst judges one configuration"},
      {{"distill", "mm", "--emit", "yaml"}, "--emit 'yaml'"},
      {{"distill", "mm", "--holdout", "1.5"}, "--holdout"},
      {{"distill", "typed", "--emit", "header"}, "key field 'types' is not numeric"},
  };
  for (const MistakeCase& c : cases) {
    const ProcessResult r = cli.run(c.args);
    CHECK_MESSAGE(r.exit_code != 0, r.describe());
    CHECK_MESSAGE(r.err.find(c.message) != std::string::npos, r.describe());
  }
}
