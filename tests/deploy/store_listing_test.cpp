// TuningStore::find_rows through every layer: the user's file, bundles (rows carry their
// origin, the user's row of a configuration wins), and the warm start that reads it: a search
// on a new key starts from a bundle's winners, as it does from the user's file.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "../cache/cache_test_util.hpp"
#include "../core/sim_fixture.hpp"
#include "tune/bundle.hpp"
#include "tune/sqlite_store.hpp"

using namespace tune;
using namespace tune::testing;

namespace {

// The effort tests' 40x50 grid: the standard effort searches it, so a warm start shows.
KernelDef grid_kernel() {
  ConfigSpace space;
  std::vector<Value> m, n;
  for (int i = 1; i <= 40; ++i) m.emplace_back(std::int64_t{i});
  for (int i = 1; i <= 50; ++i) n.emplace_back(std::int64_t{i});
  space.param("BM", m).param("BN", n);
  return sim_kernel(std::move(space));
}

SimDevice::CostModel grid_cost() {
  return [](const Config& c, ArgList) {
    const double a = static_cast<double>(c.get_int("BM")) - 40 * 2.0 / 3.0;
    const double b = static_cast<double>(c.get_int("BN")) - 50 / 3.0;
    return 1000.0 + 5.0 * (a * a + b * b);
  };
}

}  // namespace

TEST_CASE("find_rows: every layer answers, the user's row of a configuration wins") {
  cache_test::TempDir dir;
  const StoreKey key{"k", 7, "n=1", "sim|dev", "tc"};
  const std::string farm = dir.file("farm.db");
  {
    auto db = SqliteStore::open(farm);
    const std::vector<StoredResult> rows{cache_test::ok_row("BM=16", 100),
                                         cache_test::ok_row("BM=32", 50)};
    db->save(key, rows);
  }
  const std::string bundle = dir.file("app.tunebundle");
  REQUIRE(create_bundle(farm, bundle).ok());

  auto user = SqliteStore::open(dir.file("user.db"));
  const std::vector<StoredResult> mine{cache_test::ok_row("BM=16", 10)};
  user->save(key, mine);
  std::shared_ptr<TuningStore> stack = stack_stores(user, std::vector<std::string>{bundle});

  const std::vector<CacheRow> rows = stack->find_rows(CacheFilter{"k", "", "sim|"});
  REQUIRE(rows.size() == 2);
  // The winner rule's order over the merged rows: the user's BM=16 (10 ns) first.
  CHECK(rows[0].result.config == "BM=16");
  CHECK(rows[0].result.origin.empty());
  CHECK(rows[1].result.config == "BM=32");
  CHECK(rows[1].result.origin == bundle);
  CHECK(stack->find_rows(CacheFilter{"other", "", ""}).empty());
  CHECK(stack->find_rows(CacheFilter{"k", "", "cuda|"}).empty());
  // A store that cannot list keys answers nothing (the default).
  MemoryStore memory;
  memory.save(key, mine);
  CHECK(memory.find_rows(CacheFilter{}).empty());
}

TEST_CASE("warm start reads bundles: a new key starts from the shipped winner of another key") {
  cache_test::TempDir dir;
  const std::string farm = dir.file("farm.db");
  Config shipped;
  {
    SimRig rig;
    rig.dev.set_cost_model(grid_cost());
    rig.dev.set_record_events(false);
    AutotunerOptions o = quiet_options();
    o.store = SqliteStore::open(farm);
    auto tuner = make_tuner(grid_kernel(), o);
    REQUIRE(tuner->tune(rig.dev, rig.args(100)).ok());
    shipped = tuner->last_report(rig.dev, rig.args(100))->winner;
  }
  const std::string bundle = dir.file("app.tunebundle");
  REQUIRE(create_bundle(farm, bundle).ok());

  // A fresh process with an empty database and the bundle: key n=200 is in neither, so it is
  // tuned, and the bundle's winner of n=100 is its second point (after the untuned one).
  SimRig rig;
  rig.dev.set_cost_model(grid_cost());
  rig.dev.set_record_events(false);
  AutotunerOptions o = quiet_options();
  o.store = SqliteStore::open(dir.file("user.db"));
  o.bundles = {bundle};
  auto tuner = make_tuner(grid_kernel(), o);
  REQUIRE(tuner->tune(rig.dev, rig.args(200)).ok());
  const TuningReport warm = tuner->last_report(rig.dev, rig.args(200)).value();
  REQUIRE(warm.results.size() >= 2);
  CHECK(warm.results[0].config.to_string() == "BM=1,BN=1");
  CHECK(warm.results[1].config == shipped);
  CHECK_FALSE(warm.results[1].from_store);
  CHECK(warm.results[1].stats.count > 0);
}
