// Replay recordings (studies/replay.hpp): a recording rebuilds the product space it was recorded
// from, failed configurations stay in it as evaluated-but-infinite, rows cut short are
// dropped, and version-0 files get their dimensions inferred.
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "replay.hpp"
#include "replay_t4.hpp"
#include "tune/search.hpp"

namespace {

using tune::Config;
using tune::ConfigSpace;
using tune::DeviceInfo;

// A, B and num_stages, shared memory derived, the points with A * B == 60 rejected: 12 raw
// points, 10 accepted.
ConfigSpace live_space() {
  ConfigSpace s;
  s.param("A", {1, 2, 3})
      .param("B", {10, 20})
      .param(std::string(tune::kNumStages), {2, 3})
      .derive([](Config& c) {
        c.launch().shared_bytes =
            static_cast<std::uint32_t>(c.get_int("A") * c.get_int("B") * c.launch().num_stages);
      })
      .constrain("A * B != 60", [](const Config& c, const DeviceInfo&) {
        return c.get_int("A") * c.get_int("B") != 60;
      });
  return s;
}

double live_time(const Config& c) {
  return 1000.0 + 100.0 * std::abs(c.get_int("A") - 2) + c.get_int("B") + c.launch().num_stages;
}

bool fails(const Config& c) { return c.get_int("A") == 1 && c.get_int("B") == 20; }

// What `tuning_study record` writes for live_space(): every accepted point, A=1,B=20 failing.
std::string recording_text() {
  ConfigSpace s = live_space();
  auto configs = s.enumerate(DeviceInfo{});
  REQUIRE(configs.ok());
  std::string text = replay::header(
      s, {{"kernel", "toy"}, {"size", "1x1x1"}, {"accepted", std::to_string(configs->size())}});
  for (const Config& c : *configs) {
    tune::SampleStats st;
    st.count = 10;
    st.median = live_time(c);
    st.p20 = st.median - 1;
    st.p80 = st.median + 1;
    st.min = st.median - 2;
    tune::Status status = fails(c) ? tune::Status(tune::StatusCode::compile_error,
                                                  "ptxas\terror:\nuses too much shared data")
                                   : tune::Status();
    text += replay::row_line(c, fails(c) ? nullptr : &st, 12.5, status);
  }
  return text;
}

}  // namespace

TEST_CASE("a recording rebuilds the product space it was recorded from") {
  auto rec = replay::parse(recording_text());
  REQUIRE_MESSAGE(rec.ok(), rec.status().to_string());
  CHECK(rec->version == 1);
  CHECK(rec->declared_dims);
  CHECK(rec->meta_value("kernel") == "toy");
  CHECK(rec->accepted() == 10);
  REQUIRE(rec->rows.size() == 10);
  CHECK(rec->incomplete == 0);

  const ConfigSpace live = live_space();
  REQUIRE(rec->dims.size() == live.dimensions().size());
  for (std::size_t i = 0; i < rec->dims.size(); ++i) {
    CHECK(rec->dims[i].name == live.dimensions()[i].name);
    CHECK(rec->dims[i].values == live.dimensions()[i].values);
  }

  replay::Replay r = replay::make_replay(*rec);
  CHECK_FALSE(r.space.is_list());
  CHECK(r.space.raw_size() == live.raw_size());
  CHECK(r.recorded == 10);
  CHECK(r.failed == 2);  // A=1, B=20 at both stage counts
  // The same points, in the same index order, are accepted live and in the replay.
  for (std::uint64_t i = 0; i < live.raw_size(); ++i) {
    const Config lc = live.at(i), rc = r.space.at(i);
    CHECK(replay::project(lc, rec->dims) == rc);
    CHECK(live.accepts(lc, DeviceInfo{}) == r.space.accepts(rc, DeviceInfo{}));
  }
  // Values: the recorded medians; failed points evaluate to +inf.
  auto f = r.objective();
  for (const auto& row : rec->rows) {
    const Config p = replay::project(row.config, rec->dims);
    if (fails(row.config)) {
      CHECK(std::isinf(f(p)));
      CHECK(row.code() == "compile_error");
      CHECK(row.status.find('\t') == std::string::npos);
      CHECK(row.status.find('\n') == std::string::npos);
      CHECK(row.compile_ms == doctest::Approx(12.5));
    } else {
      CHECK(f(p) == doctest::Approx(live_time(row.config)));
      CHECK(row.reps == 10);
      CHECK(row.p20_ns == doctest::Approx(row.median_ns - 1));
    }
  }
  CHECK(r.best == doctest::Approx(1000.0 + 10 + 2));  // A=2, B=10, 2 stages
  CHECK(r.best_config.launch().shared_bytes == 40);   // the recorded config, derived part kept
}

TEST_CASE("every strategy searches the replay as a product; failures cost an evaluation") {
  auto rec = replay::parse(recording_text());
  REQUIRE(rec.ok());
  replay::Replay r = replay::make_replay(*rec);
  for (const char* name : {"exhaustive", "random", "annealing", "genetic"}) {
    CAPTURE(name);
    auto s = tune::make_search(name);
    auto res = s->search(r.space, DeviceInfo{}, r.objective(), {}, 7);
    REQUIRE(res.ok());
    CHECK(res->accepted_points == 10);
    CHECK(res->evaluations == 10);  // the two failed points included
    CHECK(res->best_value == doctest::Approx(r.best));
  }
  // A budget counts failed points like any other.
  tune::SearchBudget b;
  b.max_evaluations = 3;
  auto res = tune::make_search("random")->search(r.space, DeviceInfo{}, r.objective(), b, 1);
  REQUIRE(res.ok());
  CHECK(res->evaluations == 3);
}

TEST_CASE("rows cut short are dropped, a later row replaces an earlier one") {
  std::string text = recording_text();
  const std::string extra = "A=2,B=10;num_stages=2,shared_bytes=40\t5\t4\t6\t3\t10\t1.0\tok\n";
  text += extra;                                          // re-recorded: replaces the first row
  text += "# resumed\t10 rows present\n";                 // '#' lines may follow rows
  text += "A=3,B=10;num_stages=3,shared_bytes=90\t7\t6";  // killed mid-row: no newline
  auto rec = replay::parse(text);
  REQUIRE(rec.ok());
  CHECK(rec->rows.size() == 10);
  CHECK(rec->duplicates == 1);
  CHECK(rec->incomplete == 1);
  CHECK(replay::make_replay(*rec).best == doctest::Approx(5));

  // A row missing its last columns is dropped even with its newline.
  auto rec2 = replay::parse(recording_text() + "A=3,B=10;num_stages=3,shared_bytes=90\t7\n");
  REQUIRE(rec2.ok());
  CHECK(rec2->incomplete == 1);
  CHECK(rec2->rows.size() == 10);

  // A value outside the declared domains is not a point of the space.
  auto rec3 = replay::parse(recording_text() +
                            "A=4,B=10;num_stages=3,shared_bytes=120\t7\t6\t8\t5\t10\t1\tok\n");
  REQUIRE(rec3.ok());
  CHECK(rec3->outside == 1);
  CHECK(rec3->rows.size() == 10);
}

TEST_CASE("version 0: dimensions inferred, derived launch options are not dimensions") {
  // block.x = BM / TM (derived), num_stages free; "inf" and "0" mark failures.
  const std::string text =
      "BM=32,TM=4;block=8x1x1,num_stages=2\t100\n"
      "BM=32,TM=4;block=8x1x1,num_stages=3\t90\n"
      "BM=64,TM=4;block=16x1x1,num_stages=2\tinf\n"
      "BM=64,TM=8;block=8x1x1,num_stages=3\t0\n"
      "BM=32,TM=8;block=4x1x1,num_stages=2\t80\n";
  auto rec = replay::parse(text);
  REQUIRE_MESSAGE(rec.ok(), rec.status().to_string());
  CHECK(rec->version == 0);
  CHECK_FALSE(rec->declared_dims);
  std::vector<std::string> names;
  for (const auto& d : rec->dims) names.push_back(d.name);
  CHECK(names == std::vector<std::string>{"BM", "TM", "num_stages"});
  CHECK(rec->dims[0].values == std::vector<tune::Value>{std::int64_t{32}, std::int64_t{64}});
  replay::Replay r = replay::make_replay(*rec);
  CHECK(r.space.raw_size() == 8);
  CHECK(r.recorded == 5);
  CHECK(r.failed == 2);
  CHECK(r.best == doctest::Approx(80));
  auto all = tune::make_exhaustive_search()->search(r.space, DeviceInfo{}, r.objective(), {}, 0);
  REQUIRE(all.ok());
  CHECK(all->evaluations == 5);
}

TEST_CASE("garbage is an error, not an empty space") {
  CHECK_FALSE(replay::parse("").ok());
  CHECK_FALSE(replay::parse("hello\nworld\n").ok());
  CHECK(replay::parse("# libtune-replay 1\n# dim\tBM\tx y\n").status().code() ==
        tune::StatusCode::invalid_argument);
}

TEST_CASE("the checked-in recordings parse") {
  // A partial recording of the wide matmul space (326 of 1891 configs), a complete one of
  // vector_add's bundled space (24 configs, a boolean and a launch-option dimension).
  for (std::string file : {"/lavapipe_vulkan_matmul_f32_64_wide.tsv",
                           "/lavapipe_vulkan_vector_add_4096_bundled.tsv"}) {
    CAPTURE(file);
    auto rec = replay::read_file(TUNE_STUDIES_DATA + file);
    REQUIRE_MESSAGE(rec.ok(), rec.status().to_string());
    CHECK(rec->version == 1);
    CHECK(rec->declared_dims);
    CHECK(rec->rows.size() > 0);
    CHECK(rec->rows.size() <= rec->accepted());
    CHECK(rec->incomplete == 0);
    CHECK(rec->outside == 0);
    replay::Replay r = replay::make_replay(*rec);
    auto all = tune::make_exhaustive_search()->search(r.space, DeviceInfo{}, r.objective(), {}, 0);
    REQUIRE(all.ok());
    CHECK(all->evaluations == rec->rows.size());
    CHECK(all->best_value == r.best);
  }
  auto va = replay::read_file(TUNE_STUDIES_DATA "/lavapipe_vulkan_vector_add_4096_bundled.tsv");
  REQUIRE(va.ok());
  CHECK(va->rows.size() == va->accepted());
  CHECK(va->dims.size() == 3);
}

// ---- Kernel Tuner T4 files (replay_t4.hpp) ---------------------------------------------------

TEST_CASE("replay: a T4 document becomes rows, its failed and non-correct rows +inf") {
  const std::string doc = R"({"schema_version": "1.0.0", "results": [
    {"configuration": {"A": 1, "B": 10}, "times": {"runtimes": [1.0, 2.0, 3.0]},
     "invalidity": "correct"},
    {"configuration": {"A": 2, "B": 10}, "times": {"compilation": 5},
     "invalidity": "runtime"},
    {"configuration": {"A": 3, "B": 20}, "times": {"runtimes": ["RuntimeFailedConfig"]},
     "invalidity": "correct"},
    {"configuration": {"A": 9, "B": 20}, "times": {"runtimes": [1.0]}, "invalidity": "correct"}]})";
  std::vector<ConfigSpace::Dimension> dims = {{"A", {1, 2, 3}}, {"B", {10, 20}}};
  auto rec = replay::parse_t4(doc, dims);
  REQUIRE(rec.ok());
  REQUIRE(rec->rows.size() == 3);
  CHECK(rec->outside == 1);                               // A=9 is outside A's domain
  CHECK(rec->rows[0].median_ns == doctest::Approx(2e6));  // mean of 1, 2, 3 ms, in ns
  CHECK(rec->rows[0].ok());
  CHECK_FALSE(rec->rows[1].ok());
  CHECK(rec->rows[1].status == "failed: runtime");
  CHECK_FALSE(rec->rows[2].ok());
  CHECK(rec->rows[2].status == "failed: no runtimes");

  // Over a live space whose condition rejects A=2: that row is never asked for; the accepted
  // point without a row (A=1, B=20) evaluates to +inf.
  ConfigSpace live;
  live.param("A", {1, 2, 3})
      .param("B", {10, 20})
      .constrain("A != 2", [](const Config& c, const DeviceInfo&) { return c.get_int("A") != 2; });
  replay::Replay r = replay::make_replay(*rec, &live);
  CHECK(r.rejected_rows == 1);
  CHECK(r.unrecorded == 2);  // (1,20) and (3,10): accepted, no row
  CHECK(r.recorded == 2);
  CHECK(r.failed == 1);  // (3,20)
  auto all = tune::make_exhaustive_search()->search(r.space, {}, r.objective(), {}, 0);
  REQUIRE(all.ok());
  CHECK(all->evaluations == 4);
  CHECK(all->best.get_int("A") == 1);
  CHECK(all->best_value == doctest::Approx(2e6));

  CHECK_FALSE(replay::parse_t4("{\"results\": 3}", dims).ok());
  auto bad = replay::parse_t4(R"({"results": [{"configuration": {"A": null}}]})", dims);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("results[0].configuration.A") != std::string::npos);
}

TEST_CASE("replay: the gzip T4 fixture reads whole, and a missing file names itself") {
  auto rec = replay::read_t4(TUNE_STUDIES_DATA "/convolution_subset_A4000_T4.json.gz", {});
  REQUIRE(rec.ok());
  CHECK(rec->rows.size() == 538);
  std::size_t failed = 0;
  for (const auto& row : rec->rows) failed += row.ok() ? 0 : 1;
  CHECK(failed == 14);
  auto missing = replay::read_t4(TUNE_STUDIES_DATA "/no-such.json.gz", {});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message().find("no-such.json.gz") != std::string::npos);
}
