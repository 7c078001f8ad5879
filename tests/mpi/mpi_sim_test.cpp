// tune::mpi on the simulated device, one scenario per run under mpirun (tests/mpi/CMakeLists.txt
// runs each with -np 4). Every rank checks what it can see, the ranks compare what they
// decided (allgather), and each rank's exit code says whether its checks passed; mpirun's
// says whether all did. The CTest TIMEOUT is the watchdog for a hang.
//
//   mpi_sim_test <scenario>
//   one_tunes | share_space | share_space_ties | share_keys | keys_differ | throws | stall |
//   exits
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "mpi_rig.hpp"
#include "tune/mpi.hpp"
#include "tune/testing/quick_options.hpp"
#include "tune/testing/sim_device.hpp"
#include "tune/tune.hpp"

using namespace tune;
using tune::testing::SimDevice;

namespace {

tune::testing::MpiRank me;  // this process: its rank and failed checks

void check(bool ok, const std::string& what) { me.check(ok, what); }

// sim_kernel(x: f32 buffer, n: i32 scalar), key n, over BM.
KernelDef sim_kernel(std::vector<int> bms) {
  KernelDef def;
  def.name = "mpi_sim_kernel";
  KernelSource s;
  s.language = Language::simulated;
  s.entry = "sim_kernel";
  s.text = "// simulated";
  def.sources = {s};
  def.signature.buffer("x", ElemType::f32).scalar("n", ElemType::i32);
  std::vector<Value> values(bms.begin(), bms.end());
  def.space.param("BM", values);
  def.key = {KeySpec::exact("n")};
  def.dims = [](const Config& c, ArgList args) {
    LaunchDims d;
    const auto bm = static_cast<std::uint64_t>(std::max<std::int64_t>(1, c.get_int("BM", 1)));
    const auto n = static_cast<std::uint64_t>(std::max<std::int64_t>(1, args[1].as_int()));
    d.grid = {static_cast<std::uint32_t>((n + bm - 1) / bm), 1, 1};
    d.block = {128, 1, 1};
    return d;
  };
  return def;
}

std::vector<int> bm_values(int count) {
  std::vector<int> out;
  for (int i = 1; i <= count; ++i) out.push_back(8 * i);
  return out;
}

// Configs time() ran on `dev`, from its "time <config> reps=<n>" events.
std::set<std::string> timed_configs(const SimDevice& dev) {
  std::set<std::string> out;
  for (const auto& e : dev.events())
    if (e.rfind("time ", 0) == 0) out.insert(e.substr(5, e.find(" reps=") - 5));
  return out;
}

struct Rig {
  SimDevice dev;
  Buffer x;
  std::vector<std::vector<ArgValue>> arg_store;
  std::vector<ArgList> calls;

  explicit Rig(std::vector<int> ns) : dev(SimDevice::default_info()) {
    x = dev.alloc(4096 * sizeof(float)).value();
    arg_store.reserve(ns.size());
    for (int n : ns) {
      arg_store.push_back({ArgValue::buf(*x, ElemType::f32, 1024), ArgValue(n)});
      calls.push_back(arg_store.back());
    }
  }
};

std::unique_ptr<Autotuner> make_tuner(KernelDef def, std::shared_ptr<TuningStore> store) {
  AutotunerOptions o = tune::testing::quiet_options();
  o.store = std::move(store);
  o.persistent = o.store != nullptr;
  auto t = Autotuner::make(std::move(def), o);
  if (!t.ok()) {
    std::fprintf(stderr, "rank %d: Autotuner::make: %s\n", me.rank, t.status().to_string().c_str());
    std::exit(1);
  }
  return std::move(*t);
}

std::unique_ptr<mpi::Coordinator> make_coordinator(const Device& dev, double timeout_ms = 20000) {
  auto c = tune::testing::world_coordinator(dev, timeout_ms);
  if (!c.ok()) {
    std::fprintf(stderr, "rank %d: Coordinator::make: %s\n", me.rank,
                 c.status().to_string().c_str());
    std::exit(1);
  }
  return std::move(*c);
}

// The node store on a fresh database in this test's TUNE_CACHE_DIR.
std::shared_ptr<TuningStore> fresh_node_store() {
  const std::string path = default_cache_path();
  if (me.rank == 0 && !path.empty()) {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"})
      std::filesystem::remove(path + suffix, ec);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  auto s = mpi::node_store(MPI_COMM_WORLD, 20000);
  check(s.ok(), "node_store: " + s.status().to_string());
  return s.ok() ? *s : nullptr;
}

// One writer per node: rank 0's store writes, the others' are read-only. Returns the number
// of rows in the database per key, counted by rank 0 after every rank is done.
std::map<std::string, std::size_t> check_one_writer(const std::shared_ptr<TuningStore>& store) {
  auto sq = std::dynamic_pointer_cast<SqliteStore>(store);
  check(sq != nullptr, "node_store gave a SqliteStore");
  std::map<std::string, std::size_t> per_key;
  if (sq == nullptr) return per_key;
  check(sq->writable() == (me.rank == 0),
        "only node rank 0 writes (writable=" + std::to_string(sq->writable()) + ")");
  MPI_Barrier(MPI_COMM_WORLD);
  if (me.rank == 0) {
    auto rows = SqliteStore::open(sq->path(), SqliteStore::Options{CacheMode::readonly})->rows();
    check(rows.ok(), "reading the database back");
    if (rows.ok())
      for (const auto& r : *rows) ++per_key[r.key.key];
  }
  return per_key;
}

// Each rank's outcome configs, compared across ranks: all equal.
void check_same_everywhere(const std::vector<mpi::KeyOutcome>& outcomes) {
  tune::testing::decisions_agree(me, tune::testing::decisions_text(outcomes));
}

// Later run() calls are memory hits that launch the decided config.
void check_adopted(Autotuner& tuner, Rig& rig, const std::vector<mpi::KeyOutcome>& outcomes) {
  rig.dev.clear_events();
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    auto best = tuner.best(rig.dev, rig.calls[i]);
    check(best.has_value() && best->to_string() == outcomes[i].config.to_string(),
          "key " + outcomes[i].key + " is remembered as decided");
    check(tuner.run(rig.dev, rig.calls[i]).ok(), "run() after the collective tuning");
    check(!rig.dev.events().empty() &&
              rig.dev.events().back() == "launch " + outcomes[i].config.to_string(),
          "run() launches the decided config");
  }
  check(timed_configs(rig.dev).empty(), "run() timed nothing after the collective tuning");
}

int one_tunes() {
  Rig rig({100, 200, 300});
  rig.dev.set_cost_model([](const Config& c, ArgList a) {
    return 1000.0 + 10.0 * std::abs(static_cast<double>(c.get_int("BM") * 4 - a[1].as_int()));
  });
  auto store = fresh_node_store();
  auto tuner = make_tuner(sim_kernel(bm_values(12)), store);
  auto coord = make_coordinator(rig.dev);
  check(coord->group_size() == me.size && coord->groups() == 1, "one fingerprint group of all");
  auto out = coord->tune_collective(*tuner, rig.dev, rig.calls);
  check(out.ok(), "tune_collective: " + out.status().to_string());
  if (!out.ok()) return 1;
  // The leader tuned; the others timed nothing while waiting.
  const auto timed = timed_configs(rig.dev);
  if (me.rank == 0) {
    check(timed.size() == 12, "the leader timed every candidate");
  } else {
    check(timed.empty(), "a waiting rank timed nothing");
    for (const auto& o : *out) check(o.source == ResultSource::shared, "source shared");
  }
  check((*out)[0].config.to_string() == "BM=24" && (*out)[1].config.to_string() == "BM=48" &&
            (*out)[2].config.to_string() == "BM=72",
        "the modelled best per key");
  check_same_everywhere(*out);
  check_adopted(*tuner, rig, *out);
  auto rows = check_one_writer(store);
  if (me.rank == 0) {
    check(rows.size() == 3, "rows of 3 keys in the database");
    for (const auto& [k, n] : rows) check(n == 12, "12 rows for key " + k);
  }
  // A second call is all memory hits: the leader tunes nothing, the answer is the same.
  rig.dev.clear_events();
  auto again = coord->tune_collective(*tuner, rig.dev, rig.calls);
  check(again.ok() && timed_configs(rig.dev).empty(), "a second tune_collective times nothing");
  if (again.ok() && me.rank == 0) check((*again)[0].source == ResultSource::memory, "memory");
  return 0;
}

int share_space() {
  Rig rig({1000});
  rig.dev.set_cost_model([](const Config& c, ArgList) {
    return 1000.0 + 50.0 * std::abs(static_cast<double>(c.get_int("BM") - 56));
  });
  auto tuner = make_tuner(sim_kernel(bm_values(13)), nullptr);
  auto coord = make_coordinator(rig.dev);
  auto out = coord->share_space(*tuner, rig.dev, rig.calls);
  check(out.ok(), "share_space: " + out.status().to_string());
  if (!out.ok()) return 1;
  const auto& o = (*out)[0];
  check(o.config.to_string() == "BM=56", "the modelled best, BM=56, won: " + o.config.to_string());
  check(o.finalists.size() == 1, "one finalist: nothing timed twice");
  // This rank timed exactly its share, and the shares cover the space once.
  std::set<std::string> share;
  for (const auto& c : o.measured_here) share.insert(c.to_string());
  check(timed_configs(rig.dev) == share, "this rank timed exactly its share");
  const auto times = tune::testing::measured_counts(o.measured_here);
  check(times.size() == 13, "13 configs timed in all, not " + std::to_string(times.size()));
  for (const auto& [c, n] : times)
    check(n == 1, c + " timed by exactly one rank, not " + std::to_string(n));
  check(o.measured_here.size() == (me.rank == 0 ? 4u : 3u), "round-robin share size");
  check_same_everywhere(*out);
  check_adopted(*tuner, rig, *out);
  return 0;
}

int share_space_ties() {
  // BM=16 and BM=64 tie exactly; BM=40 is 1% slower (a finalist too); the rest far behind.
  // The finalists are timed again on the leader and ranked by the winner rule: all three are
  // within the 1% tie band, so they go in text order and the tie goes to "BM=16".
  Rig rig({1000});
  rig.dev.set_cost_model([](const Config& c, ArgList) {
    const auto bm = c.get_int("BM");
    if (bm == 16 || bm == 64) return 1000.0;
    if (bm == 40) return 1010.0;
    return 2000.0;
  });
  auto tuner = make_tuner(sim_kernel(bm_values(8)), nullptr);
  auto coord = make_coordinator(rig.dev);
  auto out = coord->share_space(*tuner, rig.dev, rig.calls);
  check(out.ok(), "share_space: " + out.status().to_string());
  if (!out.ok()) return 1;
  const auto& o = (*out)[0];
  check(o.config.to_string() == "BM=16", "the tie went to BM=16, not " + o.config.to_string());
  check(o.finalists == std::vector<std::string>{"BM=16", "BM=40", "BM=64"},
        "finalists BM=16, BM=40, BM=64 (the winner rule's order: one tie band, text order)");
  if (me.rank == 0) {
    const auto timed = timed_configs(rig.dev);
    for (const char* f : {"BM=16", "BM=64", "BM=40"})
      check(timed.count(f) == 1, std::string("the leader timed finalist ") + f);
  }
  check_same_everywhere(*out);
  return 0;
}

int share_keys() {
  Rig rig({8, 16, 24, 32, 40, 48, 16});  // the last repeats the second key: decided once
  rig.dev.set_cost_model([](const Config& c, ArgList a) {
    return 1000.0 + 10.0 * std::abs(static_cast<double>(c.get_int("BM") - a[1].as_int()));
  });
  auto store = fresh_node_store();
  auto tuner = make_tuner(sim_kernel(bm_values(8)), store);
  auto coord = make_coordinator(rig.dev);
  auto out = coord->share_keys(*tuner, rig.dev, rig.calls);
  check(out.ok(), "share_keys: " + out.status().to_string());
  if (!out.ok()) return 1;
  check(out->size() == 7 && (*out)[6].key == (*out)[1].key &&
            (*out)[6].config.to_string() == (*out)[1].config.to_string() &&
            (*out)[6].decided_by == 1,
        "a repeated key gets its first call's outcome");
  for (std::size_t i = 0; i < 6; ++i) {
    const auto& o = (*out)[i];
    const bool mine = static_cast<int>(i % static_cast<std::size_t>(me.size)) == me.rank;
    check(o.decided_by == static_cast<int>(i) % me.size, "key i is tuned by rank i % n");
    check(mine == (o.source != ResultSource::shared), "own keys tuned here, the rest shared");
    auto rep = tuner->last_report(rig.dev, rig.calls[i]);
    check(rep.has_value() && (rep->source == ResultSource::shared) == !mine,
          "the report says shared for keys tuned elsewhere");
  }
  check((*out)[2].config.to_string() == "BM=24" && (*out)[5].config.to_string() == "BM=48",
        "the modelled best");
  check_same_everywhere(*out);
  check_adopted(*tuner, rig, *out);
  // Only rank 0 writes, and it saved the rows of the keys that ranks 1..3 tuned.
  auto rows = check_one_writer(store);
  if (me.rank == 0) {
    check(rows.size() == 6,
          "rows of all 6 keys in the database, not " + std::to_string(rows.size()));
    for (const auto& [k, n] : rows) check(n == 8, "8 rows for key " + k);
  }
  return 0;
}

int keys_differ() {
  Rig rig({100, me.rank == 3 ? 999 : 200});
  auto tuner = make_tuner(sim_kernel(bm_values(4)), nullptr);
  auto coord = make_coordinator(rig.dev);
  for (int mode = 0; mode < 3; ++mode) {
    auto out = mode == 0   ? coord->tune_collective(*tuner, rig.dev, rig.calls)
               : mode == 1 ? coord->share_space(*tuner, rig.dev, rig.calls)
                           : coord->share_keys(*tuner, rig.dev, rig.calls);
    check(!out.ok() && out.status().code() == StatusCode::invalid_argument,
          "keys that differ are invalid_argument: " + out.status().to_string());
    const std::string msg = out.status().message();
    check(msg.find("call 1 of rank 3") != std::string::npos &&
              msg.find("n=999") != std::string::npos && msg.find("n=200") != std::string::npos,
          "the error names rank 3, the call and both keys: " + msg);
  }
  check(timed_configs(rig.dev).empty(), "nothing was tuned");
  return 0;
}

int throws() {
  Rig rig({1000});
  // Mode 2: rank 2's dims callback throws while it measures its share.
  KernelDef def = sim_kernel(bm_values(8));
  auto dims = def.dims;
  def.dims = [dims](const Config& c, ArgList a) {
    if (me.rank == 2) throw std::runtime_error("rank 2's dims gave up");
    return dims(c, a);
  };
  auto tuner = make_tuner(def, nullptr);
  auto coord = make_coordinator(rig.dev);
  auto out = coord->share_space(*tuner, rig.dev, rig.calls);
  check(
      !out.ok() && out.status().code() == StatusCode::callback_failed,
      "share_space: a throw on rank 2 is callback_failed everywhere: " + out.status().to_string());
  check(out.status().message().find("rank 2 failed measuring its share") != std::string::npos &&
            out.status().message().find("rank 2's dims gave up") != std::string::npos,
        "the error names rank 2 and its exception: " + out.status().message());
  // Mode 1: the leader's dims throws while tuning; the waiting ranks get its error. The
  // Coordinator is still usable after an error every rank received.
  def.dims = [dims](const Config& c, ArgList a) {
    if (me.rank == 0) throw std::runtime_error("the leader's dims gave up");
    return dims(c, a);
  };
  auto tuner1 = make_tuner(def, nullptr);
  auto out1 = coord->tune_collective(*tuner1, rig.dev, rig.calls);
  check(!out1.ok() && out1.status().code() == StatusCode::callback_failed,
        "tune_collective: the leader's throw is callback_failed everywhere: " +
            out1.status().to_string());
  check(out1.status().message().find("rank 0 failed on key") != std::string::npos &&
            out1.status().message().find("the leader's dims gave up") != std::string::npos,
        "the error names rank 0 and its exception: " + out1.status().message());
  // Mode 3: every configuration fails to launch on rank 1: all_failed everywhere.
  rig.dev.fail_launch_if([](const Config&) { return me.rank == 1; });
  Rig keys({1, 2, 3, 4});
  keys.dev.fail_launch_if([](const Config&) { return me.rank == 1; });
  auto tuner3 = make_tuner(sim_kernel(bm_values(3)), nullptr);
  auto out3 = coord->share_keys(*tuner3, keys.dev, keys.calls);
  check(!out3.ok() && out3.status().code() == StatusCode::all_failed,
        "share_keys: rank 1's all_failed reaches everyone: " + out3.status().to_string());
  check(out3.status().message().find("rank 1 failed on key {n=2") != std::string::npos,
        "the error names rank 1 and its key: " + out3.status().message());
  check(!coord->broken(), "errors that every rank received leave the Coordinator usable");
  return 0;
}

int stall() {
  Rig rig({1000});
  auto tuner = make_tuner(sim_kernel(bm_values(4)), nullptr);
  auto coord = make_coordinator(rig.dev, 1000);
  if (me.rank == 2) std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  auto out = coord->tune_collective(*tuner, rig.dev, rig.calls);
  check(!out.ok() && out.status().code() == StatusCode::timeout,
        "a stalled rank makes the call time out: " + out.status().to_string());
  check(out.status().message().find("tune_collective") != std::string::npos &&
            out.status().message().find("not complete after 1000 ms") != std::string::npos,
        "the timeout names the mode and the wait: " + out.status().message());
  check(coord->broken(), "the Coordinator is broken after a timeout");
  auto again = coord->tune_collective(*tuner, rig.dev, rig.calls);
  check(again.status().code() == StatusCode::failed_precondition, "and refuses later calls");
  std::fprintf(stderr, "rank %d: %s\n", me.rank, out.status().to_string().c_str());
  return 0;
}

int exits() {
  // Rank 1 exits in the middle of measuring its share; mpirun must end the job (the test
  // expects mpirun to fail, within the CTest TIMEOUT).
  Rig rig({1000});
  KernelDef def = sim_kernel(bm_values(8));
  auto dims = def.dims;
  def.dims = [dims](const Config& c, ArgList a) {
    if (me.rank == 1) std::_Exit(3);
    return dims(c, a);
  };
  auto tuner = make_tuner(def, nullptr);
  auto coord = make_coordinator(rig.dev, 5000);
  auto out = coord->share_space(*tuner, rig.dev, rig.calls);
  check(!out.ok(), "the others get an error");
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  me = tune::testing::MpiRank::start(&argc, &argv);
  const std::string scenario = argc > 1 ? argv[1] : "";
  int rc = 2;
  if (me.size != 4) {
    std::fprintf(stderr, "run with mpirun -np 4 (got %d ranks)\n", me.size);
  } else if (scenario == "one_tunes") {
    rc = one_tunes();
  } else if (scenario == "share_space") {
    rc = share_space();
  } else if (scenario == "share_space_ties") {
    rc = share_space_ties();
  } else if (scenario == "share_keys") {
    rc = share_keys();
  } else if (scenario == "keys_differ") {
    rc = keys_differ();
  } else if (scenario == "throws") {
    rc = throws();
  } else if (scenario == "stall") {
    rc = stall();
  } else if (scenario == "exits") {
    rc = exits();
  } else {
    std::fprintf(stderr, "unknown scenario '%s'\n", scenario.c_str());
  }
  return me.finish(rc, scenario);
}
