// The isolation tests' worker: tune-worker's server loop (tune::detail::serve_worker) over a
// SimDevice configured as sim_kernel.hpp says, with faults injected by configuration (F=1
// crash, F=2 hang, F=3 device_lost). Started by the tests' Autotuner as
// `sim_worker --fd N --device SPEC`; SPEC "refuse" makes it fail to open its device (the
// startup-failure test), anything else opens the simulated device.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>

#include "isolation/worker_server.hpp"
#include "sim_kernel.hpp"

namespace {

using namespace tune;
using tune::testing::SimDevice;
using tune::testing::SimKernel;
namespace iso = tune::testing::isolation;

// A SimDevice whose kernels misbehave as their configuration's F says.
class FaultyDevice final : public Device {
 public:
  FaultyDevice() { iso::configure(sim_); }
  const DeviceInfo& info() const noexcept override { return sim_.info(); }
  Language language() const noexcept override { return sim_.language(); }
  Result<Buffer> alloc(std::uint64_t bytes) override { return sim_.alloc(bytes); }
  Status upload(DeviceBuffer& d, const void* s, std::uint64_t n, std::uint64_t o) override {
    return sim_.upload(d, s, n, o);
  }
  Status download(const DeviceBuffer& s, void* d, std::uint64_t n, std::uint64_t o) override {
    return sim_.download(s, d, n, o);
  }
  Status fill(DeviceBuffer& d, std::uint32_t p, std::uint64_t n, std::uint64_t o) override {
    return sim_.fill(d, p, n, o);
  }
  Status copy(DeviceBuffer& d, const DeviceBuffer& s, std::uint64_t n) override {
    return sim_.copy(d, s, n);
  }
  Result<std::unique_ptr<CompiledKernel>> compile(const KernelSource& src,
                                                  const Config& c) override {
    return sim_.compile(src, c);
  }
  Status launch(const CompiledKernel& k, const LaunchDims& d, ArgList a) override {
    TUNE_RETURN_IF_ERROR(fault(k));
    return sim_.launch(k, d, a);
  }
  Result<std::vector<double>> time(const CompiledKernel& k, const LaunchDims& d, ArgList a,
                                   const TimingPlan& p) override {
    TUNE_RETURN_IF_ERROR(fault(k));
    return sim_.time(k, d, a, p);
  }
  Status synchronize() override { return sim_.synchronize(); }

 private:
  static Status fault(const CompiledKernel& k) {
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
      default:
        return {};
    }
  }
  SimDevice sim_;
};

}  // namespace

int main(int argc, char** argv) {
  int fd = -1;
  std::string spec;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    if (flag == "--fd") fd = std::atoi(argv[i + 1]);
    if (flag == "--device") spec = argv[i + 1];
  }
  if (fd < 0) return 64;
  if (spec == "refuse") {
    std::fprintf(stderr, "sim_worker: no such device 'refuse'\n");
    return tune::detail::refuse_worker(
        fd, Status(StatusCode::not_found, "no simulated device named 'refuse'"));
  }
  FaultyDevice dev;
  return tune::detail::serve_worker(dev, fd);
}
