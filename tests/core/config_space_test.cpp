// ConfigSpace: lists, products, lazy enumeration, derive, constraints, contains, validate.
#include <doctest/doctest.h>

#include <limits>
#include <set>

#include "tune/config_space.hpp"
#include "tune/testing/sim_device.hpp"

using namespace tune;

namespace {

DeviceInfo device_with_threads(std::uint32_t max_threads) {
  DeviceInfo d;
  d.backend = "simulated";
  d.name = "hand-built";
  d.max_threads_per_block = max_threads;
  d.shared_bytes_per_block = 48 * 1024;
  return d;
}

}  // namespace

TEST_CASE("ConfigSpace: an explicit list keeps its order") {
  Config a{{"BM", std::int64_t{16}}};
  Config b{{"BM", std::int64_t{32}}};
  auto s = ConfigSpace::list({a, b});
  CHECK(s.is_list());
  CHECK(s.raw_size() == 2);
  CHECK(s.at(0) == a);
  CHECK(s.at(1) == b);
  auto all = s.enumerate(DeviceInfo{});
  REQUIRE(all.ok());
  CHECK(*all == std::vector<Config>{a, b});
  CHECK(s.validate().ok());
  CHECK(s.contains(a));
  CHECK_FALSE(s.contains(Config{{"BM", std::int64_t{64}}}));
}

TEST_CASE("ConfigSpace: a product enumerates in mixed radix, first dimension slowest") {
  ConfigSpace s;
  s.param("BM", {16, 32}).param("BN", {1, 2, 3}).param("SPLIT", std::vector<Value>{false, true});
  CHECK_FALSE(s.is_list());
  CHECK(s.dimensions().size() == 3);
  CHECK(s.raw_size() == 12);
  CHECK(s.at(0).to_string() == "BM=16,BN=1,SPLIT=false");
  CHECK(s.at(1).to_string() == "BM=16,BN=1,SPLIT=true");
  CHECK(s.at(2).to_string() == "BM=16,BN=2,SPLIT=false");
  CHECK(s.at(11).to_string() == "BM=32,BN=3,SPLIT=true");
  auto all = s.enumerate(DeviceInfo{});
  REQUIRE(all.ok());
  REQUIRE(all->size() == 12);
  std::set<std::string> distinct;
  for (std::size_t i = 0; i < all->size(); ++i) {
    CHECK((*all)[i] == s.at(i));
    distinct.insert((*all)[i].to_string());
  }
  CHECK(distinct.size() == 12);
}

TEST_CASE("ConfigSpace: a 10^6-point product is walked lazily") {
  ConfigSpace s;
  const std::initializer_list<int> ten = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  for (const char* name : {"A", "B", "C", "D", "E", "F"}) s.param(name, ten);
  CHECK(s.raw_size() == 1000000);
  // Random access without materialising anything.
  CHECK(s.at(123456).to_string() == "A=1,B=2,C=3,D=4,E=5,F=6");
  CHECK(s.at(999999).to_string() == "A=9,B=9,C=9,D=9,E=9,F=9");
  // Early stop: only the visited points are built.
  std::uint64_t seen = 0;
  std::uint64_t visited = s.for_each(DeviceInfo{}, [&](std::uint64_t index, const Config& c) {
    CHECK(index == seen);
    CHECK(c.get_int("F") == static_cast<std::int64_t>(index % 10));
    return ++seen < 5;
  });
  CHECK(seen == 5);
  CHECK(visited == 5);
  // enumerate refuses to materialise past its limit.
  auto too_many = s.enumerate(DeviceInfo{}, 1000);
  CHECK_FALSE(too_many.ok());
  CHECK(too_many.status().code() == StatusCode::invalid_argument);
}

TEST_CASE("ConfigSpace: raw_size saturates instead of overflowing") {
  ConfigSpace s;
  std::vector<Value> big;
  for (int i = 0; i < 1000; ++i) big.emplace_back(std::int64_t{i});
  for (int d = 0; d < 8; ++d) s.param("P" + std::to_string(d), big);  // 10^24 points
  CHECK(s.raw_size() == std::numeric_limits<std::uint64_t>::max());
  CHECK(ConfigSpace{}.raw_size() == 0);
}

TEST_CASE("ConfigSpace: derive fills launch options before constraints see the point") {
  ConfigSpace s;
  s.param("BM", {32, 64, 128})
      .derive([](Config& c) { c.set(kBlockX, static_cast<int>(c.get_int("BM") * 4)); })
      .constrain("block fits", [](const Config& c, const DeviceInfo& d) {
        return c.launch().block.product() <= d.max_threads_per_block;
      });
  CHECK(s.at(0).launch().block == Dim3{128, 1, 1});
  CHECK(s.at(2).launch().block == Dim3{512, 1, 1});
  auto small = s.enumerate(device_with_threads(256));
  REQUIRE(small.ok());
  REQUIRE(small->size() == 2);
  CHECK(small->back().get_int("BM") == 64);
  auto big = s.enumerate(device_with_threads(1024));
  REQUIRE(big.ok());
  CHECK(big->size() == 3);
  // contains() compares launch options as derived.
  Config derived = s.at(1);
  CHECK(s.contains(derived));
  Config wrong_block = derived;
  wrong_block.set(kBlockX, 999);
  CHECK_FALSE(s.contains(wrong_block));
}

TEST_CASE("ConfigSpace: constraints over hand-built DeviceInfo snapshots") {
  ConfigSpace s;
  s.param("BM", {16, 32, 64}).param("BK", {16, 32});
  s.constrain("smem", [](const Config& c, const DeviceInfo& d) {
    return static_cast<std::uint64_t>(c.get_int("BM") * c.get_int("BK") * 4 * 2) <=
           d.shared_bytes_per_block;
  });
  s.constrain("warp multiple", [](const Config& c, const DeviceInfo& d) {
    return d.warp_size == 0 || c.get_int("BM") % d.warp_size == 0;
  });
  DeviceInfo tiny = device_with_threads(1024);
  tiny.shared_bytes_per_block = 8192;  // BM*BK*8 <= 8192: BM*BK <= 1024
  tiny.warp_size = 32;
  std::vector<std::string> kept;
  s.for_each(tiny, [&](std::uint64_t, const Config& c) {
    kept.push_back(c.to_string());
    return true;
  });
  CHECK(kept == std::vector<std::string>{"BK=16,BM=32", "BK=32,BM=32", "BK=16,BM=64"});

  std::string rejected_by;
  CHECK_FALSE(
      s.accepts(Config{{"BM", std::int64_t{16}}, {"BK", std::int64_t{16}}}, tiny, &rejected_by));
  CHECK(rejected_by == "warp multiple");
  CHECK_FALSE(
      s.accepts(Config{{"BM", std::int64_t{64}}, {"BK", std::int64_t{32}}}, tiny, &rejected_by));
  CHECK(rejected_by == "smem");
  CHECK(s.accepts(Config{{"BM", std::int64_t{32}}, {"BK", std::int64_t{32}}}, tiny));
  // for_each still reports every visited point, accepted or not.
  CHECK(s.for_each(tiny, [](std::uint64_t, const Config&) { return true; }) == 6);
}

TEST_CASE("ConfigSpace: contains checks names, domains and types") {
  ConfigSpace s;
  s.param("BM", {32, 64}).param("LAYOUT", std::vector<Value>{std::string("nn"), std::string("tn")});
  CHECK(s.contains(Config{{"BM", std::int64_t{32}}, {"LAYOUT", std::string("tn")}}));
  CHECK_FALSE(s.contains(Config{{"BM", std::int64_t{48}}, {"LAYOUT", std::string("tn")}}));
  CHECK_FALSE(s.contains(Config{{"BM", std::int64_t{32}}, {"LAYOUT", std::string("rm -rf")}}));
  CHECK_FALSE(s.contains(Config{{"BM", std::int64_t{32}}}));  // missing parameter
  CHECK_FALSE(s.contains(Config{{"BM", std::int64_t{32}},
                                {"LAYOUT", std::string("tn")},
                                {"EXTRA", std::int64_t{1}}}));  // undeclared parameter
  CHECK_FALSE(s.contains(Config{{"BM", true}, {"LAYOUT", std::string("tn")}}));  // wrong type
}

TEST_CASE("ConfigSpace: launch-option dimensions") {
  ConfigSpace s;
  s.param("BM", {64}).param(std::string(kNumWarps), {4, 8}).param(std::string(kBlockX), {128});
  CHECK(s.validate().ok());
  Config c = s.at(1);
  CHECK(c.params().size() == 1);
  CHECK(c.launch().num_warps == 8);
  CHECK(c.launch().block.x == 128);
  CHECK(s.contains(c));
  Config other = c;
  other.set(kNumWarps, 2);
  CHECK_FALSE(s.contains(other));
}

TEST_CASE("ConfigSpace::validate reports user mistakes naming the culprit") {
  SUBCASE("empty space") {
    Status st = ConfigSpace{}.validate();
    CHECK(st.code() == StatusCode::invalid_argument);
    CHECK(st.message().find("empty") != std::string::npos);
    CHECK(ConfigSpace::list({}).validate().code() == StatusCode::invalid_argument);
  }
  SUBCASE("empty domain") {
    ConfigSpace s;
    s.param("BM", {16}).param("BN", std::vector<Value>{});
    Status st = s.validate();
    CHECK(st.code() == StatusCode::invalid_argument);
    CHECK(st.message().find("BN") != std::string::npos);
    CHECK(s.raw_size() == 0);
  }
  SUBCASE("duplicate dimension") {
    ConfigSpace s;
    s.param("BM", {16}).param("BK", {8}).param("BM", {32});
    Status st = s.validate();
    CHECK(st.code() == StatusCode::invalid_argument);
    CHECK(st.message().find("BM") != std::string::npos);
  }
  SUBCASE("duplicate list entry") {
    auto s = ConfigSpace::list({Config{{"BM", std::int64_t{16}}}, Config{{"BM", std::int64_t{32}}},
                                Config{{"BM", std::int64_t{16}}}});
    Status st = s.validate();
    CHECK(st.code() == StatusCode::invalid_argument);
    CHECK(st.message().find("BM=16") != std::string::npos);
  }
  SUBCASE("mixed value types") {
    ConfigSpace s;
    s.param("SPLIT", std::vector<Value>{std::int64_t{1}, true});
    Status st = s.validate();
    CHECK(st.code() == StatusCode::invalid_argument);
    CHECK(st.message().find("SPLIT") != std::string::npos);
  }
  SUBCASE("string launch option") {
    ConfigSpace s;
    s.param(std::string(kNumWarps), std::vector<Value>{std::string("four")});
    Status st = s.validate();
    CHECK(st.code() == StatusCode::invalid_argument);
    CHECK(st.message().find("num_warps") != std::string::npos);
  }
  SUBCASE("a valid space") {
    ConfigSpace s;
    s.param("BM", {16, 32}).param("SPLIT", std::vector<Value>{false, true});
    CHECK(s.validate().ok());
  }
}

TEST_CASE("ConfigSpace: constraints can use the simulated device's snapshot") {
  tune::testing::SimDevice dev;
  ConfigSpace s;
  s.param(std::string(kBlockX), {256, 1024, 2048});
  s.constrain("threads", [](const Config& c, const DeviceInfo& d) {
    return c.launch().block.product() <= d.max_threads_per_block;
  });
  auto all = s.enumerate(dev.info());
  REQUIRE(all.ok());
  CHECK(all->size() == 2);
}
