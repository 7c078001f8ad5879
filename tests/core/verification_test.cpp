// Verification while tuning: only what can win is verified (the winner rule's first, then the
// next when it fails), a wrong output never wins nor is stored as winning, and the reason
// (mismatch count, first bad index, errors) is recorded and stored. KernelDef::reference on the
// simulated device (its compare() is the host computation), the reference configuration, user
// verify callbacks and their exceptions; compare_host itself on planted mismatches. Every
// result and stored row says whether its output was verified, not checked or wrong, and
// AutotunerOptions::verify = every_configuration checks them all.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <stdexcept>

#include "log_capture.hpp"
#include "sim_fixture.hpp"
#include "tune/sqlite_store.hpp"

using namespace tune;
using namespace tune::testing;

namespace {

constexpr int kN = 1024;

// scale(in: f32, out: f32, n: i32): out = 2 * in. Configurations in `wrong` write out[17] and
// out[100] off by 0.5 (and BM=16 makes out[5] NaN when nan_at_5).
KernelDef scale_kernel(ConfigSpace space) {
  KernelDef def;
  def.name = "scale";
  def.sources = {sim_source()};
  def.signature.buffer("in", ElemType::f32).buffer("out", ElemType::f32).scalar("n", ElemType::i32);
  def.space = std::move(space);
  def.key = {KeySpec::exact("n")};
  def.dims = [](const Config&, ArgList) { return LaunchDims{{8, 1, 1}, {128, 1, 1}, 0}; };
  return def;
}

struct ScaleRig {
  SimDevice dev;
  Buffer in, out;
  std::vector<float> input;
  std::vector<int> wrong;  // BM values whose output is wrong

  ScaleRig() {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-4.0f, 4.0f);
    input.resize(kN);
    for (float& v : input) v = u(rng);
    in = dev.make_buffer<float>(input, "in").value();
    out = dev.alloc(kN * sizeof(float)).value();
    SimDevice::set_name(*out, "out");
    dev.set_cost_model(bm_model(64));
    dev.set_kernel_body([this](const Config& c, ArgList args, SimDevice&) {
      auto x = SimDevice::view<float>(args[0]);
      auto y = SimDevice::view<float>(args[1]);
      for (std::size_t i = 0; i < y.size(); ++i) y[i] = 2.0f * x[i];
      if (std::find(wrong.begin(), wrong.end(), c.get_int("BM")) != wrong.end()) {
        y[17] += 0.5f;
        y[100] -= 0.25f;
      }
    });
  }
  std::vector<ArgValue> args() {
    return {ArgValue::buf(*in, ElemType::f32, kN), ArgValue::buf(*out, ElemType::f32, kN),
            ArgValue(kN)};
  }
  std::vector<float> expected() const {
    std::vector<float> e(kN);
    for (int i = 0; i < kN; ++i) e[i] = 2.0f * input[i];
    return e;
  }
  ReferenceOutput host_reference() const {
    ReferenceOutput r;
    r.arg = "out";
    r.expected = [e = expected()](Device&, ArgList) -> Result<ExpectedOutput> {
      ExpectedOutput o;
      o.host.resize(e.size() * sizeof(float));
      std::memcpy(o.host.data(), e.data(), o.host.size());
      return o;
    };
    return r;
  }
};

const ConfigResult* result_of(const TuningReport& report, int bm) {
  for (const auto& r : report.results)
    if (r.config.get_int("BM") == bm) return &r;
  return nullptr;
}

// BM=`bm` failed its check: wrong_output with `reason` in the report, median +inf, and stored
// as failed with the reason, so no process picks it from those rows.
void check_failed_check(const TuningReport& report, MemoryStore& store, int bm,
                        const std::string& reason) {
  const ConfigResult* bad = result_of(report, bm);
  REQUIRE(bad != nullptr);
  CHECK(bad->status.code() == StatusCode::wrong_output);
  CHECK(bad->status.message().find(reason) != std::string::npos);
  CHECK(std::isinf(bad->stats.median));
  bool stored_failed = false;
  for (const auto& row : store.all_rows()) {
    if (row.config != "BM=" + std::to_string(bm)) continue;
    stored_failed =
        row.status == StatusCode::wrong_output && row.reason.find(reason) != std::string::npos;
  }
  CHECK(stored_failed);
}

}  // namespace

TEST_CASE("Verification: only the leader is verified, and a wrong leader hands the win on") {
  ScaleRig rig;
  rig.wrong = {64};  // the fastest
  KernelDef def = scale_kernel(bm_space({8, 16, 32, 64, 128}));
  std::vector<std::string> verified;
  def.verify = [&verified, &rig](Device& dev, ArgList args, const Config& c) {
    verified.push_back(c.to_string());
    auto out = static_cast<SimDevice&>(dev).read<float>(*args[1].buffer);
    const auto e = rig.expected();
    for (int i = 0; i < kN; ++i)
      if (out[static_cast<std::size_t>(i)] != e[static_cast<std::size_t>(i)])
        return Status(StatusCode::wrong_output, "out[" + std::to_string(i) + "] differs");
    return Status();
  };
  auto store = std::make_shared<MemoryStore>();
  AutotunerOptions opts = quiet_options();
  opts.store = store;
  auto tuner = make_tuner(def, opts);
  auto args = rig.args();
  REQUIRE(tuner->run(rig.dev, args).ok());
  // Five configurations timed, two verified: the leader (wrong) and the next best.
  CHECK(verified == std::vector<std::string>{"BM=64", "BM=32"});
  auto report = tuner->last_report(rig.dev, args);
  REQUIRE(report.has_value());
  CHECK(report->winner.to_string() == "BM=32");
  check_failed_check(*report, *store, 64, "out[17] differs");
  CHECK(report->times.verify > 0);
  // A second tuner on the same rows picks BM=32 too (and verifies it before using it).
  verified.clear();
  auto again = make_tuner(def, opts);
  REQUIRE(again->run(rig.dev, args).ok());
  CHECK(again->best(rig.dev, args)->to_string() == "BM=32");
  CHECK(verified == std::vector<std::string>{"BM=32"});
  // The output of run() is the winner's, and correct.
  CHECK(rig.dev.read<float>(*rig.out) == rig.expected());
}

TEST_CASE("Verification: the leader is checked while the race waits for a slow compile") {
  // BM=128 compiles slowly; the other four race, are decided, and the race waits for it with
  // nothing to time. The leader's check runs in that wait (overlapped with the compile), and
  // is not repeated when the leader wins. A wrong leader found there leaves the race with its
  // reason, the race goes on, and the next leader is checked in the same wait.
  ScaleRig rig;
  rig.dev.compile_delay_if([](const Config& c) { return c.get_int("BM") == 128; }, 300.0);
  KernelDef def = scale_kernel(bm_space({8, 16, 32, 64, 128}));
  std::vector<std::string> verified;
  std::vector<std::uint64_t> compiled_then;  // compiles finished at each check
  def.verify = [&](Device& dev, ArgList args, const Config& c) {
    verified.push_back(c.to_string());
    compiled_then.push_back(rig.dev.compiles());
    auto out = static_cast<SimDevice&>(dev).read<float>(*args[1].buffer);
    return out == rig.expected() ? Status()
                                 : Status(StatusCode::wrong_output, c.to_string() + " is wrong");
  };
  auto store = std::make_shared<MemoryStore>();
  AutotunerOptions opts = quiet_options();
  opts.store = store;
  auto args = rig.args();
  SUBCASE("a right leader: checked once, during the wait") {
    auto tuner = make_tuner(def, opts);
    REQUIRE(tuner->run(rig.dev, args).ok());
    CHECK(verified == std::vector<std::string>{"BM=64"});
    CHECK(compiled_then == std::vector<std::uint64_t>{4});  // BM=128 was still compiling
    auto report = tuner->last_report(rig.dev, args);
    REQUIRE(report.has_value());
    CHECK(report->winner.to_string() == "BM=64");
    CHECK(result_of(*report, 64)->verified);
    CHECK_FALSE(result_of(*report, 128)->verified);
  }
  SUBCASE("a wrong leader: dropped with its reason, the next one checked in the same wait") {
    rig.wrong = {64};
    auto tuner = make_tuner(def, opts);
    REQUIRE(tuner->run(rig.dev, args).ok());
    CHECK(verified == std::vector<std::string>{"BM=64", "BM=32"});
    CHECK(compiled_then == std::vector<std::uint64_t>{4, 4});
    auto report = tuner->last_report(rig.dev, args);
    REQUIRE(report.has_value());
    CHECK(report->winner.to_string() == "BM=32");
    check_failed_check(*report, *store, 64, "BM=64 is wrong");
    CHECK(rig.dev.read<float>(*rig.out) == rig.expected());
  }
}

TEST_CASE("Verification: a host reference is compared on the device, with the errors recorded") {
  ScaleRig rig;
  rig.wrong = {64, 32};
  KernelDef def = scale_kernel(bm_space({8, 16, 32, 64, 128}));
  def.reference.outputs = {rig.host_reference()};
  auto tuner = make_tuner(std::move(def));
  auto args = rig.args();
  REQUIRE(tuner->run(rig.dev, args).ok());
  CHECK(rig.dev.compares() == 3);  // 64 and 32 fail, 16 (the next best) passes
  auto report = tuner->last_report(rig.dev, args);
  REQUIRE(report.has_value());
  CHECK(report->winner.to_string() == "BM=16");
  for (int bm : {64, 32}) {
    const ConfigResult* r = result_of(*report, bm);
    REQUIRE(r != nullptr);
    CAPTURE(bm);
    CHECK(r->status.code() == StatusCode::wrong_output);
    const std::string& m = r->status.message();
    INFO(m);
    CHECK(m.find("output 'out'") != std::string::npos);
    CHECK(m.find("2 of 1024 elements") != std::string::npos);
    CHECK(m.find("first at index 17") != std::string::npos);
    CHECK(m.find("max abs error 0.5") != std::string::npos);
  }
  // Configurations that could not win were never verified.
  CHECK(result_of(*report, 8)->status.ok());
  CHECK(result_of(*report, 128)->status.ok());
}

TEST_CASE("Verification: the reference configuration's output is the expected one") {
  ScaleRig rig;
  rig.wrong = {64};
  KernelDef def = scale_kernel(bm_space({8, 16, 32, 64, 128}));
  ReferenceOutput out;
  out.arg = "out";
  def.reference.outputs = {out};
  def.reference.config = Config().set("BM", 8);
  auto tuner = make_tuner(std::move(def));
  auto args = rig.args();
  REQUIRE(tuner->run(rig.dev, args).ok());
  auto report = tuner->last_report(rig.dev, args);
  REQUIRE(report.has_value());
  CHECK(report->winner.to_string() == "BM=32");
  CHECK(result_of(*report, 64)->status.code() == StatusCode::wrong_output);
  CHECK(rig.dev.compares() == 2);
}

TEST_CASE("Verification: a wrong reference configuration makes every candidate fail") {
  ScaleRig rig;
  rig.wrong = {8};
  KernelDef def = scale_kernel(bm_space({16, 32, 64}));
  ReferenceOutput out;
  out.arg = "out";
  def.reference.outputs = {out};
  def.reference.config = Config().set("BM", 8);
  auto tuner = make_tuner(std::move(def));
  Status st = tuner->run(rig.dev, rig.args());
  CHECK(st.code() == StatusCode::all_failed);
  INFO(st.message());
  CHECK(st.message().find("wrong_output") != std::string::npos);
  CHECK_FALSE(tuner->best(rig.dev, rig.args()).has_value());
}

TEST_CASE("Verification: a device buffer as the expected output, and a tolerance") {
  ScaleRig rig;
  rig.wrong = {64};
  const auto e = rig.expected();
  Buffer expected = rig.dev.make_buffer<float>(e, "expected").value();
  KernelDef def = scale_kernel(bm_space({32, 64}));
  ReferenceOutput out;
  out.arg = "out";
  out.tolerance = Tolerance{0.6, 0};  // BM=64's errors (0.5, 0.25) are within it
  out.expected = [&](Device&, ArgList) -> Result<ExpectedOutput> {
    ExpectedOutput o;
    o.device = expected.get();
    return o;
  };
  def.reference.outputs = {out};
  auto tuner = make_tuner(std::move(def));
  REQUIRE(tuner->run(rig.dev, rig.args()).ok());
  CHECK(tuner->best(rig.dev, rig.args())->to_string() == "BM=64");
}

TEST_CASE("Verification: a reference naming no buffer argument ends the tuning") {
  ScaleRig rig;
  KernelDef def = scale_kernel(bm_space({32, 64}));
  ReferenceOutput out;
  out.arg = "n";
  out.expected = [](Device&, ArgList) -> Result<ExpectedOutput> { return ExpectedOutput{}; };
  def.reference.outputs = {out};
  auto tuner = make_tuner(std::move(def));
  Status st = tuner->run(rig.dev, rig.args());
  CHECK(st.code() == StatusCode::invalid_argument);
  INFO(st.message());
  CHECK(st.message().find("reference output 'n'") != std::string::npos);
}

TEST_CASE("Verification: an exception from verify ends the tuning naming verify and the config") {
  ScaleRig rig;
  KernelDef def = scale_kernel(bm_space({8, 32, 64}));
  def.verify = [](Device&, ArgList, const Config& c) -> Status {
    if (c.get_int("BM") == 64) throw std::runtime_error("checker broke");
    return Status();
  };
  auto tuner = make_tuner(std::move(def));
  Status st = tuner->run(rig.dev, rig.args());
  CHECK(st.code() == StatusCode::callback_failed);
  INFO(st.message());
  CHECK(st.message().find("verify") != std::string::npos);
  CHECK(st.message().find("BM=64") != std::string::npos);
  CHECK(st.message().find("checker broke") != std::string::npos);
  CHECK_FALSE(tuner->best(rig.dev, rig.args()).has_value());
}

TEST_CASE("Verification: measure() verifies every configuration it times") {
  ScaleRig rig;
  rig.wrong = {16};
  KernelDef def = scale_kernel(bm_space({8, 16, 32}));
  def.reference.outputs = {rig.host_reference()};
  auto tuner = make_tuner(std::move(def));
  auto args = rig.args();
  auto configs = tuner->candidates(rig.dev, args);
  REQUIRE(configs.ok());
  auto results = tuner->measure(rig.dev, args, *configs);
  REQUIRE(results.ok());
  CHECK(rig.dev.compares() == 3);
  for (const auto& r : *results) {
    CAPTURE(r.config.to_string());
    CHECK((r.status.code() == StatusCode::wrong_output) == (r.config.get_int("BM") == 16));
  }
}

TEST_CASE("Verification: a search strategy's winner is verified, a wrong one handed on") {
  ScaleRig rig;
  rig.wrong = {64};
  KernelDef def = scale_kernel(bm_space({8, 16, 32, 64, 128}));
  def.search.strategy = make_exhaustive_search();
  def.reference.outputs = {rig.host_reference()};
  auto tuner = make_tuner(std::move(def));
  auto args = rig.args();
  REQUIRE(tuner->run(rig.dev, args).ok());
  CHECK(tuner->best(rig.dev, args)->to_string() == "BM=32");
  CHECK(rig.dev.compares() == 2);
  auto report = tuner->last_report(rig.dev, args);
  REQUIRE(report.has_value());
  CHECK(result_of(*report, 64)->status.code() == StatusCode::wrong_output);
}

TEST_CASE("compare_host: planted mismatches, NaN, tolerances and integers") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-100.0f, 100.0f);
  std::vector<float> e(5000), a;
  for (float& v : e) v = u(rng);
  a = e;
  a[3] = e[3] * (1 + 1e-7f);  // within the default tolerance
  a[42] = e[42] + 1.0f;
  a[4999] = std::nanf("");
  const auto bytes = [](const auto& v) { return std::as_bytes(std::span(v)); };
  auto c =
      compare_host(bytes(a), bytes(e), {ElemType::f32, 5000, default_tolerance(ElemType::f32)});
  REQUIRE(c.ok());
  CHECK(c->mismatches == 2);
  CHECK(c->first_bad == 42);
  CHECK(std::isinf(c->max_abs));
  CHECK(c->to_string().find("2 of 5000 elements") != std::string::npos);
  // Half precision: 1.0 vs 1.5 (0x3c00, 0x3e00) at index 1, exact elsewhere.
  std::vector<std::uint16_t> h = {0x3c00, 0x3c00, 0xc000}, hb = {0x3c00, 0x3e00, 0xc000};
  auto ch = compare_host(bytes(hb), bytes(h), {ElemType::f16, 3, default_tolerance(ElemType::f16)});
  REQUIRE(ch.ok());
  CHECK(ch->mismatches == 1);
  CHECK(ch->first_bad == 1);
  CHECK(ch->max_abs == doctest::Approx(0.5));
  CHECK(ch->max_rel == doctest::Approx(0.5));
  // Integers are exact by default; a tolerance admits a difference.
  std::vector<std::int32_t> i0 = {1, 2, 3}, i1 = {1, 2, 5};
  CHECK(compare_host(bytes(i1), bytes(i0), {ElemType::i32, 3, {}})->mismatches == 1);
  CHECK(compare_host(bytes(i1), bytes(i0), {ElemType::i32, 3, {2, 0}})->mismatches == 0);
  // Too few bytes is an error naming the sizes.
  auto short_ = compare_host(bytes(i0), bytes(i0), {ElemType::i32, 4, {}});
  CHECK(short_.status().code() == StatusCode::invalid_argument);
}

// ---- Verification states: verified, not checked, wrong output (the report, the rows stored,
// AutotunerOptions::verify).

namespace {

// A definition of scale over BM in {8, 16, 32, 64, 128} (bm_model(64): 64 fastest, 128
// slowest) checked against the host reference.
KernelDef checked_scale(const ScaleRig& rig) {
  KernelDef def = scale_kernel(bm_space({8, 16, 32, 64, 128}));
  def.reference.outputs = {rig.host_reference()};
  return def;
}

// The stored row of BM=`bm`, if any.
std::optional<StoredResult> stored_row(const std::vector<StoredResult>& rows, int bm) {
  for (const auto& r : rows)
    if (r.config == "BM=" + std::to_string(bm)) return r;
  return std::nullopt;
}

// Rows as another process left them: every configuration timed (bm_model's medians), none
// checked.
void seed_unchecked(MemoryStore& store) {
  store.serve_everything = true;
  for (int bm : {8, 16, 32, 64, 128})
    store.seeded.push_back(stored_ok(Config().set("BM", bm), 1000.0 + 10.0 * std::abs(bm - 64)));
}

}  // namespace

TEST_CASE("Verification states: by default a wrong configuration that cannot win is not checked") {
  ScaleRig rig;
  rig.wrong = {128};  // the slowest: the winner rule never reaches it
  auto store = std::make_shared<MemoryStore>();
  AutotunerOptions opts = quiet_options();
  opts.store = store;
  auto tuner = make_tuner(checked_scale(rig), opts);
  auto args = rig.args();
  REQUIRE(tuner->run(rig.dev, args).ok());
  CHECK(rig.dev.compares() == 1);  // only the winner
  auto report = tuner->last_report(rig.dev, args);
  REQUIRE(report.has_value());
  REQUIRE(report->winner.to_string() == "BM=64");
  for (const ConfigResult& r : report->results) {
    CAPTURE(r.config.to_string());
    CHECK(r.status.ok());
    const bool winner = r.config.get_int("BM") == 64;
    CHECK(r.verified == winner);
    CHECK(r.verification() == (winner ? Verification::verified : Verification::not_checked));
  }
  // The garbage-computing configuration is stored ok on its timing, and says not checked.
  const auto rows = store->all_rows();
  REQUIRE(rows.size() == 5);
  for (const auto& row : rows) {
    CAPTURE(row.config);
    CHECK(row.status == StatusCode::ok);
    CHECK(row.verified == (row.config == "BM=64"));
  }
  CHECK(verification_of(stored_row(rows, 128)->status, stored_row(rows, 128)->verified) ==
        Verification::not_checked);
  // The printed report marks only the checked one.
  const std::string text = report->to_string();
  CHECK(text.find("(output verified)") == text.rfind("(output verified)"));
  CHECK(text.find("{BM=64} ") < text.find("(output verified)"));
}

TEST_CASE("Verification states: every_configuration checks each configuration before timing") {
  ScaleRig rig;
  rig.wrong = {128};
  auto store = std::make_shared<MemoryStore>();
  AutotunerOptions opts = quiet_options();
  opts.store = store;
  opts.verify = VerifyScope::every_configuration;
  auto tuner = make_tuner(checked_scale(rig), opts);
  auto args = rig.args();
  REQUIRE(tuner->run(rig.dev, args).ok());
  CHECK(rig.dev.compares() == 5);  // each once: the winner is not checked again
  auto report = tuner->last_report(rig.dev, args);
  REQUIRE(report.has_value());
  CHECK(report->winner.to_string() == "BM=64");
  for (const ConfigResult& r : report->results) {
    CAPTURE(r.config.to_string());
    CHECK(r.verified);
    if (r.config.get_int("BM") == 128) {
      CHECK(r.verification() == Verification::wrong_output);
      CHECK(r.stats.count == 0);  // never timed
    } else {
      CHECK(r.verification() == Verification::verified);
    }
  }
  check_failed_check(*report, *store, 128, "output 'out'");
  for (const auto& row : store->all_rows()) {
    CAPTURE(row.config);
    CHECK(verification_of(row.status, row.verified) ==
          (row.config == "BM=128" ? Verification::wrong_output : Verification::verified));
  }
  CHECK(rig.dev.read<float>(*rig.out) == rig.expected());
}

TEST_CASE("Verification states: a stored winner nobody checked is checked before its first use") {
  // Rows from another process, none checked, the fastest (BM=64) computing garbage: this
  // process checks it before launching it as the winner, stores it as wrong_output, and the
  // next (BM=32, also never checked) takes its place once checked. Nothing is timed.
  ScaleRig rig;
  rig.wrong = {64};
  auto store = std::make_shared<MemoryStore>();
  seed_unchecked(*store);
  AutotunerOptions opts = quiet_options();
  opts.store = store;
  auto tuner = make_tuner(checked_scale(rig), opts);
  auto args = rig.args();
  REQUIRE(tuner->run(rig.dev, args).ok());
  CHECK(rig.dev.compares() == 2);
  auto report = tuner->last_report(rig.dev, args);
  REQUIRE(report.has_value());
  CHECK(report->source == ResultSource::disk);
  CHECK(report->winner.to_string() == "BM=32");
  CHECK(result_of(*report, 64)->verification() == Verification::wrong_output);
  CHECK(result_of(*report, 32)->verification() == Verification::verified);
  for (int bm : {8, 16, 128})
    CHECK(result_of(*report, bm)->verification() == Verification::not_checked);
  CHECK(rig.dev.read<float>(*rig.out) == rig.expected());
  // Stored again: BM=64 as wrong_output with the reason; BM=32 as verified, its timing and
  // time as they were; the rows nobody checked are left alone.
  const auto rows = store->all_rows();
  CHECK(rows.size() == 2);
  REQUIRE(stored_row(rows, 64).has_value());
  CHECK(stored_row(rows, 64)->status == StatusCode::wrong_output);
  CHECK(stored_row(rows, 64)->reason.find("output 'out'") != std::string::npos);
  REQUIRE(stored_row(rows, 32).has_value());
  CHECK(stored_row(rows, 32)->status == StatusCode::ok);
  CHECK(stored_row(rows, 32)->verified);
  CHECK(stored_row(rows, 32)->stats.median == 1320.0);
  CHECK(stored_row(rows, 32)->unix_time == 1700000000);

  // A third process reads those rows: BM=64 is never launched again; BM=32 is reported verified
  // and still checked once more before this process launches it (its binary is this
  // process's).
  for (StoredResult& s : store->seeded)
    if (auto updated = stored_row(rows, std::stoi(s.config.substr(3)))) s = *updated;
  const auto compares_before = rig.dev.compares();
  auto third = make_tuner(checked_scale(rig), opts);
  REQUIRE(third->run(rig.dev, args).ok());
  CHECK(rig.dev.compares() == compares_before + 1);
  auto again = third->last_report(rig.dev, args);
  REQUIRE(again.has_value());
  CHECK(again->winner.to_string() == "BM=32");
  CHECK(result_of(*again, 32)->verification() == Verification::verified);
  CHECK(result_of(*again, 64)->verification() == Verification::wrong_output);
}

TEST_CASE("Verification states: every_configuration times and checks stored rows nobody checked") {
  ScaleRig rig;
  rig.wrong = {128};
  auto store = std::make_shared<MemoryStore>();
  seed_unchecked(*store);
  AutotunerOptions opts = quiet_options();
  opts.store = store;
  opts.verify = VerifyScope::every_configuration;
  auto tuner = make_tuner(checked_scale(rig), opts);
  auto args = rig.args();
  REQUIRE(tuner->run(rig.dev, args).ok());
  CHECK(rig.dev.compares() == 5);
  auto report = tuner->last_report(rig.dev, args);
  REQUIRE(report.has_value());
  CHECK(report->source == ResultSource::tuned);
  for (const ConfigResult& r : report->results) {
    CAPTURE(r.config.to_string());
    CHECK_FALSE(r.from_store);
    CHECK(r.verification() ==
          (r.config.get_int("BM") == 128 ? Verification::wrong_output : Verification::verified));
  }
  CHECK(store->all_rows().size() == 5);
}

TEST_CASE("Verification states: a search strategy reports and checks the same way") {
  for (VerifyScope scope : {VerifyScope::winner_candidates, VerifyScope::every_configuration}) {
    CAPTURE(static_cast<int>(scope));
    ScaleRig rig;
    rig.wrong = {128};
    KernelDef def = checked_scale(rig);
    def.search.strategy = make_exhaustive_search();
    auto store = std::make_shared<MemoryStore>();
    AutotunerOptions opts = quiet_options();
    opts.store = store;
    opts.verify = scope;
    auto tuner = make_tuner(std::move(def), opts);
    auto args = rig.args();
    REQUIRE(tuner->run(rig.dev, args).ok());
    const bool all = scope == VerifyScope::every_configuration;
    CHECK(rig.dev.compares() == (all ? 5u : 1u));
    auto report = tuner->last_report(rig.dev, args);
    REQUIRE(report.has_value());
    CHECK(report->winner.to_string() == "BM=64");
    CHECK(result_of(*report, 64)->verification() == Verification::verified);
    CHECK(result_of(*report, 128)->verification() ==
          (all ? Verification::wrong_output : Verification::not_checked));
    const auto rows = store->all_rows();
    REQUIRE(stored_row(rows, 64).has_value());
    CHECK(stored_row(rows, 64)->verified);
    REQUIRE(stored_row(rows, 128).has_value());
    CHECK(stored_row(rows, 128)->status == (all ? StatusCode::wrong_output : StatusCode::ok));
    CHECK(stored_row(rows, 16)->verified == all);
  }
}

TEST_CASE(
    "Verification states: the SQLite store keeps them, and a later every_configuration "
    "tuning checks what was not") {
  ScaleRig rig;
  rig.wrong = {128};
  auto store = SqliteStore::open(":memory:");
  AutotunerOptions opts = quiet_options();
  opts.store = store;
  auto args = rig.args();
  REQUIRE(make_tuner(checked_scale(rig), opts)->run(rig.dev, args).ok());
  auto rows = store->rows();
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 5);
  for (const CacheRow& row : *rows) {
    CAPTURE(row.result.config);
    CHECK(row.result.status == StatusCode::ok);
    CHECK(row.result.verified == (row.result.config == "BM=64"));
  }
  auto entries = store->list_entries();
  REQUIRE(entries.ok());
  REQUIRE(entries->size() == 1);
  CHECK(entries->front().best_config == "BM=64");
  CHECK(entries->front().best_verified);
  CHECK(entries->front().verified == 1);
  auto json = store->export_json();
  REQUIRE(json.ok());
  CHECK(json->find("\"verification\": \"not_checked\"") != std::string::npos);
  CHECK(json->find("\"verification\": \"verified\"") != std::string::npos);

  opts.verify = VerifyScope::every_configuration;
  REQUIRE(make_tuner(checked_scale(rig), opts)->run(rig.dev, args).ok());
  rows = store->rows();
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 5);
  for (const CacheRow& row : *rows) {
    CAPTURE(row.result.config);
    CHECK(verification_of(row.result.status, row.result.verified) ==
          (row.result.config == "BM=128" ? Verification::wrong_output : Verification::verified));
  }
}

// KernelDef::verify_applies: a verify hook that has nothing to compare for a call's arguments
// (as Python's per-call references) leaves every row not checked, and it is asked once per
// tuning; a throwing verify_applies is logged and the hook runs and answers for itself.
TEST_CASE("Verification states: verify_applies false leaves every row not checked") {
  for (int mode : {0, 1, 2}) {  // 0: says no, 1: says yes, 2: throws
    CAPTURE(mode);
    ScaleRig rig;
    int asked = 0, hook_calls = 0;
    KernelDef def = scale_kernel(bm_space({8, 16, 32, 64, 128}));
    def.verify = [&](Device&, ArgList, const Config&) {
      ++hook_calls;
      return Status();
    };
    def.verify_applies = [&](ArgList args) -> bool {
      ++asked;
      CHECK(args.size() == 3);
      if (mode == 2) throw std::runtime_error("no idea");
      return mode == 1;
    };
    LogCapture log;
    auto tuner = make_tuner(std::move(def), quiet_options());
    auto args = rig.args();
    REQUIRE(tuner->run(rig.dev, args).ok());
    CHECK(asked == 1);
    auto report = tuner->last_report(rig.dev, args);
    REQUIRE(report.has_value());
    for (const ConfigResult& r : report->results) {
      CAPTURE(r.config.to_string());
      const bool winner = r.config.to_string() == report->winner.to_string();
      CHECK(r.verified == (mode != 0 && winner));
    }
    CHECK(hook_calls == (mode == 0 ? 0 : 1));
    CHECK(log.count(LogLevel::warning, "verify_applies") == (mode == 2 ? 1 : 0));
  }
}
