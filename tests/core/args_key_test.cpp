// Arguments, signatures and tuning keys.
#include <doctest/doctest.h>

#include "key_builder.hpp"
#include "tune/args.hpp"
#include "tune/device_info.hpp"
#include "tune/key.hpp"
#include "tune/testing/sim_device.hpp"

using namespace tune;
using tune::testing::SimDevice;

namespace {

// A matmul-like signature: a, b, c buffers and M, N, K scalars.
KernelSignature matmul_sig() {
  KernelSignature sig;
  sig.buffer("a", ElemType::f16).buffer("b", ElemType::f16).buffer("c", ElemType::f32);
  sig.scalar("M", ElemType::i32).scalar("N", ElemType::i32).scalar("K", ElemType::i64);
  return sig;
}

struct MatmulArgs {
  SimDevice dev;
  Buffer a = dev.alloc(64).value(), b = dev.alloc(64).value(), c = dev.alloc(64).value();
  std::vector<ArgValue> make(std::int32_t m, std::int32_t n, std::int64_t k,
                             ElemType ta = ElemType::f16) {
    return {ArgValue::buf(*a, ta, 8),
            ArgValue::buf(*b, ElemType::f16, 8),
            ArgValue::buf(*c, ElemType::f32, 8),
            ArgValue(m),
            ArgValue(n),
            ArgValue(k)};
  }
};

}  // namespace

TEST_CASE("ElemType: sizes, names, float-ness") {
  CHECK(size_of(ElemType::f16) == 2);
  CHECK(size_of(ElemType::bf16) == 2);
  CHECK(size_of(ElemType::f32) == 4);
  CHECK(size_of(ElemType::f64) == 8);
  CHECK(size_of(ElemType::i8) == 1);
  CHECK(size_of(ElemType::u64) == 8);
  CHECK(to_string(ElemType::f32) == "f32");
  CHECK(to_string(ElemType::bf16) == "bf16");
  CHECK(to_string(ElemType::u16) == "u16");
  CHECK(is_float(ElemType::f16));
  CHECK(is_float(ElemType::bf16));
  CHECK_FALSE(is_float(ElemType::i32));
}

TEST_CASE("ArgValue: scalar conversions") {
  CHECK(ArgValue(std::int32_t{-5}).as_int() == -5);
  CHECK(ArgValue(std::int32_t{-5}).type == ElemType::i32);
  CHECK(ArgValue(std::int32_t{-5}).scalar_size() == 4);
  CHECK(ArgValue(std::uint32_t{4000000000u}).as_int() == 4000000000LL);
  CHECK(ArgValue(std::int64_t{-1LL << 40}).as_int() == -(1LL << 40));
  CHECK(ArgValue(std::int64_t{7}).scalar_size() == 8);
  CHECK(ArgValue(2.5f).as_double() == 2.5);
  CHECK(ArgValue(2.5f).as_int() == 2);
  CHECK(ArgValue(-1.75).as_double() == -1.75);
  CHECK(ArgValue(-1.75).type == ElemType::f64);
  CHECK(ArgValue(std::int32_t{9}).as_double() == 9.0);
  SimDevice dev;
  auto buf = dev.alloc(16).value();
  ArgValue b = ArgValue::buf(*buf, ElemType::u8, 16);
  CHECK(b.kind == ArgKind::buffer);
  CHECK(b.buffer == buf.get());
  CHECK(b.count == 16);
}

TEST_CASE("KernelSignature: positions and check() messages name the culprit") {
  KernelSignature sig = matmul_sig();
  CHECK(sig.size() == 6);
  CHECK(sig.index_of("c") == 2);
  CHECK(sig.index_of("K") == 5);
  CHECK(sig.index_of("nope") == -1);
  MatmulArgs m;
  auto good = m.make(64, 64, 64);
  CHECK(sig.check(good).ok());

  auto short_list = good;
  short_list.pop_back();
  Status count = sig.check(short_list);
  CHECK(count.code() == StatusCode::invalid_argument);
  CHECK(count.message().find('6') != std::string::npos);
  CHECK(count.message().find('5') != std::string::npos);

  auto wrong_type = m.make(64, 64, 64, ElemType::f32);
  Status type = sig.check(wrong_type);
  CHECK(type.code() == StatusCode::invalid_argument);
  CHECK(type.message().find("'a'") != std::string::npos);
  CHECK(type.message().find("f16") != std::string::npos);

  auto wrong_kind = good;
  wrong_kind[1] = ArgValue(std::int32_t{3});
  Status kind = sig.check(wrong_kind);
  CHECK(kind.code() == StatusCode::invalid_argument);
  CHECK(kind.message().find("'b'") != std::string::npos);

  auto scalar_type = good;
  scalar_type[5] = ArgValue(std::int32_t{64});  // K is declared i64
  Status st = sig.check(scalar_type);
  CHECK(st.code() == StatusCode::invalid_argument);
  CHECK(st.message().find("'K'") != std::string::npos);

  auto null_buffer = good;
  null_buffer[2].buffer = nullptr;
  Status nb = sig.check(null_buffer);
  CHECK(nb.code() == StatusCode::invalid_argument);
  CHECK(nb.message().find("'c'") != std::string::npos);
}

TEST_CASE("next_pow2") {
  CHECK(next_pow2(-3) == 1);
  CHECK(next_pow2(0) == 1);
  CHECK(next_pow2(1) == 1);
  CHECK(next_pow2(2) == 2);
  CHECK(next_pow2(3) == 4);
  CHECK(next_pow2(1000) == 1024);
  CHECK(next_pow2(1024) == 1024);
  CHECK(next_pow2(1025) == 2048);
  CHECK(next_pow2((1LL << 40) + 1) == (1LL << 41));
}

TEST_CASE("Key: exact, next_pow2 and custom bucketing") {
  MatmulArgs m;
  auto kb = KeyBuilder::make(matmul_sig(), {KeySpec::exact("M"), KeySpec::pow2("N"),
                                            KeySpec::custom("K", [](std::int64_t k) {
                                              return (k + 127) / 128;  // multiples of 128
                                            })});
  REQUIRE(kb.ok());
  const std::uint64_t dev = 42;
  TuningKey k1 = kb->build(m.make(100, 1000, 256), dev);
  TuningKey k2 = kb->build(m.make(100, 600, 200), dev);   // N -> 1024, K -> 2
  TuningKey k3 = kb->build(m.make(101, 1000, 256), dev);  // exact M differs
  TuningKey k4 = kb->build(m.make(100, 1025, 256), dev);  // N -> 2048
  TuningKey k5 = kb->build(m.make(100, 1000, 257), dev);  // K -> 3
  CHECK(k1 == k2);
  CHECK(k1.hash == k2.hash);
  CHECK_FALSE(k1 == k3);
  CHECK_FALSE(k1 == k4);
  CHECK_FALSE(k1 == k5);
  CHECK(k1.hash != k3.hash);
  REQUIRE(k1.size == 4);  // three key values and the packed buffer types
  CHECK(k1.values[0] == 100);
  CHECK(k1.values[1] == 1024);
  CHECK(k1.values[2] == 2);
  CHECK(kb->specs().size() == 3);
}

TEST_CASE("Key: buffer element types and the device are part of the key") {
  MatmulArgs m;
  auto kb = KeyBuilder::make(matmul_sig(), {KeySpec::exact("M")});
  REQUIRE(kb.ok());
  TuningKey f16 = kb->build(m.make(64, 1, 1, ElemType::f16), 7);
  TuningKey bf16 = kb->build(m.make(64, 1, 1, ElemType::bf16), 7);
  TuningKey other_device = kb->build(m.make(64, 1, 1, ElemType::f16), 8);
  CHECK_FALSE(f16 == bf16);
  CHECK(f16.hash != bf16.hash);
  CHECK_FALSE(f16 == other_device);
  CHECK(f16.hash != other_device.hash);
  CHECK(kb->to_string(f16) == "M=64;f16,f16,f32");
  CHECK(kb->to_string(bf16) == "M=64;bf16,f16,f32");

  // Devices differ by fingerprint.
  DeviceInfo a = SimDevice::default_info();
  DeviceInfo b = a;
  b.name = "another simulated device";
  CHECK(a.fingerprint() != b.fingerprint());
  CHECK(a.fingerprint_hash() != b.fingerprint_hash());
  CHECK(a.fingerprint().find("simulated") != std::string::npos);
}

TEST_CASE("Key: a buffer key argument uses its element count") {
  MatmulArgs m;
  auto kb = KeyBuilder::make(matmul_sig(), {KeySpec::pow2("a")});
  REQUIRE(kb.ok());
  auto args = m.make(1, 1, 1);
  args[0].count = 5;
  TuningKey k5 = kb->build(args, 0);
  args[0].count = 8;
  TuningKey k8 = kb->build(args, 0);
  args[0].count = 9;
  TuningKey k9 = kb->build(args, 0);
  CHECK(k5.values[0] == 8);
  CHECK(k5 == k8);
  CHECK_FALSE(k8 == k9);
}

TEST_CASE("KeyBuilder::make reports user mistakes") {
  auto unknown = KeyBuilder::make(matmul_sig(), {KeySpec::exact("M"), KeySpec::exact("Q")});
  CHECK(unknown.status().code() == StatusCode::invalid_argument);
  CHECK(unknown.status().message().find("'Q'") != std::string::npos);

  auto no_fn = KeyBuilder::make(matmul_sig(), {KeySpec{"N", Bucket::custom, {}}});
  CHECK(no_fn.status().code() == StatusCode::invalid_argument);
  CHECK(no_fn.status().message().find("N") != std::string::npos);

  std::vector<KeySpec> too_many(kMaxKeyValues, KeySpec::exact("M"));
  auto many = KeyBuilder::make(matmul_sig(), too_many);
  CHECK(many.status().code() == StatusCode::invalid_argument);

  std::vector<KeySpec> most(kMaxKeyValues - 1, KeySpec::exact("M"));
  CHECK(KeyBuilder::make(matmul_sig(), most).ok());
  CHECK(KeyBuilder::make(matmul_sig(), {}).ok());
}

TEST_CASE("TuningKey: push, full, rehash") {
  TuningKey k;
  k.device_hash = 1;
  for (int i = 0; i < kMaxKeyValues; ++i) CHECK(k.push(i));
  CHECK_FALSE(k.push(99));
  CHECK(k.size == kMaxKeyValues);
  k.rehash();
  TuningKey same = k;
  same.rehash();
  CHECK(same == k);
  TuningKey changed = k;
  changed.values[3] = 1000;
  changed.rehash();
  CHECK_FALSE(changed == k);
  CHECK(changed.hash != k.hash);
}
