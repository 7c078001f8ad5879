// Bundles (tune/bundle.hpp): create from a database, read back with provenance and margin,
// merge (idempotent, every device kept), and the layered lookup (user's store first, then
// bundles in order, per configuration; writes and claims to the user's store only).
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "../cache/cache_test_util.hpp"
#include "tune/bundle.hpp"
#include "tune/sqlite_store.hpp"
#include "tune/version.hpp"

using namespace tune;
using namespace tune::cache_test;

namespace {

StoredResult failed_row(const std::string& config) {
  StoredResult r;
  r.config = config;
  r.status = StatusCode::compile_error;
  r.reason = "too many registers";
  r.unix_time = 1700000000;
  return r;
}

// A database at `path` holding `rows` for `key`.
void seed_db(const std::string& path, const StoreKey& key, const std::vector<StoredResult>& rows) {
  auto db = SqliteStore::open(path);
  db->save(key, rows);
}

std::string make_bundle(const TempDir& dir, const std::string& name, const StoreKey& key,
                        const std::vector<StoredResult>& rows) {
  const std::string db = dir.file(name + ".db");
  seed_db(db, key, rows);
  const std::string out = dir.file(name + ".tunebundle");
  Result<BundleInfo> info = create_bundle(db, out);
  REQUIRE_MESSAGE(info.ok(), info.status().to_string());
  return out;
}

const StoredResult* find(const std::vector<StoredResult>& rows, const std::string& config) {
  for (const auto& r : rows)
    if (r.config == config) return &r;
  return nullptr;
}

}  // namespace

TEST_CASE("create_bundle carries each decision's rows, winner, runner-up, margin, provenance") {
  TempDir dir;
  const std::string db = dir.file("tune.db");
  const StoreKey a = test_key("n=1024|f32");
  const StoreKey only_failed = test_key("n=2048|f32");
  seed_db(
      db, a,
      {ok_row("BM=64", 150), ok_row("BM=16", 100, 40), ok_row("BM=32", 120), failed_row("BM=128")});
  seed_db(db, only_failed, {failed_row("BM=16")});
  const std::string before = read_bytes(db);

  Result<BundleInfo> made = create_bundle(db, dir.file("app.tunebundle"));
  REQUIRE_MESSAGE(made.ok(), made.status().to_string());
  CHECK(read_bytes(db) == before);  // the source is only read

  Result<BundleInfo> info = read_bundle(dir.file("app.tunebundle"));
  REQUIRE_MESSAGE(info.ok(), info.status().to_string());
  CHECK(info->libtune_version == kVersion);
  CHECK(info->source == "tune.db");
  CHECK(info->created_unix > 1700000000);
  CHECK(info->problems.empty());
  // The key with no ok row is no decision and is not carried.
  REQUIRE(info->decisions.size() == 1);
  CHECK(info->rows == 4);
  const BundleDecision& d = info->decisions.front();
  CHECK(d.key.key == a.key);
  CHECK(d.key.device == a.device);
  CHECK(d.key.toolchain == a.toolchain);
  CHECK(d.key.source_hash == a.source_hash);
  CHECK(d.winner == "BM=16");
  CHECK(d.runner_up == "BM=32");
  CHECK(d.margin == doctest::Approx(0.2));
  CHECK(d.winner_stats.count == 40);
  CHECK(d.winner_stats.median == doctest::Approx(100));
  CHECK(d.measured_unix == 1700000000);
  CHECK(d.rows == 4);
}

TEST_CASE("create_bundle selects kernels and devices - nothing selected is an error") {
  TempDir dir;
  const std::string db = dir.file("tune.db");
  seed_db(db, key_on("cuda|NVIDIA H100|sm_90|550"), {ok_row("BM=16", 100)});
  seed_db(db, key_on("vulkan|llvmpipe|vk:65541:0|23.2"), {ok_row("BM=32", 900)});
  Result<BundleInfo> h100 =
      create_bundle(db, dir.file("h100.tunebundle"), BundleSelection{{"vector_add"}, {"H100"}});
  REQUIRE_MESSAGE(h100.ok(), h100.status().to_string());
  REQUIRE(h100->decisions.size() == 1);
  CHECK(h100->decisions[0].key.device.find("H100") != std::string::npos);
  CHECK(std::isnan(h100->decisions[0].margin));  // a single ok row: no runner-up

  Result<BundleInfo> none =
      create_bundle(db, dir.file("none.tunebundle"), BundleSelection{{"other_kernel"}, {}});
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().message().find(db) != std::string::npos);
  CHECK_FALSE(fs::exists(dir.file("none.tunebundle")));
  Result<BundleInfo> missing = create_bundle(dir.file("absent.db"), dir.file("x.tunebundle"));
  CHECK(missing.status().code() == StatusCode::not_found);
  CHECK_FALSE(fs::exists(dir.file("absent.db")));
}

TEST_CASE("layered lookup: the user's rows first, then bundles in order, per configuration") {
  TempDir dir;
  const StoreKey k = test_key();
  const std::string b1 = make_bundle(dir, "first", k, {ok_row("BM=16", 100), ok_row("BM=32", 120)});
  const std::string b2 = make_bundle(dir, "second", k, {ok_row("BM=32", 50), ok_row("BM=64", 90)});
  auto user = SqliteStore::open(":memory:");
  user->save(k, std::vector<StoredResult>{ok_row("BM=16", 200)});

  const std::vector<std::string> order = {b1, b2};
  std::shared_ptr<TuningStore> stack = stack_stores(user, order);
  const std::vector<StoredResult> rows = stack->load(k);
  REQUIRE(rows.size() == 3);
  REQUIRE(find(rows, "BM=16") != nullptr);
  CHECK(find(rows, "BM=16")->stats.median == doctest::Approx(200));  // the user's row wins
  CHECK(find(rows, "BM=16")->origin.empty());
  CHECK(find(rows, "BM=32")->stats.median == doctest::Approx(120));  // the first bundle's
  CHECK(find(rows, "BM=32")->origin == b1);
  CHECK(find(rows, "BM=64")->origin == b2);

  // The other order: the second bundle now wins BM=32.
  const std::vector<std::string> reversed = {b2, b1};
  CHECK(find(stack_stores(user, reversed)->load(k), "BM=32")->origin == b2);
  // Another key, device or toolchain is not served by the bundles.
  StoreKey other = k;
  other.device = "simulated|sim|s2|1.0";
  CHECK(stack->load(other).empty());
  // No bundle: the user's store itself.
  CHECK(stack_stores(user, {}) == user);
}

TEST_CASE("writes and claims go to the user's store only - a bundle is never modified") {
  TempDir dir;
  const StoreKey k = test_key();
  const std::string b = make_bundle(dir, "app", k, {ok_row("BM=16", 100)});
  const std::string bytes = read_bytes(b);
  const std::vector<std::string> bundles = {b};
  const std::string user_path = dir.file("user/tune.db");
  auto user = SqliteStore::open(user_path);
  std::shared_ptr<TuningStore> stack = stack_stores(user, bundles);

  StoredResult verified = ok_row("BM=16", 100);
  verified.verified = true;
  stack->save(k, std::vector<StoredResult>{verified, ok_row("BM=32", 130)});
  CHECK(stack->try_claim(test_key("n=1|f32"), std::chrono::seconds(30)));
  stack->release_claim(test_key("n=1|f32"));
  CHECK(user->load(k).size() == 2);
  CHECK(read_bytes(b) == bytes);
  const std::vector<StoredResult> rows = stack->load(k);
  REQUIRE(find(rows, "BM=16") != nullptr);
  CHECK(find(rows, "BM=16")->verified);  // the user's verified row replaced the shipped one
  CHECK(find(rows, "BM=16")->origin.empty());

  // Without a user's store: nothing is written anywhere, claims are granted.
  std::shared_ptr<TuningStore> bare = stack_stores(nullptr, bundles);
  bare->save(k, std::vector<StoredResult>{ok_row("BM=64", 10)});
  CHECK(bare->try_claim(k, std::chrono::seconds(30)));
  CHECK(bare->load(k).size() == 1);
  CHECK(read_bytes(b) == bytes);
  CHECK(files_starting(dir.path(), "app.tunebundle").size() == 1);  // nothing beside it
}

TEST_CASE("merge keeps every device's rows, the better row of one identity, and is idempotent") {
  TempDir dir;
  const StoreKey x = key_on("cuda|NVIDIA H100|sm_90|550");
  const StoreKey y = key_on("hip|AMD MI300X|gfx942|6.2");
  const std::string a = make_bundle(dir, "a", x, {ok_row("BM=16", 100, 20), ok_row("BM=32", 140)});
  const std::string b_db = dir.file("b.db");
  seed_db(b_db, y, {ok_row("BM=64", 80)});
  seed_db(b_db, x, {ok_row("BM=16", 95, 60)});  // more samples: better provenance
  const std::string b = dir.file("b.tunebundle");
  REQUIRE(create_bundle(b_db, b).ok());

  const std::vector<std::string> ab = {a, b};
  Result<BundleInfo> m = merge_bundles(ab, dir.file("m.tunebundle"));
  REQUIRE_MESSAGE(m.ok(), m.status().to_string());
  CHECK(m->decisions.size() == 2);
  CHECK(m->rows == 3);
  auto stack = stack_stores(nullptr, std::vector<std::string>{dir.file("m.tunebundle")});
  const auto xs = stack->load(x);
  REQUIRE(find(xs, "BM=16") != nullptr);
  CHECK(find(xs, "BM=16")->stats.count == 60);
  CHECK(stack->load(y).size() == 1);

  const std::string once = read_bytes(dir.file("m.tunebundle"));
  const std::vector<std::string> again = {dir.file("m.tunebundle"), a, b};
  REQUIRE(merge_bundles(again, dir.file("m.tunebundle")).ok());  // out is an input
  CHECK(read_bytes(dir.file("m.tunebundle")) == once);
  const std::vector<std::string> self = {dir.file("m.tunebundle"), dir.file("m.tunebundle")};
  REQUIRE(merge_bundles(self, dir.file("m2.tunebundle")).ok());
  CHECK(read_bytes(dir.file("m2.tunebundle")) == once);

  // An unusable input: an error naming it, nothing written.
  write_bytes(dir.file("junk.tunebundle"), "not a bundle at all");
  const std::vector<std::string> bad = {a, dir.file("junk.tunebundle")};
  Result<BundleInfo> refused = merge_bundles(bad, dir.file("m3.tunebundle"));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message().find("junk.tunebundle") != std::string::npos);
  CHECK_FALSE(fs::exists(dir.file("m3.tunebundle")));
}
