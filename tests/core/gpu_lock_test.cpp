// The per-GPU timing lock (AutotunerOptions::gpu_lock, TUNE_GPU_LOCK; tuning/gpu_lock.hpp):
// held while a tuning times and only then; never on the hit path; two processes that tune on
// one GPU time one after the other.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "../support/log_capture.hpp"
#include "../support/scoped_env.hpp"
#include "sim_fixture.hpp"
#include "tuning/gpu_lock.hpp"

using namespace tune;
using namespace tune::testing;

namespace {

// A fresh cache directory and a fresh runtime directory (where the locks live) for one test,
// set as TUNE_CACHE_DIR and XDG_RUNTIME_DIR while alive.
struct LockDir {
  std::string path, cache, run;
  std::optional<ScopedEnv> cache_env, run_env;
  LockDir() {
    std::string tmpl = "/tmp/tune-gpulock-XXXXXX";
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
    cache = path + "/cache";
    run = path + "/run";
    std::filesystem::create_directories(cache);
    REQUIRE(::mkdir(run.c_str(), 0700) == 0);
    cache_env.emplace("TUNE_CACHE_DIR", cache.c_str());
    run_env.emplace("XDG_RUNTIME_DIR", run.c_str());
  }
  ~LockDir() {
    cache_env.reset();
    run_env.reset();
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string lock_file(const Device& dev) const {
    return detail::gpu_lock_path(dev.info(), detail::gpu_lock_dir());
  }
};

// Every file and folder below `dir`, as paths relative to it, sorted.
std::vector<std::string> tree_of(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    out.push_back(std::filesystem::relative(e.path(), dir).string());
  std::sort(out.begin(), out.end());
  return out;
}

// Whether another open file description can take the lock now (it is released at once).
bool lock_is_free(const std::string& file) {
  std::filesystem::create_directories(std::filesystem::path(file).parent_path());
  int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  REQUIRE_MESSAGE(fd >= 0, file);
  const bool free = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  ::close(fd);
  return free;
}

// Holds the lock from a separate open file description while alive.
struct Holder {
  int fd = -1;
  explicit Holder(const std::string& file) {
    std::filesystem::create_directories(std::filesystem::path(file).parent_path());
    fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::flock(fd, LOCK_EX | LOCK_NB) == 0);
  }
  void release() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  ~Holder() { release(); }
};

// Runs `fn` on a thread; fails (and releases `holder` so the thread can finish) when it has
// not returned within a generous watchdog.
void within_watchdog(const std::function<void()>& fn, Holder& holder) {
  auto done = std::async(std::launch::async, fn);
  if (done.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    FAIL_CHECK("blocked on the GPU lock held by another open file description");
    holder.release();
  }
  done.get();
}

}  // namespace

TEST_CASE("gpu lock: the lock file is named by the device UUID, else fingerprint and ordinal") {
  // Every SimDevice is a GPU of its own unless its DeviceInfo names one.
  SimDevice a, b;
  CHECK(a.info().uuid.rfind("sim-", 0) == 0);
  CHECK(a.info().uuid != b.info().uuid);
  DeviceInfo info = SimDevice::default_info();
  info.uuid = "sim-shared";
  CHECK(SimDevice(info).info().uuid == "sim-shared");
  CHECK(detail::gpu_lock_path(info, "/d") == "/d/gpu-sim-shared.lock");
  info.uuid.clear();
  info.reopen_spec = "cuda:1";
  const std::string fallback = detail::gpu_lock_path(info, "/d");
  CHECK(fallback.rfind("/d/gpu-", 0) == 0);
  CHECK(fallback.find("cuda_1") != std::string::npos);
  info.reopen_spec = "cuda:0";
  CHECK(detail::gpu_lock_path(info, "/d") != fallback);
  const unsigned char bytes[16] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
                                   0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77};
  CHECK(format_uuid(bytes) == "01234567-89ab-cdef-0011-223344556677");
  const unsigned char zeros[16] = {};
  CHECK(format_uuid(zeros).empty());
}

TEST_CASE("gpu lock: held while the tuning times, free before and after") {
  LockDir dir;
  SimRig rig;
  rig.dev.set_cost_model(bm_model(64));
  const std::string file = dir.lock_file(rig.dev);
  AutotunerOptions o = quiet_options();
  int held_events = 0, free_events = 0, done_free = 0;
  o.progress = [&](const TuningProgress& p) {
    const bool free = lock_is_free(file);
    if (p.done)
      done_free += free ? 1 : 0;
    else
      (free ? free_events : held_events) += 1;
  };
  auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64, 128})), o);
  CHECK(lock_is_free(file));
  auto best = tuner->tune(rig.dev, rig.args(1000));
  REQUIRE_MESSAGE(best.ok(), best.status().to_string());
  CHECK(held_events > 0);
  CHECK(free_events == 0);
  CHECK(done_free == 1);  // the last event comes after the timing
  CHECK(lock_is_free(file));
}

TEST_CASE("gpu lock: hits, stored keys, strict and disabled tunings never wait for it") {
  LockDir dir;
  SimRig rig;
  rig.dev.set_cost_model(bm_model(64));
  auto store = std::make_shared<MemoryStore>();
  AutotunerOptions o = quiet_options();
  o.store = store;
  auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64})), o);
  REQUIRE(tuner->run(rig.dev, rig.args(1000)).ok());  // tuned: stored and in memory
  Holder other(dir.lock_file(rig.dev));
  within_watchdog(
      [&] {
        CHECK(tuner->run(rig.dev, rig.args(1000)).ok());  // memory hit
        auto fresh = make_tuner(sim_kernel(bm_space({16, 32, 64})), o);
        CHECK(fresh->run(rig.dev, rig.args(1000)).ok());  // all stored: read, not timed
        CHECK(fresh->last_report(rig.dev, rig.args(1000))->source == ResultSource::disk);
        AutotunerOptions s = quiet_options();
        s.strict = true;
        s.store = store;
        auto strict = make_tuner(sim_kernel(bm_space({16, 32, 64})), s);
        CHECK(strict->run(rig.dev, rig.args(1000)).ok());
        AutotunerOptions d = quiet_options();
        d.disable = true;
        auto disabled = make_tuner(sim_kernel(bm_space({16, 32, 64})), d);
        CHECK(disabled->run(rig.dev, rig.args(5000)).ok());
        auto single = make_tuner(sim_kernel(bm_space({64})));
        CHECK(single->run(rig.dev, rig.args(5000)).ok());
      },
      other);
}

TEST_CASE("gpu lock: off by option or TUNE_GPU_LOCK=0, the tuning does not wait") {
  LockDir dir;
  SimRig rig;
  Holder other(dir.lock_file(rig.dev));
  within_watchdog(
      [&] {
        AutotunerOptions o = quiet_options();
        o.gpu_lock = false;
        auto tuner = make_tuner(sim_kernel(bm_space({16, 32})), o);
        CHECK(tuner->run(rig.dev, rig.args(1000)).ok());
        CHECK(tuner->last_report(rig.dev, rig.args(1000))->source == ResultSource::tuned);
      },
      other);
  ScopedEnv off("TUNE_GPU_LOCK", "0");
  within_watchdog(
      [&] {
        auto tuner = make_tuner(sim_kernel(bm_space({16, 32})));
        CHECK(tuner->run(rig.dev, rig.args(1000)).ok());
      },
      other);
}

TEST_CASE("gpu lock: a tuning waits for the holder and times once it lets go") {
  LockDir dir;
  SimRig rig;
  Holder other(dir.lock_file(rig.dev));
  std::atomic<bool> released{false};
  std::atomic<bool> timed_while_held{false};
  AutotunerOptions o = quiet_options();
  o.progress = [&](const TuningProgress& p) {
    if (!p.done && !released.load()) timed_while_held = true;
  };
  auto tuner = make_tuner(sim_kernel(bm_space({16, 32})), o);
  auto done = std::async(std::launch::async, [&] { return tuner->run(rig.dev, rig.args(1000)); });
  // The tuning cannot progress past the lock: no progress event arrives while it is held.
  CHECK(done.wait_for(std::chrono::milliseconds(300)) == std::future_status::timeout);
  released = true;
  other.release();
  REQUIRE(done.wait_for(std::chrono::seconds(60)) == std::future_status::ready);
  CHECK(done.get().ok());
  CHECK_FALSE(timed_while_held.load());
}

TEST_CASE("gpu lock: a tuning budget bounds the wait; the call then fails as out of budget") {
  LockDir dir;
  SimRig rig;
  Holder other(dir.lock_file(rig.dev));
  AutotunerOptions o = quiet_options();
  o.tuning_budget_ms = 50;
  auto tuner = make_tuner(sim_kernel(bm_space({16, 32})), o);
  within_watchdog(
      [&] {
        Status st = tuner->run(rig.dev, rig.args(1000));
        CHECK(st.code() == StatusCode::timeout);
        CHECK(st.message().find("tuning_budget_ms") != std::string::npos);
      },
      other);
  CHECK(rig.dev.time_calls() == 0);
}

TEST_CASE("gpu lock: two processes tuning one GPU time one after the other") {
  LockDir dir;
  const std::string events = dir.path + "/events";
  int start[2];
  REQUIRE(::pipe(start) == 0);
  std::vector<pid_t> kids;
  for (int id = 0; id < 2; ++id) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::close(start[1]);
      char c;
      (void)!::read(start[0], &c, 1);  // both start together (EOF)
      int out = ::open(events.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
      if (out < 0) std::_Exit(3);
      DeviceInfo same = SimDevice::default_info();
      same.uuid = "sim-lock-test";  // the same simulated GPU in both processes
      SimRig rig(same);
      rig.dev.set_cost_model(bm_model(64));
      KernelDef def = sim_kernel(bm_space({16, 32, 64, 128}));
      const std::string line = std::to_string(id) + "\n";
      // Every launch made while timing is an event, each a millisecond long.
      def.pre_hook = [&](Device&, ArgList, const Config&) {
        if (::write(out, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
          return Status(StatusCode::io_error, "write");
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return Status();
      };
      auto tuner = Autotuner::make(std::move(def), quiet_options());
      if (!tuner.ok()) std::_Exit(4);
      auto best = (*tuner)->tune(rig.dev, rig.args(1000));
      std::_Exit(best.ok() ? 0 : 5);
    }
    kids.push_back(pid);
  }
  ::close(start[0]);
  ::close(start[1]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  for (pid_t pid : kids) {
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        FAIL_CHECK("a tuning process hung");
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  std::ifstream in(events);
  std::string seq, l;
  while (std::getline(in, l)) seq += l;
  CAPTURE(seq);
  REQUIRE(seq.find('0') != std::string::npos);
  REQUIRE(seq.find('1') != std::string::npos);
  int switches = 0;
  for (std::size_t i = 1; i < seq.size(); ++i) switches += seq[i] != seq[i - 1] ? 1 : 0;
  CHECK(switches == 1);  // all of one process's timing launches, then all of the other's
}

TEST_CASE(
    "gpu lock: lives in the runtime directory; TUNE_CACHE=off and readonly write nothing "
    "under the cache directory") {
  for (const char* mode : {"off", "readonly"}) {
    CAPTURE(mode);
    LockDir dir;
    AutotunerOptions o = quiet_options();
    o.persistent = true;  // the default store, under TUNE_CACHE_DIR and TUNE_CACHE
    SimRig rig;
    rig.dev.set_cost_model(bm_model(64));
    // readonly over an existing database: its rows are read, and nothing is written.
    if (std::string(mode) == "readonly") {
      auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64, 128})), o);
      REQUIRE(tuner->tune(rig.dev, rig.args(1000)).ok());
    }
    const auto before = tree_of(dir.cache);
    {
      ScopedEnv cache_mode("TUNE_CACHE", mode);
      auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64, 128})), o);
      auto best = tuner->tune(rig.dev, rig.args(2000));
      REQUIRE_MESSAGE(best.ok(), best.status().to_string());
      CHECK(std::filesystem::exists(dir.lock_file(rig.dev)));  // the lock was taken
    }
    CHECK(tree_of(dir.cache) == before);
    CHECK(dir.lock_file(rig.dev).rfind(dir.run + "/libtune/locks/", 0) == 0);
  }
}

TEST_CASE("gpu lock: a lock directory others could write or link is refused with a warning") {
  LockDir dir;
  SimRig rig;
  rig.dev.set_cost_model(bm_model(64));
  const std::string libtune = dir.run + "/libtune";
  SUBCASE("writable by other users") {
    REQUIRE(::mkdir(libtune.c_str(), 0700) == 0);
    REQUIRE(::chmod(libtune.c_str(), 0777) == 0);
  }
  SUBCASE("a link to another directory") {
    std::filesystem::create_directories(dir.path + "/elsewhere");
    std::filesystem::create_directory_symlink(dir.path + "/elsewhere", libtune);
  }
  LogCapture log;
  auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64, 128})));
  auto best = tuner->tune(rig.dev, rig.args(1000));
  REQUIRE_MESSAGE(best.ok(), best.status().to_string());  // tuned without the lock
  CHECK_MESSAGE(log.count(LogLevel::warning, "per-GPU timing lock") == 1, log.all());
  CHECK_MESSAGE(log.count(LogLevel::warning, libtune) == 1, log.all());
  CHECK_FALSE(std::filesystem::exists(dir.path + "/elsewhere/locks"));
}
