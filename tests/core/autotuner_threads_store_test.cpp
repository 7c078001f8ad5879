// Autotuner: single-flight under threads, listener, printed reports, and a TuningStore.
#include <doctest/doctest.h>

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <latch>
#include <set>
#include <thread>

#include "sim_fixture.hpp"

using namespace tune;
using namespace tune::testing;

namespace {

std::set<std::string> timed(const SimDevice& dev) {
  std::set<std::string> out;
  for (const auto& e : events_with(dev.events(), "time "))
    out.insert(e.substr(5, e.find(" reps=") - 5));
  return out;
}

// Redirects file descriptor 2 into a temporary file until finish().
class StderrCapture {
 public:
  StderrCapture() {
    std::fflush(stderr);
    file_ = std::tmpfile();
    REQUIRE(file_ != nullptr);
    saved_ = dup(2);
    dup2(fileno(file_), 2);
  }
  ~StderrCapture() {
    if (file_ != nullptr) (void)finish();
  }
  std::string finish() {
    std::fflush(stderr);
    dup2(saved_, 2);
    close(saved_);
    std::rewind(file_);
    std::string out;
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, file_)) > 0;) out.append(buf, n);
    std::fclose(file_);
    file_ = nullptr;
    return out;
  }

 private:
  std::FILE* file_ = nullptr;
  int saved_ = -1;
};

}  // namespace

TEST_CASE("Autotuner: 8 threads with the same new key tune exactly once") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(64));
  std::atomic<int> tunings{0};
  AutotunerOptions opts = quiet_options();
  opts.listener = [&](const TuningReport&) { ++tunings; };
  auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64, 128, 256})), opts);
  auto args = rig.args(4096);

  constexpr int kThreads = 8;
  std::latch start(kThreads);
  std::vector<Status> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      results[static_cast<std::size_t>(t)] = tuner->run(rig.dev, args);
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& st : results) CHECK_MESSAGE(st.ok(), st.to_string());
  CHECK(tunings.load() == 1);
  CHECK(rig.dev.compiles() == 5);
  CHECK(timed(rig.dev).size() == 5);
  CHECK(events_with(rig.dev.events(), "launch BM=64").size() >= kThreads);
  CHECK(best_of(*tuner, rig.dev, args) == "BM=64");
}

TEST_CASE("Autotuner: threads with different keys tune each key once") {
  SimRig rig;
  std::atomic<int> tunings{0};
  AutotunerOptions opts = quiet_options();
  opts.listener = [&](const TuningReport&) { ++tunings; };
  auto tuner = make_tuner(sim_kernel(bm_space({16, 32})), opts);
  std::latch start(8);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      auto args = rig.args(100 + t % 4);  // four distinct keys, two threads each
      start.arrive_and_wait();
      for (int i = 0; i < 20; ++i)
        if (!tuner->run(rig.dev, args).ok()) ++failures;
    });
  }
  for (auto& t : threads) t.join();
  CHECK(failures.load() == 0);
  CHECK(tunings.load() == 4);
  CHECK(rig.dev.compiles() <= 8);
}

TEST_CASE("Autotuner: the listener gets one report per tuning") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(32));
  rig.dev.fail_compile_if([](const Config& c) { return c.get_int("BM") == 128; });
  std::vector<TuningReport> reports;
  AutotunerOptions opts = quiet_options();
  opts.listener = [&](const TuningReport& r) { reports.push_back(r); };
  auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 128})), opts);
  REQUIRE(tuner->run(rig.dev, rig.args(10)).ok());
  REQUIRE(tuner->run(rig.dev, rig.args(10)).ok());  // hit: no report
  REQUIRE(tuner->run(rig.dev, rig.args(20)).ok());  // new key
  REQUIRE(reports.size() == 2);
  const TuningReport& r = reports[0];
  CHECK(r.kernel == "sim_kernel");
  CHECK(r.key.find("n=10") != std::string::npos);
  CHECK(r.winner.to_string() == "BM=32");
  CHECK(r.source == ResultSource::tuned);
  REQUIRE(r.results.size() == 3);
  CHECK(reports[1].key.find("n=20") != std::string::npos);

  const std::string text = r.to_string();
  INFO(text);
  CHECK(text.find("sim_kernel") != std::string::npos);
  CHECK(text.find("n=10") != std::string::npos);
  CHECK(text.find("{BM=16}") != std::string::npos);
  CHECK(text.find("compile_error") != std::string::npos);  // BM=128's reason
  CHECK(text.find("winner {BM=32}") != std::string::npos);
  CHECK(text.find("median") != std::string::npos);
}

TEST_CASE("Autotuner: print = true writes each tuning report to stderr") {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(64));
  AutotunerOptions opts = quiet_options();
  opts.print = true;
  auto tuner = make_tuner(sim_kernel(bm_space({32, 64})), opts);
  StderrCapture capture;
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  const std::string err = capture.finish();
  INFO(err);
  CHECK(err.find("sim_kernel") != std::string::npos);
  CHECK(err.find("{BM=32}") != std::string::npos);
  CHECK(err.find("winner {BM=64}") != std::string::npos);
  CHECK(err.find("winner") == err.rfind("winner"));  // printed once: the hit prints nothing
  auto report = tuner->last_report(rig.dev, rig.args(1000));
  REQUIRE(report.has_value());
  CHECK(err.find(report->to_string().substr(0, report->to_string().find(" in "))) !=
        std::string::npos);
}

TEST_CASE("Autotuner: TUNE_PRINT_AUTOTUNING=1 turns printing on; print=false wins") {
  SimRig rig;
  ::setenv("TUNE_PRINT_AUTOTUNING", "1", 1);
  AutotunerOptions from_env = quiet_options();
  from_env.print.reset();
  auto printing = make_tuner(sim_kernel(bm_space({32, 64})), from_env);
  auto silent = make_tuner(sim_kernel(bm_space({32, 64})), quiet_options());
  ::unsetenv("TUNE_PRINT_AUTOTUNING");
  StderrCapture capture;
  REQUIRE(silent->run(rig.dev, rig.args(1000)).ok());
  std::string err = capture.finish();
  CHECK(err.find("winner") == std::string::npos);
  StderrCapture capture2;
  REQUIRE(printing->run(rig.dev, rig.args(1000)).ok());
  err = capture2.finish();
  CHECK(err.find("winner") != std::string::npos);
}

TEST_CASE("Autotuner + TuningStore: results are saved and reused by a new tuner") {
  auto store = std::make_shared<MemoryStore>();
  AutotunerOptions opts = quiet_options();
  opts.store = store;
  SimRig rig;
  rig.dev.set_cost_model(bm_model(64));
  rig.dev.fail_compile_if([](const Config& c) { return c.get_int("BM") == 16; });
  {
    auto first = make_tuner(sim_kernel(bm_space({16, 32, 64, 128})), opts);
    REQUIRE(first->run(rig.dev, rig.args(1000)).ok());
  }
  CHECK(store->saved_rows == 4);
  auto rows = store->all_rows();
  REQUIRE(rows.size() == 4);
  for (const auto& row : rows) {
    CAPTURE(row.config);
    if (row.config == "BM=16") {
      CHECK(row.status == StatusCode::compile_error);
      CHECK_FALSE(row.reason.empty());
    } else {
      CHECK(row.status == StatusCode::ok);
      CHECK(row.stats.median == 1000.0 + 10.0 * std::fabs(std::stod(row.config.substr(3)) - 64));
    }
  }
  CHECK(store->last_key.kernel == "sim_kernel");
  CHECK(store->last_key.device == rig.dev.info().fingerprint());
  CHECK(store->last_key.toolchain == rig.dev.info().toolchain_fingerprint());
  CHECK(store->last_key.source_hash == sim_source().hash());
  CHECK(store->last_key.key.find("n=1000") != std::string::npos);

  // A new tuner (a new process, in effect) reads every timing back: it compiles the winner
  // only and times nothing.
  rig.dev.reset_counters();
  auto second = make_tuner(sim_kernel(bm_space({16, 32, 64, 128})), opts);
  REQUIRE(second->run(rig.dev, rig.args(1000)).ok());
  CHECK(rig.dev.time_calls() == 0);
  CHECK(rig.dev.compiles() == 1);
  CHECK(rig.dev.events().back() == "launch BM=64");
  auto report = second->last_report(rig.dev, rig.args(1000));
  REQUIRE(report.has_value());
  CHECK(report->source == ResultSource::disk);
  CHECK(report->winner.to_string() == "BM=64");
  for (const auto& r : report->results) CHECK(r.from_store);
}

TEST_CASE("Autotuner + TuningStore: only configs without stored rows are timed") {
  auto store = std::make_shared<MemoryStore>();
  AutotunerOptions opts = quiet_options();
  opts.store = store;
  SimRig rig;
  rig.dev.set_cost_model(bm_model(256));
  {
    auto first = make_tuner(sim_kernel(bm_space({32, 64})), opts);
    REQUIRE(first->run(rig.dev, rig.args(1000)).ok());
  }
  rig.dev.reset_counters();
  auto grown = make_tuner(sim_kernel(bm_space({32, 64, 256})), opts);
  REQUIRE(grown->run(rig.dev, rig.args(1000)).ok());
  CHECK(timed(rig.dev) == std::set<std::string>{"BM=256"});
  auto report = grown->last_report(rig.dev, rig.args(1000));
  REQUIRE(report.has_value());
  CHECK(report->winner.to_string() == "BM=256");
  CHECK(report->source == ResultSource::tuned);
  for (const auto& r : report->results) CHECK(r.from_store == (r.config.get_int("BM") != 256));
  CHECK(store->all_rows().size() == 3);
}

TEST_CASE("Autotuner + TuningStore: stored timings decide; removed or corrupt rows never win") {
  auto store = std::make_shared<MemoryStore>();
  store->serve_everything = true;
  // The stored timings disagree with the model (they are what was measured before).
  store->seeded = {stored_ok(Config{{"BM", std::int64_t{8}}}, 1.0),  // not in the space
                   stored_ok(Config{{"BM", std::int64_t{32}}}, 900.0),
                   stored_ok(Config{{"BM", std::int64_t{64}}}, 700.0),
                   stored_ok(Config{{"BM", std::int64_t{128}}}, 500.0),
                   stored_ok(Config{{"XYZ", std::int64_t{128}}}, 2.0)};  // unknown parameter
  StoredResult corrupt;
  corrupt.config = "BM=";
  corrupt.stats.median = 0.5;
  store->seeded.push_back(corrupt);
  AutotunerOptions opts = quiet_options();
  opts.store = store;
  SimRig rig;
  rig.dev.set_cost_model(bm_model(32));
  auto tuner = make_tuner(sim_kernel(bm_space({32, 64, 128})), opts);
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  CHECK(best_of(*tuner, rig.dev, rig.args(1000)) == "BM=128");
  CHECK(rig.dev.time_calls() == 0);
  CHECK(rig.dev.compiles() == 1);
  auto report = tuner->last_report(rig.dev, rig.args(1000));
  REQUIRE(report.has_value());
  CHECK(report->results.size() == 3);
}

TEST_CASE("Autotuner + TuningStore: a stored failure is not retried") {
  auto store = std::make_shared<MemoryStore>();
  store->serve_everything = true;
  StoredResult failed;
  failed.config = "BM=64";
  failed.status = StatusCode::compile_error;
  failed.reason = "stored: ptxas ran out of registers";
  store->seeded = {failed};
  AutotunerOptions opts = quiet_options();
  opts.store = store;
  SimRig rig;
  rig.dev.set_cost_model(bm_model(64));
  auto tuner = make_tuner(sim_kernel(bm_space({32, 64, 128})), opts);
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  CHECK(timed(rig.dev) == std::set<std::string>{"BM=32", "BM=128"});
  auto report = tuner->last_report(rig.dev, rig.args(1000));
  REQUIRE(report.has_value());
  CHECK(report->winner.to_string() == "BM=32");
  for (const auto& r : report->results) {
    if (r.config.get_int("BM") != 64) continue;
    CHECK(r.from_store);
    CHECK(r.status.code() == StatusCode::compile_error);
    CHECK(r.status.message().find("ptxas") != std::string::npos);
    CHECK(std::isinf(r.stats.median));
  }
}

namespace {
// A store in which another process finishes the key between this process's first read and
// its claim: the first load() finds nothing, and the rows are there when try_claim() is
// granted (the other process saved them and let its claim go).
class LateRowsStore : public MemoryStore {
 public:
  std::vector<StoredResult> late_rows;
  bool try_claim(const StoreKey& key, std::chrono::milliseconds) override {
    if (!landed_) {
      landed_ = true;
      save(key, late_rows);
    }
    return true;
  }

 private:
  bool landed_ = false;
};
}  // namespace

TEST_CASE(
    "Autotuner + TuningStore: rows saved by another process just before the claim "
    "are used, not timed again") {
  auto store = std::make_shared<LateRowsStore>();
  store->late_rows = {stored_ok(Config{{"BM", std::int64_t{32}}}, 900.0),
                      stored_ok(Config{{"BM", std::int64_t{64}}}, 700.0),
                      stored_ok(Config{{"BM", std::int64_t{128}}}, 800.0)};
  AutotunerOptions opts = quiet_options();
  opts.store = store;
  SimRig rig;
  rig.dev.set_cost_model(bm_model(32));
  auto tuner = make_tuner(sim_kernel(bm_space({32, 64, 128})), opts);
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());
  CHECK(rig.dev.time_calls() == 0);
  CHECK(rig.dev.compiles() == 1);
  CHECK(rig.dev.events().back() == "launch BM=64");
  auto report = tuner->last_report(rig.dev, rig.args(1000));
  REQUIRE(report.has_value());
  CHECK(report->source == ResultSource::disk);
  for (const auto& r : report->results) CHECK(r.from_store);
}
