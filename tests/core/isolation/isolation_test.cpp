// Isolated tuning (AutotunerOptions::isolation) on the simulated device: candidates run in a
// worker process (sim_worker, a SimDevice with faults injected by configuration) while the
// callbacks run here. Checks the wire format, that the isolated tuning picks the in-process
// winner with the CPU reference's output and never touches the caller's buffers, and that a
// crashing, hanging or sticky-failing candidate costs only a worker restart: it is recorded
// with a reason naming it and the tuning picks among the others, on replayed state.
#include <doctest/doctest.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "interop_data.hpp"
#include "isolation/device_codec.hpp"
#include "isolation/wire.hpp"
#include "isolation/worker_device.hpp"
#include "program_paths.hpp"
#include "sim_kernel.hpp"
#include "temp_dir.hpp"
#include "tune/testing/quick_options.hpp"
#include "tune/tune.hpp"
#include "watchdog.hpp"

extern char** environ;

using namespace tune;
using namespace tune::testing;
namespace iso = tune::testing::isolation;

namespace {

constexpr std::size_t kN = 1000;

KernelSource source() {
  KernelSource s;
  s.language = Language::simulated;
  s.entry = "iso_y";
  s.text = "// y = 2x + 1 (simulated)";
  return s;
}

Config cfg(int bm, std::int64_t f) { return Config{{"BM", bm}, {"F", Value{f}}}; }

// iso_y(x, y, n): y = 2x + 1, verified against the CPU reference after its first launch.
// `trace` (optional) records "pre {config}" and "verify {config}" in the order they ran here.
KernelDef y_kernel(std::vector<Config> configs, std::vector<std::string>* trace = nullptr) {
  KernelDef def;
  def.name = "iso_y";
  def.sources = {source()};
  def.signature.buffer("x", ElemType::f32).buffer("y", ElemType::f32).scalar("n", ElemType::i32);
  def.space = ConfigSpace::list(std::move(configs));
  def.key = {KeySpec::exact("n")};
  def.dims = [](const Config& c, ArgList args) {
    LaunchDims d;
    const auto bm = static_cast<std::uint32_t>(c.get_int("BM", 1));
    d.grid = {static_cast<std::uint32_t>((args[2].as_int() + bm - 1) / bm), 1, 1};
    d.block = {bm, 1, 1};
    return d;
  };
  if (trace != nullptr) {
    def.pre_hook = [trace](Device&, ArgList, const Config& c) {
      trace->push_back("pre {" + c.to_string() + "}");
      return Status();
    };
  }
  def.verify = [trace](Device& dev, ArgList args, const Config& c) {
    if (trace != nullptr) trace->push_back("verify {" + c.to_string() + "}");
    const auto n = static_cast<std::size_t>(args[2].as_int());
    std::vector<float> x(n), y(n);
    TUNE_RETURN_IF_ERROR(dev.download(*args[0].buffer, x.data(), n * sizeof(float)));
    TUNE_RETURN_IF_ERROR(dev.download(*args[1].buffer, y.data(), n * sizeof(float)));
    const std::string bad = mismatches(y.data(), iso::reference(x));
    if (!bad.empty()) return Status(StatusCode::wrong_output, bad);
    return Status();
  };
  return def;
}

AutotunerOptions isolated() {
  AutotunerOptions o = quiet_options();
  o.isolation.enabled = true;
  o.isolation.worker = tune_test_programs::sim_worker;
  o.isolation.device = "sim";
  o.isolation.call_timeout_ms = 1500;  // the hang test's detection time
  o.bench.timeout_ms = 200;
  return o;
}

std::unique_ptr<Autotuner> make(KernelDef def, AutotunerOptions opts) {
  auto t = Autotuner::make(std::move(def), std::move(opts));
  REQUIRE_MESSAGE(t.ok(), t.status().to_string());
  return std::move(*t);
}

// The caller's side: a SimDevice modelling the same kernel, x random, y a sentinel.
struct Rig {
  SimDevice dev;
  Buffer x, y;
  std::vector<float> xs = random_floats(kN, 7);
  explicit Rig(DeviceInfo info = SimDevice::default_info()) : dev(std::move(info)) {
    iso::configure(dev);
    x = dev.make_buffer<float>(xs, "x").value();
    y = dev.make_buffer<float>(std::vector<float>(kN, -7.0f), "y").value();
  }
  std::vector<ArgValue> args() {
    return {ArgValue::buf(*x, ElemType::f32, kN), ArgValue::buf(*y, ElemType::f32, kN),
            ArgValue(static_cast<std::int32_t>(kN))};
  }
};

const ConfigResult* result_of(const TuningReport& r, const Config& c) {
  for (const auto& res : r.results)
    if (res.config == c) return &res;
  return nullptr;
}

}  // namespace

TEST_CASE("wire: every field round-trips, truncated and garbage messages are refused") {
  detail::WireWriter w;
  w.u8(7);
  w.u32(0xdeadbeefu);
  w.u64(0x0123456789abcdefull);
  w.f64(-2.5);
  w.str("hello");
  w.status(Status(StatusCode::launch_failed, "boom"));
  detail::put_dims(w, LaunchDims{{4, 2, 1}, {128, 1, 1}, 64, {2, 1, 1}});
  detail::put_args(w, std::vector<ArgValue>{ArgValue(42), ArgValue(1.5f)},
                   [](const DeviceBuffer*) { return std::uint64_t{0}; });
  const auto bytes = w.bytes();

  detail::WireReader r(bytes);
  CHECK(r.u8() == 7);
  CHECK(r.u32() == 0xdeadbeefu);
  CHECK(r.u64() == 0x0123456789abcdefull);
  CHECK(r.f64() == -2.5);
  CHECK(r.str() == "hello");
  const Status st = r.status();
  CHECK(st.code() == StatusCode::launch_failed);
  CHECK(st.message() == "boom");
  const LaunchDims d = detail::get_dims(r);
  CHECK(d.grid == Dim3{4, 2, 1});
  CHECK(d.block == Dim3{128, 1, 1});
  CHECK(d.shared_bytes == 64);
  CHECK(d.cluster == Dim3{2, 1, 1});
  std::vector<ArgValue> args;
  CHECK(detail::get_args(
      r, [](std::uint64_t) { return nullptr; }, &args));
  REQUIRE(args.size() == 2);
  CHECK(args[0].as_int() == 42);
  CHECK(args[1].as_double() == 1.5);
  CHECK(r.done());

  // Every proper prefix is refused: some read runs past the end.
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    std::vector<std::byte> part(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
    detail::WireReader t(part);
    (void)t.u8(), (void)t.u32(), (void)t.u64(), (void)t.f64(), (void)t.str(), (void)t.status();
    (void)detail::get_dims(t);
    std::vector<ArgValue> a;
    const bool args_ok = detail::get_args(
        t, [](std::uint64_t) { return nullptr; }, &a);
    CAPTURE(cut);
    CHECK_FALSE((t.done() && args_ok));
  }
  // Garbage: a string longer than the message, an unknown status code, a buffer id unknown.
  detail::WireWriter g;
  g.u64(1ull << 40);
  detail::WireReader gr(g.bytes());
  CHECK(gr.str().empty());
  CHECK_FALSE(gr.ok());
  detail::WireWriter code;
  code.u8(200);
  code.str("?");
  detail::WireReader cr(code.bytes());
  CHECK(cr.status().code() == StatusCode::data_loss);
  CHECK_FALSE(cr.ok());
  detail::WireWriter unknown;
  ArgValue buffer_arg;
  buffer_arg.kind = ArgKind::buffer;
  buffer_arg.count = 1;
  detail::put_args(unknown, std::vector<ArgValue>{buffer_arg},
                   [](const DeviceBuffer*) { return std::uint64_t{99}; });
  detail::WireReader ur(unknown.bytes());
  CHECK_FALSE(detail::get_args(
      ur, [](std::uint64_t) { return nullptr; }, &args));
}

TEST_CASE("wire: frames cross a socket, a cut frame is end of stream, silence a timeout") {
  Watchdog dog("wire frames", 30);
  int sv[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
  detail::WireWriter w;
  w.str("payload");
  REQUIRE(detail::write_frame(sv[0], w.bytes()).ok());
  std::vector<std::byte> got;
  const auto soon = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  REQUIRE(detail::read_frame(sv[1], soon, &got).ok());
  CHECK(got == w.bytes());

  const Status silent = detail::read_frame(
      sv[1], std::chrono::steady_clock::now() + std::chrono::milliseconds(20), &got);
  CHECK(silent.code() == StatusCode::timeout);

  const unsigned char cut[] = {100, 0, 0, 0, 1, 2, 3};  // claims 100 bytes, sends 3
  REQUIRE(::send(sv[0], cut, sizeof cut, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof cut));
  ::close(sv[0]);
  const Status eof = detail::read_frame(sv[1], soon, &got);
  CHECK(eof.code() == StatusCode::unavailable);
  CHECK(eof.message().find("end of stream") != std::string::npos);
  // Writing to a closed peer is an error status, never SIGPIPE.
  CHECK_FALSE(detail::write_frame(sv[1], w.bytes()).ok());
  ::close(sv[1]);
}

TEST_CASE("isolation: the worker picks the in-process winner, the caller's buffers are untouched") {
  Watchdog dog("isolated tuning", 60);
  const std::vector<Config> space = {cfg(32, 0), cfg(64, 0), cfg(128, 0)};
  Rig local;
  auto in_process = make(y_kernel(space), quiet_options());
  auto want = in_process->tune(local.dev, local.args());
  REQUIRE_MESSAGE(want.ok(), want.status().to_string());
  CHECK(want->to_string() == cfg(64, 0).to_string());

  Rig rig;
  auto tuner = make(y_kernel(space), isolated());
  auto args = rig.args();
  auto got = tuner->tune(rig.dev, args);
  REQUIRE_MESSAGE(got.ok(), got.status().to_string());
  CHECK(got->to_string() == want->to_string());
  // Nothing ran on the caller's device: the candidates ran in the worker.
  CHECK(rig.dev.executions() == 0);
  CHECK(rig.dev.read<float>(*rig.y) == std::vector<float>(kN, -7.0f));
  CHECK(rig.dev.read<float>(*rig.x) == rig.xs);
  auto report = tuner->last_report(rig.dev, args);
  REQUIRE(report.has_value());
  for (const auto& r : report->results) CHECK_MESSAGE(r.status.ok(), r.status.to_string());

  REQUIRE(tuner->run(rig.dev, args).ok());
  CHECK(rig.dev.launches() == 1);  // the winner's own launch, compiled on this device
  const auto y = rig.dev.read<float>(*rig.y);
  CHECK(mismatches(y.data(), iso::reference(rig.xs)) == "");
}

TEST_CASE("isolation: rotating input copies live in the worker, the output is right") {
  Watchdog dog("isolated rotation", 60);
  DeviceInfo info = SimDevice::default_info();
  info.llc_bytes = 16ull << 10;  // x and y (8000 bytes) in 5 sets exceed twice 16 KiB
  Rig rig(info);
  AutotunerOptions opts = isolated();
  opts.bench.cache = TimingCache::rotate;
  auto tuner = make(y_kernel({cfg(32, 0), cfg(64, 0), cfg(128, 0)}), opts);
  auto args = rig.args();
  REQUIRE(tuner->run(rig.dev, args).ok());
  auto report = tuner->last_report(rig.dev, args);
  REQUIRE(report.has_value());
  CHECK(report->timing_cache == TimingCache::rotate);
  CHECK(tuner->best(rig.dev, args)->to_string() == cfg(64, 0).to_string());
  // The copies were made and timed in the worker: the caller's device saw only the call's own
  // launch and holds x and y alone.
  CHECK(rig.dev.launches() == 1);
  CHECK(rig.dev.live_buffers() == 2);
  const auto y = rig.dev.read<float>(*rig.y);
  CHECK(mismatches(y.data(), iso::reference(rig.xs)) == "");
}

namespace {

// Tunes a space whose second configuration misbehaves as `fault` says; returns the report.
TuningReport tune_with_fault(iso::Fault fault, std::vector<std::string>* trace) {
  Rig rig;
  const Config bad = cfg(16, fault);
  auto tuner = make(y_kernel({cfg(32, 0), bad, cfg(64, 0), cfg(128, 0)}, trace), isolated());
  auto args = rig.args();
  const Status st = tuner->run(rig.dev, args);
  REQUIRE_MESSAGE(st.ok(), st.to_string());
  auto best = tuner->best(rig.dev, args);
  REQUIRE(best.has_value());
  CHECK(best->to_string() == cfg(64, 0).to_string());
  const auto y = rig.dev.read<float>(*rig.y);
  CHECK(mismatches(y.data(), iso::reference(rig.xs)) == "");
  auto report = tuner->last_report(rig.dev, args);
  REQUIRE(report.has_value());
  const ConfigResult* r = result_of(*report, bad);
  REQUIRE(r != nullptr);
  CHECK(r->status.code() == StatusCode::launch_failed);
  CHECK_MESSAGE(r->status.message().find("{" + bad.to_string() + "}") != std::string::npos,
                r->status.to_string());
  for (const Config& good : {cfg(32, 0), cfg(64, 0), cfg(128, 0)}) {
    const ConfigResult* g = result_of(*report, good);
    REQUIRE(g != nullptr);
    CHECK_MESSAGE(g->status.ok(), g->status.to_string());
  }
  // A second key on the same worker proxy: its kernels, compiled in a worker that has died
  // since, are recompiled in the restarted one, and the correct ones verify there.
  auto other = args;
  other[2] = ArgValue(static_cast<std::int32_t>(kN / 2));
  REQUIRE(tuner->tune(rig.dev, other).ok());
  CHECK(tuner->best(rig.dev, other)->to_string() == cfg(64, 0).to_string());
  return *report;
}

// Whether some correct configuration was verified after the faulting one was first launched:
// the restarted worker had the replayed inputs and recompiled kernels.
bool verified_after_fault(const std::vector<std::string>& trace, const Config& bad) {
  bool faulted = false;
  for (const auto& e : trace) {
    if (e == "pre {" + bad.to_string() + "}") faulted = true;
    if (faulted && e.rfind("verify {", 0) == 0 && e.find("F=0") != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("isolation: a crashing candidate kills only the worker, which restarts") {
  Watchdog dog("isolated crash", 120);
  std::vector<std::string> trace;
  const TuningReport report = tune_with_fault(iso::crash, &trace);
  const ConfigResult* r = result_of(report, cfg(16, iso::crash));
  REQUIRE(r != nullptr);
  CHECK_MESSAGE(r->status.message().find("died with signal 6") != std::string::npos,
                r->status.to_string());
  CHECK_MESSAGE(r->status.message().find("simulated illegal address") != std::string::npos,
                r->status.to_string());  // the worker's last stderr line
  CHECK(verified_after_fault(trace, cfg(16, iso::crash)));
}

TEST_CASE("isolation: a hanging candidate is killed at the reply deadline") {
  Watchdog dog("isolated hang", 120);
  std::vector<std::string> trace;
  const TuningReport report = tune_with_fault(iso::hang, &trace);
  const ConfigResult* r = result_of(report, cfg(16, iso::hang));
  REQUIRE(r != nullptr);
  CHECK_MESSAGE(r->status.message().find("did not answer within") != std::string::npos,
                r->status.to_string());
  CHECK(verified_after_fault(trace, cfg(16, iso::hang)));
}

TEST_CASE("isolation: a sticky error ends the worker, not the tuning") {
  Watchdog dog("isolated device_lost", 120);
  std::vector<std::string> trace;
  const TuningReport report = tune_with_fault(iso::lost, &trace);
  const ConfigResult* r = result_of(report, cfg(16, iso::lost));
  REQUIRE(r != nullptr);
  CHECK_MESSAGE(r->status.message().find("reported a sticky error") != std::string::npos,
                r->status.to_string());
  CHECK_MESSAGE(r->status.message().find("simulated illegal address (sticky)") != std::string::npos,
                r->status.to_string());
  CHECK(verified_after_fault(trace, cfg(16, iso::lost)));
}

TEST_CASE("isolation: a restarted worker replays buffers from the shadow and recompiles kernels") {
  Watchdog dog("worker replay", 60);
  SimDevice parent;
  detail::WorkerSettings s;
  s.path = tune_test_programs::sim_worker;
  s.spec = "sim";
  s.call_limit = std::chrono::milliseconds(5000);
  detail::WorkerDevice proxy(parent.info(), parent.language(), s);
  Device& dev = proxy;
  CHECK(proxy.spawns() == 0);  // nothing spawns before the first call
  const auto xs = random_floats(kN, 11);
  auto x = dev.alloc(kN * sizeof(float));
  auto y = dev.alloc(kN * sizeof(float));
  REQUIRE(x.ok());
  REQUIRE(y.ok());
  CHECK(proxy.spawns() == 1);
  REQUIRE(dev.upload(**x, xs.data(), kN * sizeof(float)).ok());
  REQUIRE(dev.fill(**y, 0, kN * sizeof(float)).ok());
  auto good = dev.compile(source(), cfg(64, 0));
  auto crash = dev.compile(source(), cfg(16, iso::crash));
  REQUIRE(good.ok());
  REQUIRE(crash.ok());
  const std::vector<ArgValue> args = {ArgValue::buf(**x, ElemType::f32, kN),
                                      ArgValue::buf(**y, ElemType::f32, kN),
                                      ArgValue(static_cast<std::int32_t>(kN))};
  const LaunchDims dims{{16, 1, 1}, {64, 1, 1}, 0};
  const Status died = dev.launch(**crash, dims, args);
  CHECK(died.code() == StatusCode::launch_failed);
  CHECK_MESSAGE(died.message().find("died with signal 6") != std::string::npos, died.to_string());
  // The next call restarts the worker with x and y as upload and fill left them.
  std::vector<float> back(kN);
  REQUIRE(dev.download(**x, back.data(), kN * sizeof(float)).ok());
  CHECK(proxy.spawns() == 2);
  CHECK(back == xs);
  REQUIRE(dev.launch(**good, dims, args).ok());  // recompiled in the new worker on first use
  REQUIRE(dev.download(**y, back.data(), kN * sizeof(float)).ok());
  CHECK(mismatches(back.data(), iso::reference(xs)) == "");
  CHECK(proxy.spawns() == 2);
}

TEST_CASE("isolation: a worker that cannot start is a clear error, a disabled tuning starts none") {
  Watchdog dog("worker startup", 60);
  Rig rig;
  auto args = rig.args();
  const std::vector<Config> space = {cfg(32, 0), cfg(64, 0)};

  AutotunerOptions missing = isolated();
  missing.isolation.worker = "/nonexistent/libexec/tune-worker";
  auto t1 = make(y_kernel(space), missing);
  const Status st = t1->run(rig.dev, args);
  CHECK(st.code() == StatusCode::not_found);
  CHECK_MESSAGE(st.message().find("/nonexistent/libexec/tune-worker") != std::string::npos,
                st.to_string());
  CHECK(rig.dev.read<float>(*rig.y) == std::vector<float>(kN, -7.0f));

  AutotunerOptions not_a_worker = isolated();
  not_a_worker.isolation.worker = "/bin/true";  // exits at once, no hello
  auto t0 = make(y_kernel(space), not_a_worker);
  const Status st0 = t0->run(rig.dev, args);
  CHECK(st0.code() == StatusCode::unavailable);
  CHECK_MESSAGE(st0.message().find("'/bin/true' exited with code 0") != std::string::npos,
                st0.to_string());

  AutotunerOptions refused = isolated();
  refused.isolation.device = "refuse";
  auto t2 = make(y_kernel(space), refused);
  const Status st2 = t2->run(rig.dev, args);
  CHECK_FALSE(st2.ok());
  CHECK_MESSAGE(st2.message().find("no simulated device named 'refuse'") != std::string::npos,
                st2.to_string());

  AutotunerOptions no_spec = isolated();
  no_spec.isolation.device.clear();  // the simulated device has no reopen_spec
  auto t3 = make(y_kernel(space), no_spec);
  const Status st3 = t3->run(rig.dev, args);
  CHECK(st3.code() == StatusCode::unavailable);
  CHECK_MESSAGE(st3.message().find("isolation.device") != std::string::npos, st3.to_string());

  AutotunerOptions disabled = missing;
  disabled.disable = true;
  auto t4 = make(y_kernel(space), disabled);
  CHECK(t4->run(rig.dev, args).ok());  // never timed: no worker needed, none started
}

TEST_CASE("isolation: background tuning goes through the worker too") {
  Watchdog dog("isolated background", 60);
  Rig rig;
  AutotunerOptions o = isolated();
  o.mode = TuningMode::background;
  auto tuner = make(y_kernel({cfg(32, 0), cfg(16, iso::crash), cfg(64, 0)}), o);
  auto args = rig.args();
  REQUIRE(tuner->run(rig.dev, args).ok());  // no tuned key yet: tunes as sync
  CHECK(tuner->best(rig.dev, args)->to_string() == cfg(64, 0).to_string());
  // A new key launches the nearest key's winner now and tunes in the background, through the
  // worker (the crashing candidate costs a restart there too).
  auto other = args;
  other[2] = ArgValue(static_cast<std::int32_t>(kN / 2));
  REQUIRE(tuner->run(rig.dev, other).ok());
  while (!tuner->best(rig.dev, other).has_value())
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(tuner->best(rig.dev, other)->to_string() == cfg(64, 0).to_string());
  auto report = tuner->last_report(rig.dev, other);
  REQUIRE(report.has_value());
  const ConfigResult* r = result_of(*report, cfg(16, iso::crash));
  REQUIRE(r != nullptr);
  CHECK_MESSAGE(r->status.message().find("died with signal 6") != std::string::npos,
                r->status.to_string());
  tuner->release(rig.dev);
}

namespace {

// A worker proxy on the simulated worker started with `spec`, and x, y as the tests' kernel
// reads them (x random, y zero).
struct ProxyRig {
  SimDevice parent;
  detail::WorkerSettings settings;
  std::unique_ptr<detail::WorkerDevice> proxy;
  Buffer x, y;
  std::vector<float> xs = random_floats(kN, 13);
  explicit ProxyRig(const std::string& spec, std::uint64_t chunk = detail::kChunkBytes,
                    std::chrono::milliseconds call_limit = std::chrono::milliseconds(5000)) {
    settings.path = tune_test_programs::sim_worker;
    settings.spec = spec;
    settings.call_limit = call_limit;
    settings.chunk_bytes = chunk;
    proxy = std::make_unique<detail::WorkerDevice>(parent.info(), parent.language(), settings);
    x = dev().alloc(kN * sizeof(float)).value();
    y = dev().alloc(kN * sizeof(float)).value();
    REQUIRE(dev().upload(*x, xs.data(), kN * sizeof(float)).ok());
    REQUIRE(dev().fill(*y, 0, kN * sizeof(float)).ok());
  }
  Device& dev() { return *proxy; }
  ~ProxyRig() {
    x = {};
    y = {};
  }
  std::vector<ArgValue> args() {
    return {ArgValue::buf(*x, ElemType::f32, kN), ArgValue::buf(*y, ElemType::f32, kN),
            ArgValue(static_cast<std::int32_t>(kN))};
  }
  std::unique_ptr<CompiledKernel> compile(const Config& c) {
    auto k = dev().compile(source(), c);
    REQUIRE_MESSAGE(k.ok(), k.status().to_string());
    return std::move(*k);
  }
  // Launches `k` and checks y against the CPU reference.
  void check_output(const CompiledKernel& k) {
    REQUIRE(dev().launch(k, LaunchDims{{16, 1, 1}, {64, 1, 1}, 0}, args()).ok());
    std::vector<float> back(kN);
    REQUIRE(dev().download(*y, back.data(), kN * sizeof(float)).ok());
    CHECK(mismatches(back.data(), iso::reference(xs)) == "");
  }
};

}  // namespace

TEST_CASE("isolation: a deferred fault fails its own launch, never the compile after it") {
  Watchdog dog("deferred fault", 60);
  ProxyRig rig("sim");
  const Config bad = cfg(16, iso::deferred);
  auto deferred = rig.compile(bad);
  // The sim reports the fault on the device's next call, as CUDA does: the worker's
  // synchronization after the launch makes that the launch's own reply.
  const Status st = rig.dev().launch(*deferred, LaunchDims{{16, 1, 1}, {16, 1, 1}, 0}, rig.args());
  CHECK(st.code() == StatusCode::launch_failed);
  CHECK_MESSAGE(
      st.message().find("launching config {" + bad.to_string() + "}") != std::string::npos,
      st.to_string());
  CHECK_MESSAGE(st.message().find("simulated illegal address (deferred)") != std::string::npos,
                st.to_string());
  auto good = rig.compile(cfg(64, 0));  // in the restarted worker, on the replayed inputs
  CHECK(rig.proxy->spawns() == 2);
  rig.check_output(*good);
}

TEST_CASE("isolation: a compile meeting another launch's fault is tried again, not blamed") {
  Watchdog dog("compile retry", 60);
  ProxyRig rig("late");  // the deferred fault escapes synchronize(): the next compile meets it
  auto deferred = rig.compile(cfg(16, iso::deferred));
  REQUIRE(rig.dev().launch(*deferred, LaunchDims{{16, 1, 1}, {16, 1, 1}, 0}, rig.args()).ok());
  CHECK(rig.proxy->spawns() == 1);
  auto good = rig.compile(cfg(64, 0));  // met device_lost, compiled again in a fresh worker
  CHECK(rig.proxy->spawns() == 2);
  rig.check_output(*good);
}

TEST_CASE("isolation: a deferred fault in a tuning with compiles interleaved is its own") {
  Watchdog dog("isolated deferred", 120);
  std::vector<std::string> trace;
  const TuningReport report = tune_with_fault(iso::deferred, &trace);
  const ConfigResult* r = result_of(report, cfg(16, iso::deferred));
  REQUIRE(r != nullptr);
  CHECK_MESSAGE(
      r->status.message().find("simulated illegal address (deferred)") != std::string::npos,
      r->status.to_string());
  for (const auto& res : report.results)
    if (res.config != cfg(16, iso::deferred))
      CHECK_MESSAGE(res.status.ok(), res.status.to_string());
  CHECK(verified_after_fault(trace, cfg(16, iso::deferred)));
}

TEST_CASE("isolation: a worker that cannot restart ends the tuning, nothing stored as failed") {
  Watchdog dog("restart refused", 120);
  char dir[] = "/tmp/tune-iso-once-XXXXXX";
  REQUIRE(::mkdtemp(dir) != nullptr);
  const std::string flag = std::string(dir) + "/starts";
  Rig rig;
  AutotunerOptions o = isolated();
  o.isolation.device = "second:" + flag;  // the restart after the crash is refused
  const std::vector<Config> space = {cfg(32, 0), cfg(16, iso::crash), cfg(64, 0), cfg(128, 0)};
  auto tuner = make(y_kernel(space), o);
  auto args = rig.args();
  const Status st = tuner->run(rig.dev, args);
  CHECK(st.code() == StatusCode::device_lost);
  CHECK_MESSAGE(st.message().find("worker '" + std::string(tune_test_programs::sim_worker) +
                                  "' could not be restarted") != std::string::npos,
                st.to_string());
  CHECK_MESSAGE(st.message().find("no simulated device named 'refuse'") != std::string::npos,
                st.to_string());
  CHECK(rig.dev.read<float>(*rig.y) == std::vector<float>(kN, -7.0f));
  // The worker starts again from its third start on: the next tuning times every correct
  // candidate afresh (none was stored as failed) and picks the in-process winner.
  const Status again = tuner->run(rig.dev, args);
  REQUIRE_MESSAGE(again.ok(), again.to_string());
  CHECK(tuner->best(rig.dev, args)->to_string() == cfg(64, 0).to_string());
  auto report = tuner->last_report(rig.dev, args);
  REQUIRE(report.has_value());
  for (const Config& good : {cfg(32, 0), cfg(64, 0), cfg(128, 0)}) {
    const ConfigResult* g = result_of(*report, good);
    REQUIRE(g != nullptr);
    CHECK_MESSAGE(g->status.ok(), g->status.to_string());
    CHECK_FALSE(g->from_store);
  }
  ::unlink(flag.c_str());
  ::rmdir(dir);
}

TEST_CASE("isolation: transfers and the replay travel in pieces") {
  Watchdog dog("chunked transfers", 60);
  ProxyRig rig("sim", /*chunk=*/100);  // 4000-byte buffers: 40 pieces, a partial one below
  std::vector<float> part(kN - 3);
  for (std::size_t i = 0; i < part.size(); ++i) part[i] = static_cast<float>(i) * 0.5f;
  REQUIRE(rig.dev().upload(*rig.x, part.data(), part.size() * sizeof(float), 12).ok());
  std::copy(part.begin(), part.end(), rig.xs.begin() + 3);
  std::vector<float> back(kN);
  REQUIRE(rig.dev().download(*rig.x, back.data(), kN * sizeof(float)).ok());
  CHECK(back == rig.xs);
  std::vector<float> mid(7);
  REQUIRE(rig.dev().download(*rig.x, mid.data(), mid.size() * sizeof(float), 40).ok());
  CHECK(mid == std::vector<float>(rig.xs.begin() + 10, rig.xs.begin() + 17));
  // A crash, then the replay of the shadow in pieces.
  auto crash = rig.compile(cfg(16, iso::crash));
  CHECK(rig.dev().launch(*crash, LaunchDims{{16, 1, 1}, {16, 1, 1}, 0}, rig.args()).code() ==
        StatusCode::launch_failed);
  REQUIRE(rig.dev().download(*rig.x, back.data(), kN * sizeof(float)).ok());
  CHECK(rig.proxy->spawns() == 2);
  CHECK(back == rig.xs);
  rig.check_output(*rig.compile(cfg(64, 0)));
}

TEST_CASE("isolation: a timing's deadline grows with its repetitions") {
  Watchdog dog("slow reps", 60);
  // Each repetition sleeps kSlowMs: 16 of them take longer than the call limit plus one
  // repetition's timeout, but well within the call limit plus 16 of them.
  ProxyRig rig("sim", detail::kChunkBytes, std::chrono::milliseconds(300));
  auto slow = rig.compile(cfg(64, iso::slow));
  TimingPlan plan;
  plan.reps = 16;
  plan.timeout_ms = 100;
  auto t = rig.dev().time(*slow, LaunchDims{{16, 1, 1}, {64, 1, 1}, 0}, rig.args(), plan);
  REQUIRE_MESSAGE(t.ok(), t.status().to_string());
  CHECK(t->size() == 16);
  CHECK(rig.proxy->spawns() == 1);
}

TEST_CASE("isolation: a timing reset naming a foreign buffer is refused, the worker stays") {
  Watchdog dog("foreign reset", 60);
  ProxyRig rig("sim");
  auto good = rig.compile(cfg(64, 0));
  Buffer foreign = rig.parent.alloc(64).value();
  TimingPlan plan;
  plan.reps = 2;
  plan.resets.zero = {foreign.get()};
  auto t = rig.dev().time(*good, LaunchDims{{16, 1, 1}, {64, 1, 1}, 0}, rig.args(), plan);
  CHECK(t.status().code() == StatusCode::invalid_argument);
  CHECK_MESSAGE(t.status().message().find("does not hold") != std::string::npos,
                t.status().to_string());
  rig.check_output(*good);
  CHECK(rig.proxy->spawns() == 1);
}

TEST_CASE("isolation: a worker speaking another protocol version is refused at spawn") {
  Watchdog dog("protocol version", 60);
  Rig rig;
  AutotunerOptions o = isolated();
  o.isolation.device = "version";
  auto tuner = make(y_kernel({cfg(32, 0), cfg(64, 0)}), o);
  const Status st = tuner->run(rig.dev, rig.args());
  CHECK(st.code() == StatusCode::failed_precondition);
  const std::string want = "speaks protocol version " + std::to_string(detail::kWireVersion + 7) +
                           ", this libtune speaks version " + std::to_string(detail::kWireVersion);
  CHECK_MESSAGE(st.message().find(want) != std::string::npos, st.to_string());
  CHECK(rig.dev.read<float>(*rig.y) == std::vector<float>(kN, -7.0f));
}

TEST_CASE("isolation: the worker keeps none of the host's inherited descriptors") {
  Watchdog dog("inherited fds", 60);
  int p[2];
  REQUIRE(::pipe(p) == 0);  // no O_CLOEXEC: posix_spawn passes both ends on
  SimDevice parent;
  detail::WorkerSettings s;
  s.path = tune_test_programs::sim_worker;
  s.spec = "sim";
  detail::WorkerDevice proxy(parent.info(), parent.language(), s);
  REQUIRE(proxy.start().ok());
  ::close(p[1]);
  // EOF only once no process holds the write end: the worker closed its copy.
  pollfd pfd{p[0], POLLIN, 0};
  REQUIRE(::poll(&pfd, 1, 30000) == 1);
  char c = 0;
  CHECK(::read(p[0], &c, 1) == 0);
  ::close(p[0]);
}

TEST_CASE("isolation: a worker whose parent is already gone exits before opening its device") {
  Watchdog dog("parent gone", 60);
  int sv[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
  // --parent names a process that is not its parent (pid 1): as if this process had died while
  // the worker started, before its device opened.
  std::vector<std::string> argv_s = {
      tune_test_programs::sim_worker, "--fd", "0", "--parent", "1", "--device", "sim"};
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  REQUIRE(::posix_spawn(&pid, tune_test_programs::sim_worker, &fa, nullptr, argv.data(), environ) ==
          0);
  posix_spawn_file_actions_destroy(&fa);
  ::close(sv[1]);
  int ws = 0;
  REQUIRE(::waitpid(pid, &ws, 0) == pid);
  CHECK(WIFEXITED(ws));
  CHECK(WEXITSTATUS(ws) == 4);  // the watcher's exit code, with no hello sent
  std::vector<std::byte> hello;
  const Status got =
      detail::read_frame(sv[0], std::chrono::steady_clock::now() + std::chrono::seconds(5), &hello);
  CHECK(got.code() == StatusCode::unavailable);  // end of stream
  ::close(sv[0]);
}

TEST_CASE("isolation: a miss under capture launches only a tuned key, never an untimed candidate") {
  Watchdog dog("isolated capture miss", 60);
  const std::vector<Config> space = {cfg(32, 0), cfg(64, 0), cfg(128, 0)};
  const LaunchTarget stream = LaunchTarget::stream(reinterpret_cast<void*>(std::uintptr_t{0x51}));
  SUBCASE("no tuned key: failed_precondition, nothing compiled or run in the caller's process") {
    Rig rig;
    auto tuner = make(y_kernel(space), isolated());  // CaptureMiss::fallback, the default
    rig.dev.set_capturing(stream, true);
    const Status st = tuner->run(rig.dev, rig.args(), stream);
    REQUIRE_FALSE(st.ok());
    CHECK(st.code() == StatusCode::failed_precondition);
    CHECK_MESSAGE(st.message().find("kernel iso_y") != std::string::npos, st.to_string());
    CHECK_MESSAGE(st.message().find("with isolation on") != std::string::npos, st.to_string());
    CHECK_MESSAGE(st.message().find("tune before capturing") != std::string::npos, st.to_string());
    CHECK(rig.dev.compiles() == 0);
    CHECK(rig.dev.executions() == 0);
    CHECK(rig.dev.captured() == 0);
    CHECK(rig.dev.read<float>(*rig.y) == std::vector<float>(kN, -7.0f));
  }
  SUBCASE("a tuned key: its verified winner is captured for the nearest new key") {
    Rig rig;
    auto tuner = make(y_kernel(space), isolated());
    auto args = rig.args();
    REQUIRE(tuner->tune(rig.dev, args).ok());  // in the worker
    auto other = args;
    other[2] = ArgValue(static_cast<std::int32_t>(kN / 2));
    rig.dev.set_capturing(stream, true);
    const Status st = tuner->run(rig.dev, other, stream);
    REQUIRE_MESSAGE(st.ok(), st.to_string());
    CHECK(rig.dev.captured() == 1);
    CHECK_FALSE(tuner->best(rig.dev, other).has_value());  // not remembered: tuned later
  }
}

namespace {

// Lines in `path`: sim_worker writes one per start (count:PATH) or per compile (slow-compile:PATH).
int lines_in(const std::string& path) {
  int n = 0;
  std::string line;
  for (std::ifstream in(path); std::getline(in, line);) ++n;
  return n;
}

}  // namespace

TEST_CASE("isolation: the tuning budget holds while compiles queue on the worker's socket") {
  // Every compile takes kSlowCompileMs in the worker and they reach it one at a time: 24 take
  // six times the budget. The session's launches and timings go before queued compiles, and it
  // checks the budget between compiles, so the tuning ends partial with what was compiled by
  // then, long before the last compile: the rest finish in the background (the worker logs
  // each compile as it ends).
  Watchdog dog("isolated tuning under a budget", 120);
  const TempDir dir("libtune-budget-worker");
  const std::string log = (dir.path / "compiles").string();
  std::vector<Config> space;
  for (int bm = 8; bm <= 8 * 24; bm += 8) space.push_back(cfg(bm, 0));
  Rig rig;
  AutotunerOptions opts = isolated();
  opts.isolation.device = "slow-compile:" + log;
  opts.tuning_budget_ms = 4 * iso::kSlowCompileMs;
  auto tuner = make(y_kernel(space), opts);
  auto args = rig.args();
  const Status st = tuner->run(rig.dev, args);
  const int compiled_by_then = lines_in(log);
  auto report = tuner->last_report(rig.dev, args);
  REQUIRE(report.has_value());
  MESSAGE(report->to_string());
  CHECK_MESSAGE(compiled_by_then < static_cast<int>(space.size()),
                compiled_by_then << " of " << space.size() << " compiled when the tuning returned");
  std::size_t timed = 0, not_reached = 0;
  for (const auto& r : report->results) {
    CHECK_MESSAGE(r.status.ok(), r.status.to_string());
    (r.stats.count > 0 ? timed : not_reached) += 1;
  }
  CHECK(report->partial);
  CHECK(not_reached > 0);
  if (timed == 0) {
    // Nothing compiled within the budget (a very slow machine): the documented timeout.
    CHECK(st.code() == StatusCode::timeout);
  } else {
    REQUIRE_MESSAGE(st.ok(), st.to_string());
    const auto y = rig.dev.read<float>(*rig.y);
    CHECK(mismatches(y.data(), iso::reference(rig.xs)) == "");
  }
}

TEST_CASE("isolation: Autotuners on one device share one worker, which ends with the last") {
  Watchdog dog("a shared worker", 60);
  const TempDir dir("libtune-shared-worker");
  const std::string count = (dir.path / "starts").string();
  AutotunerOptions opts = isolated();
  opts.isolation.device = "count:" + count;
  Rig rig;
  auto args = rig.args();
  {
    // Two kernels (two Autotuners) tuned in isolation on one device: one worker process.
    auto first = make(y_kernel({cfg(32, 0), cfg(64, 0)}), opts);
    KernelDef other_def = y_kernel({cfg(64, 0), cfg(128, 0)});
    other_def.name = "iso_y_other";
    auto second = make(std::move(other_def), opts);
    REQUIRE(first->run(rig.dev, args).ok());
    REQUIRE(second->run(rig.dev, args).ok());
    CHECK(lines_in(count) == 1);
    CHECK(first->best(rig.dev, args)->to_string() == cfg(64, 0).to_string());
    CHECK(second->best(rig.dev, args)->to_string() == cfg(64, 0).to_string());
    const auto y = rig.dev.read<float>(*rig.y);
    CHECK(mismatches(y.data(), iso::reference(rig.xs)) == "");
    // One Autotuner releasing the device leaves the worker to the other.
    first->release(rig.dev);
    auto more = args;
    more[2] = ArgValue(static_cast<std::int32_t>(kN / 2));
    REQUIRE(second->run(rig.dev, more).ok());
    CHECK(lines_in(count) == 1);
  }
  // Both gone: the worker ended with them; the next Autotuner starts a fresh one.
  auto third = make(y_kernel({cfg(32, 0), cfg(64, 0)}), opts);
  REQUIRE(third->run(rig.dev, args).ok());
  CHECK(lines_in(count) == 2);
}
