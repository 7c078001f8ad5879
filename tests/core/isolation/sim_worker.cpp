// The isolation tests' worker: tune-worker's server loop (tune::detail::serve_worker) over a
// SimDevice configured as sim_kernel.hpp says, with faults injected by configuration (F=1
// crash, F=2 hang, F=3 device_lost, F=4 deferred device_lost, F=5 slow). Started by the tests'
// Autotuner as `sim_worker --fd N --parent PID --device SPEC`. SPEC:
//   "refuse"      fails to open its device (the startup-failure test);
//   "late"        a deferred fault escapes synchronize() and lands in the next other call
//                 (models a fault the worker's own synchronization misses: the compile retry);
//   "version"     says hello in another protocol version;
//   "second:PATH" refuses to open its device at its second start (PATH counts the starts);
//   "count:PATH"  appends a line to PATH at every start, then opens the simulated device;
//   "slow-compile:PATH" every compile takes kSlowCompileMs and appends a line to PATH when it
//                 ends (compiles serialised on the socket against the tuning budget);
// anything else opens the simulated device.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "isolation/wire.hpp"
#include "isolation/worker_server.hpp"
#include "sim_kernel.hpp"

namespace {

using namespace tune;
using tune::testing::SimDevice;
using tune::testing::SimKernel;
namespace iso = tune::testing::isolation;

// A SimDevice whose kernels misbehave as their configuration's F says. A deferred fault
// (F=4) is reported, as CUDA does, by the device's next call after the launch: synchronize()
// (unless `late`) or whatever else comes first.
class FaultyDevice final : public Device {
 public:
  // `compile_log`: not empty, every compile is slow and appends a line there when it ends.
  FaultyDevice(bool late, std::string compile_log)
      : late_(late), compile_log_(std::move(compile_log)) {
    iso::configure(sim_);
    if (!compile_log_.empty())
      sim_.compile_delay_if([](const Config&) { return true; }, iso::kSlowCompileMs);
  }
  const DeviceInfo& info() const noexcept override { return sim_.info(); }
  Language language() const noexcept override { return sim_.language(); }
  Result<Buffer> alloc(std::uint64_t bytes) override {
    TUNE_RETURN_IF_ERROR(deferred());
    return sim_.alloc(bytes);
  }
  Status upload(DeviceBuffer& d, const void* s, std::uint64_t n, std::uint64_t o) override {
    TUNE_RETURN_IF_ERROR(deferred());
    return sim_.upload(d, s, n, o);
  }
  Status download(const DeviceBuffer& s, void* d, std::uint64_t n, std::uint64_t o) override {
    TUNE_RETURN_IF_ERROR(deferred());
    return sim_.download(s, d, n, o);
  }
  Status fill(DeviceBuffer& d, std::uint32_t p, std::uint64_t n, std::uint64_t o) override {
    TUNE_RETURN_IF_ERROR(deferred());
    return sim_.fill(d, p, n, o);
  }
  Status copy(DeviceBuffer& d, const DeviceBuffer& s, std::uint64_t n) override {
    TUNE_RETURN_IF_ERROR(deferred());
    return sim_.copy(d, s, n);
  }
  Result<std::unique_ptr<CompiledKernel>> compile(const KernelSource& src,
                                                  const Config& c) override {
    TUNE_RETURN_IF_ERROR(deferred());
    auto k = sim_.compile(src, c);
    if (!compile_log_.empty()) std::ofstream(compile_log_, std::ios::app) << "compiled\n";
    return k;
  }
  Status launch(const CompiledKernel& k, const LaunchDims& d, ArgList a) override {
    TUNE_RETURN_IF_ERROR(deferred());
    TUNE_RETURN_IF_ERROR(fault(k, 1));
    return sim_.launch(k, d, a);
  }
  Result<std::vector<double>> time(const CompiledKernel& k, const LaunchDims& d, ArgList a,
                                   const TimingPlan& p) override {
    TUNE_RETURN_IF_ERROR(deferred());
    TUNE_RETURN_IF_ERROR(fault(k, p.reps));
    auto t = sim_.time(k, d, a, p);
    TUNE_RETURN_IF_ERROR(deferred());  // time() waits for its launches: the fault shows here
    return t;
  }
  Status synchronize() override {
    if (!late_) TUNE_RETURN_IF_ERROR(deferred());
    return sim_.synchronize();
  }

 private:
  Status fault(const CompiledKernel& k, int reps) {
    const auto& config = static_cast<const SimKernel&>(k).config();
    switch (config.get_int("F")) {
      case iso::crash:
        std::fprintf(stderr, "sim_worker: simulated illegal address in {%s}\n",
                     config.to_string().c_str());
        std::abort();
      case iso::hang:
        for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
      case iso::lost:
        return Status(StatusCode::device_lost,
                      "simulated illegal address (sticky) in {" + config.to_string() + "}");
      case iso::deferred:
        pending_ = config.to_string();
        return {};
      case iso::slow:
        std::this_thread::sleep_for(std::chrono::milliseconds(iso::kSlowMs) * reps);
        return {};
      default:
        return {};
    }
  }
  // The pending deferred fault, reported once (the context stays poisoned: device_lost).
  Status deferred() {
    if (pending_.empty()) return {};
    return Status(StatusCode::device_lost,
                  "simulated illegal address (deferred) in {" + pending_ + "}");
  }
  SimDevice sim_;
  const bool late_;
  const std::string compile_log_;
  std::string pending_;
};

int say_other_version(int fd) {
  tune::detail::WireWriter w;
  w.u8(static_cast<std::uint8_t>(tune::detail::WireOp::hello));
  w.u32(tune::detail::kWireVersion + 7);
  w.status(Status());
  w.str("sim");
  (void)tune::detail::write_frame(fd, w.bytes());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int fd = -1;
  pid_t parent = 0;
  std::string spec;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    if (flag == "--fd") fd = std::atoi(argv[i + 1]);
    if (flag == "--parent") parent = static_cast<pid_t>(std::atol(argv[i + 1]));
    if (flag == "--device") spec = argv[i + 1];
  }
  if (fd < 0) return 64;
  tune::detail::begin_worker(fd, parent);
  if (spec == "version") return say_other_version(fd);
  if (spec.rfind("second:", 0) == 0) {  // PATH counts the starts, a line each
    const std::string count_file = spec.substr(7);
    std::string line;
    int starts = 0;
    for (std::ifstream in(count_file); std::getline(in, line);) ++starts;
    std::ofstream(count_file, std::ios::app) << "start\n";
    if (starts == 1) spec = "refuse";
  }
  if (spec.rfind("count:", 0) == 0) {  // a line per start
    std::ofstream(spec.substr(6), std::ios::app) << "start\n";
    spec = "sim";
  }
  if (spec == "refuse") {
    std::fprintf(stderr, "sim_worker: no such device 'refuse'\n");
    return tune::detail::refuse_worker(
        fd, Status(StatusCode::not_found, "no simulated device named 'refuse'"));
  }
  const bool slow = spec.rfind("slow-compile:", 0) == 0;
  FaultyDevice dev(spec == "late", slow ? spec.substr(13) : std::string());
  return tune::detail::serve_worker(dev, fd);
}
