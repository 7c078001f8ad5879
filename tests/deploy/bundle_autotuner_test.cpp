// Bundles in the Autotuner, on the simulated device: a bundle made on one machine serves a
// fresh process with an empty database (no timing, strict mode passes), the report and the
// TUNE_PRINT_AUTOTUNING text name the bundle, TUNE_BUNDLES is read, and the user's own
// decision wins over the shipped one.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "../cache/cache_test_util.hpp"
#include "../core/sim_fixture.hpp"
#include "../support/scoped_env.hpp"
#include "tune/bundle.hpp"
#include "tune/sqlite_store.hpp"

using namespace tune;
using namespace tune::testing;

namespace {

// Tunes n=1000 on a device whose best is BM=`best` into the database at `db`, then bundles it.
std::string tuned_bundle(const cache_test::TempDir& dir, std::int64_t best) {
  const std::string db = dir.file("build-farm.db");
  SimRig rig;
  rig.dev.set_cost_model(bm_model(best));
  AutotunerOptions o = quiet_options();
  o.store = SqliteStore::open(db);
  auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64})), o);
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  const std::string out = dir.file("app.tunebundle");
  Result<BundleInfo> info = create_bundle(db, out);
  REQUIRE_MESSAGE(info.ok(), info.status().to_string());
  return out;
}

// An Autotuner in strict mode over `user` then `bundle`, after its run of n=1000.
std::unique_ptr<Autotuner> served_by(std::shared_ptr<TuningStore> user, const std::string& bundle,
                                     SimRig& rig) {
  AutotunerOptions o = quiet_options();
  o.store = std::move(user);
  o.bundles = {bundle};
  o.strict = true;
  auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64})), o);
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  return tuner;
}

}  // namespace

TEST_CASE("a bundle serves a fresh process in strict mode, with no timing, and says so") {
  cache_test::TempDir dir;
  const std::string bundle = tuned_bundle(dir, 32);
  const std::string bytes = cache_test::read_bytes(bundle);

  SimRig rig;
  rig.dev.set_cost_model(bm_model(64));  // this device would pick BM=64 if it tuned
  auto tuner = served_by(SqliteStore::open(dir.file("user.db")), bundle, rig);
  CHECK(rig.dev.time_calls() == 0);
  CHECK(best_of(*tuner, rig.dev, rig.args(1000)) == "BM=32");
  auto report = tuner->last_report(rig.dev, rig.args(1000));
  REQUIRE(report.has_value());
  CHECK(report->source == ResultSource::disk);
  bool named = false;
  for (const auto& r : report->results) named = named || (r.from_store && r.origin == bundle);
  CHECK(named);
  CHECK(report->to_string().find("from bundle " + bundle) != std::string::npos);
  CHECK(cache_test::read_bytes(bundle) == bytes);
  // Another key is not in the bundle: strict mode refuses it.
  CHECK(tuner->run(rig.dev, rig.args(2000)).code() == StatusCode::failed_precondition);
}

TEST_CASE("TUNE_BUNDLES is read after AutotunerOptions::bundles - the user's decision wins") {
  cache_test::TempDir dir;
  const std::string bundle = tuned_bundle(dir, 16);
  SimRig rig;
  rig.dev.set_cost_model(bm_model(64));
  {
    ScopedEnv env("TUNE_BUNDLES", (":" + dir.file("absent.tunebundle") + "::" + bundle).c_str());
    CHECK(bundle_paths_from_env() ==
          std::vector<std::string>{dir.file("absent.tunebundle"), bundle});
    AutotunerOptions o = quiet_options();
    o.store = SqliteStore::open(":memory:");
    o.strict = true;
    auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64})), o);
    REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
    CHECK(best_of(*tuner, rig.dev, rig.args(1000)) == "BM=16");
    CHECK(rig.dev.time_calls() == 0);
  }
  // The user's database holds its own tuning of the key: it wins over the bundle.
  auto user = SqliteStore::open(dir.file("mine.db"));
  {
    AutotunerOptions o = quiet_options();
    o.store = user;
    auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64})), o);
    REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
    CHECK(best_of(*tuner, rig.dev, rig.args(1000)) == "BM=64");
  }
  auto tuner = served_by(user, bundle, rig);
  CHECK(best_of(*tuner, rig.dev, rig.args(1000)) == "BM=64");
}
