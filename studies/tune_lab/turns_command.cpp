#include "turns_command.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "command_error.hpp"
#include "open_cli_device.hpp"
#include "tune/kernels/bundled.hpp"
#include "tune/tune.hpp"
#include "turn_length.hpp"

namespace tune::cli {
namespace {

constexpr const char* kTurnsCommand = "tune-lab turns";  // prefixes its error messages

struct TurnsArgs {
  std::string device;
  std::string kernel = "matmul_wgmma_f16";
  std::vector<std::int64_t> sizes = {8192, 4096};
  std::vector<std::string> configs = {
      "BM=128,BN=256,GROUP_M=1,WG_CONSUMERS=2;block=384x1x1,num_stages=4,shared_bytes=197696",
      "BM=128,BN=256,GROUP_M=8,WG_CONSUMERS=2;block=384x1x1,num_stages=4,shared_bytes=197696",
      "BM=256,BN=128,GROUP_M=8,WG_CONSUMERS=2;block=384x1x1,num_stages=4,shared_bytes=197696"};
  double heat_ms = 1000.0;
  int samples = 200;
};

void cmd_turns(const TurnsArgs& a) {
  std::unique_ptr<Device> dev = open_cli_device("turns", a.device, "tune-lab");
  if (!dev) throw CLI::RuntimeError(1);
  const auto kernels = kernels::bundled_kernels(dev->language());
  const kernels::BundledKernel* k = nullptr;
  for (const auto& b : kernels)
    if (b.name == a.kernel) k = &b;
  if (k == nullptr)
    fail_command(kTurnsCommand, "no bundled kernel '" + a.kernel + "' for this device");
  for (std::int64_t n : a.sizes) {
    // The bundled matrix multiplies take one size for M, N and K.
    const Status st = lab::print_turn_lengths(*dev, *k, {n, n, n}, a.configs, a.heat_ms, a.samples);
    if (!st.ok())
      fail_command(kTurnsCommand, a.kernel + " at " + std::to_string(n) + ": " + st.to_string());
  }
}

}  // namespace

void add_turns_command(CLI::App& app) {
  auto args = std::make_shared<TurnsArgs>();
  CLI::App* c = app.add_subcommand(
      "turns",
      "Time near-equal configurations in turns of 1, 5, 25 and 100 launches after a heat-up: "
      "whether the turn length decides which is faster");
  add_device_option(*c, args->device);
  c->add_option("--kernel", args->kernel, "a bundled kernel (default matmul_wgmma_f16)");
  c->add_option("--size", args->sizes, "M = N = K, repeatable (default 8192 and 4096)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 20));
  c->add_option("--config", args->configs, "a configuration as Config text, repeatable");
  c->add_option("--heat-ms", args->heat_ms, "launches back to back before each turn length")
      ->check(CLI::Range(0.0, 600000.0));
  c->add_option("--samples", args->samples, "launches per contender and turn length")
      ->check(CLI::Range(1, 100000));
  c->callback([args] { cmd_turns(*args); });
}

}  // namespace tune::cli
