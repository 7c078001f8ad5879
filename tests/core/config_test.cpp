// Config, Value, Status and stable hashing.
#include <doctest/doctest.h>

#include "tune/backend/hash.hpp"
#include "tune/backend/subgroup_size.hpp"
#include "tune/config.hpp"
#include "tune/status.hpp"

using namespace tune;

TEST_CASE("Config: canonical text and hash do not depend on insertion order") {
  Config a;
  a.set("BN", 128).set("SPLIT", Value{true}).set("BM", 64);
  Config b;
  b.set("SPLIT", Value{true}).set("BM", 64).set("BN", 128);
  Config c{{"BM", std::int64_t{64}}, {"SPLIT", true}, {"BN", std::int64_t{128}}};
  CHECK(a.to_string() == "BM=64,BN=128,SPLIT=true");
  CHECK(a == b);
  CHECK(a == c);
  CHECK(a.to_string() == b.to_string());
  CHECK(a.hash() == b.hash());
  CHECK(a.hash() == c.hash());
  CHECK(a.hash() == stable_hash(a.to_string()));
}

TEST_CASE("Config: golden hash values are stable across processes and versions") {
  // Hashes key stored tuning results: these values were computed once and must never change.
  Config c;
  c.set("SPLIT", Value{true}).set("BN", 128).set("BM", 64);
  REQUIRE(c.to_string() == "BM=64,BN=128,SPLIT=true");
  CHECK(c.hash() == 0x3b4ab2cd23571032ULL);

  Config l;
  l.set("LAYOUT", "tn").set("BM", 64).set(kBlockX, 256).set(kNumStages, 3);
  REQUIRE(l.to_string() == "BM=64,LAYOUT=\"tn\";block=256x1x1,num_stages=3");
  CHECK(l.hash() == 0x8a67bc934cd3b169ULL);

  CHECK(stable_hash("") == 0xefd01f60ba992926ULL);
  CHECK(stable_hash("abc") == 0x33ebaf9927cbc5bdULL);
  CHECK(stable_hash("abc", 1) != stable_hash("abc"));
}

TEST_CASE("Config: different configs hash differently") {
  Config a{{"BM", std::int64_t{64}}};
  Config b{{"BM", std::int64_t{128}}};
  Config c{{"BN", std::int64_t{64}}};
  Config d{{"BM", std::int64_t{64}}};
  d.set(kNumWarps, 4);
  CHECK(a.hash() != b.hash());
  CHECK(a.hash() != c.hash());
  CHECK(a.hash() != d.hash());
  CHECK_FALSE(a == d);
}

TEST_CASE("Config: set replaces values, getters fall back") {
  Config c;
  c.set("BM", 64).set("BM", 32).set("FLAG", Value{false}).set("NAME", "tn");
  CHECK(c.params().size() == 3);
  CHECK(c.get_int("BM") == 32);
  CHECK(c.get_int("MISSING", -7) == -7);
  CHECK(c.get_int("NAME", 5) == 5);  // a string is not an integer
  CHECK(c.get_bool("FLAG", true) == false);
  CHECK(c.get_bool("MISSING", true) == true);
  CHECK(c.has("NAME"));
  CHECK_FALSE(c.has("name"));
  REQUIRE(c.find("NAME") != nullptr);
  CHECK(std::get<std::string>(*c.find("NAME")) == "tn");
  CHECK(c.find("nope") == nullptr);
}

TEST_CASE("Config: reserved launch names set launch options, not parameters") {
  Config c;
  c.set("BM", 64)
      .set(kBlockX, 256)
      .set(kNumWarps, 8)
      .set(kNumStages, 3)
      .set(kMaxRegisters, 128)
      .set(kSharedBytes, 16384)
      .set(kSubgroupSize, 16);
  CHECK(c.params().size() == 1);
  CHECK(c.launch().block == Dim3{256, 1, 1});
  CHECK(c.launch().num_warps == 8);
  CHECK(c.launch().num_stages == 3);
  CHECK(c.launch().max_registers == 128);
  CHECK(c.launch().shared_bytes == 16384u);
  CHECK(c.launch().subgroup_size == 16u);
  CHECK(c.to_string() ==
        "BM=64;block=256x1x1,num_warps=8,num_stages=3,max_registers=128,shared_bytes=16384,"
        "subgroup_size=16");
  CHECK(is_launch_option_name("block.y"));
  CHECK(is_launch_option_name("num_stages"));
  CHECK_FALSE(is_launch_option_name("BM"));
  CHECK_FALSE(is_launch_option_name("block"));
}

TEST_CASE("Config: parse round trip") {
  Config c;
  c.set("BM", 64).set("NEG", -3).set("SPLIT", Value{true}).set("OFF", Value{false});
  c.set("LAYOUT", "a \"quoted\" \\ str,ing;x").set(kBlockX, 128).set(kBlockY, 2);
  c.set(kNumStages, 4).set(kSubgroupSize, 32);
  const std::string text = c.to_string();
  auto parsed = Config::parse(text);
  REQUIRE(parsed.ok());
  CHECK(*parsed == c);
  CHECK(parsed->to_string() == text);
  CHECK(parsed->hash() == c.hash());

  auto empty = Config::parse("");
  REQUIRE(empty.ok());
  CHECK(*empty == Config{});
  CHECK(Config{}.to_string().empty());
}

TEST_CASE("check_subgroup_size: 0 or a power of two in the device's range, else unavailable") {
  DeviceInfo amd;
  amd.name = "RDNA";
  amd.backend = "vulkan";
  amd.min_subgroup_size = 32;
  amd.max_subgroup_size = 64;
  CHECK(check_subgroup_size(0, amd).ok());
  CHECK(check_subgroup_size(32, amd).ok());
  CHECK(check_subgroup_size(64, amd).ok());
  for (std::uint32_t bad : {1u, 16u, 48u, 128u}) {
    const Status s = check_subgroup_size(bad, amd);
    CHECK(s.code() == StatusCode::unavailable);
    CHECK(s.message().find("subgroup_size " + std::to_string(bad) + " on RDNA") !=
          std::string::npos);
    CHECK(s.message().find("powers of two from 32 to 64") != std::string::npos);
  }
  DeviceInfo cuda;
  cuda.name = "H200";
  cuda.min_subgroup_size = cuda.max_subgroup_size = 32;
  CHECK(check_subgroup_size(32, cuda).ok());
  CHECK(check_subgroup_size(64, cuda).message().find("allows only 32") != std::string::npos);
  DeviceInfo fixed;  // Vulkan without subgroup size control
  fixed.backend = "vulkan";
  CHECK(check_subgroup_size(0, fixed).ok());
  const Status none = check_subgroup_size(32, fixed);
  CHECK(none.code() == StatusCode::unavailable);
  CHECK(none.message().find("subgroupSizeControl") != std::string::npos);
}

TEST_CASE("Config: parse rejects malformed text with invalid_argument") {
  for (const char* bad : {"BM", "BM=", "BM=abc", "=3", "BM=1,", "BM=1,BM=2", "BM=\"open",
                          "BM=1;bogus=3", "BM=1;block=1x2", "1X=2", "BM=1;num_warps=\"4\""}) {
    CAPTURE(bad);
    auto r = Config::parse(bad);
    CHECK_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::invalid_argument);
    CHECK_FALSE(r.status().message().empty());
  }
}

TEST_CASE("Value: types and canonical text") {
  CHECK(type_of(Value{std::int64_t{3}}) == ValueType::integer);
  CHECK(type_of(Value{true}) == ValueType::boolean);
  CHECK(type_of(Value{std::string("s")}) == ValueType::string);
  CHECK(to_string(ValueType::integer) == "integer");
  CHECK(to_string(ValueType::boolean) == "boolean");
  CHECK(to_string(ValueType::string) == "string");
  CHECK(value_to_text(Value{std::int64_t{128}}) == "128");
  CHECK(value_to_text(Value{std::int64_t{-1}}) == "-1");
  CHECK(value_to_text(Value{true}) == "true");
  CHECK(value_to_text(Value{false}) == "false");
  CHECK(value_to_text(Value{std::string("tn")}) == "\"tn\"");
}

TEST_CASE("Status: codes, names, context and Result") {
  for (int i = 0; i <= static_cast<int>(StatusCode::internal); ++i) {
    auto code = static_cast<StatusCode>(i);
    StatusCode back = StatusCode::internal;
    REQUIRE(parse_status_code(to_string(code), &back));
    CHECK(back == code);
  }
  StatusCode dummy{};
  CHECK_FALSE(parse_status_code("no_such_code", &dummy));
  CHECK(to_string(StatusCode::compile_error) == "compile_error");

  Status s(StatusCode::compile_error, "bad token");
  s.with_context("compiling matmul{BM=64}");
  CHECK(s.message() == "compiling matmul{BM=64}: bad token");
  CHECK(s.to_string() == "compile_error: compiling matmul{BM=64}: bad token");
  Status ok;
  ok.with_context("ignored");
  CHECK(ok.ok());
  CHECK(ok.to_string() == "ok");

  Result<int> r = Status(StatusCode::not_found, "gone");
  CHECK_FALSE(r.ok());
  CHECK_THROWS_AS(r.value(), Error);
  Result<int> bug = Status();
  CHECK(bug.status().code() == StatusCode::internal);
  Result<int> v = 5;
  CHECK(v.value() == 5);
  CHECK(v.status().ok());
}
