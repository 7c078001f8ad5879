#include "flush_check_command.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "command_error.hpp"
#include "flush_check.hpp"
#include "open_cli_device.hpp"
#include "tune/backend/last_level_cache.hpp"
#include "tune/tune.hpp"

namespace tune::cli {
namespace {

constexpr const char* kFlushCheckCommand = "tune-lab flush-check";  // prefixes its error messages

struct FlushCheckArgs {
  std::string device;
  int reps = 30;
  std::string bytes;  // the buffer read; empty: half the last-level cache
  bool json = false;
};

void cmd_flush_check(const FlushCheckArgs& a) {
  std::unique_ptr<Device> dev = open_cli_device("flush-check", a.device, "tune-lab");
  if (!dev) throw CLI::RuntimeError(1);
  FlushCheckOptions opts;
  opts.reps = a.reps;
  if (!a.bytes.empty()) {
    auto bytes = parse_byte_size(a.bytes);
    if (!bytes.ok()) fail_command(kFlushCheckCommand, "--bytes: " + bytes.status().message());
    opts.buffer_bytes = *bytes;
  }
  auto r = measure_flush_effect(*dev, opts);
  if (!r.ok()) fail_command(kFlushCheckCommand, r.status().to_string());
  const DeviceInfo& info = dev->info();
  if (a.json) {
    nlohmann::json j = {{"device", info.name},
                        {"backend", info.backend},
                        {"llc_bytes", r->llc_bytes},
                        {"llc_source", std::string(to_string(r->llc_source))},
                        {"flush_bytes", r->flush_bytes},
                        {"buffer_bytes", r->buffer_bytes},
                        {"reps", r->reps},
                        {"warm_ns", r->warm_ns},
                        {"cold_ns", r->cold_ns},
                        {"cold_ratio", r->cold_ratio()},
                        {"flush_works", r->flush_works()},
                        {"rotate_sets", r->rotate_sets},
                        {"rotate_ns", r->rotate_ns},
                        {"rotate_ratio", r->rotate_ratio()},
                        {"rotate_fallback", r->rotate_fallback},
                        {"works_ratio", r->works_ratio}};
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::printf("device: %s (%s)\n%s", info.name.c_str(), info.backend.c_str(),
              r->to_string().c_str());
}

}  // namespace

void add_flush_check_command(CLI::App& app) {
  auto args = std::make_shared<FlushCheckArgs>();
  CLI::App* c = app.add_subcommand(
      "flush-check",
      "Time a read of half the last-level cache warm, after the cache flush and with rotating "
      "input copies: whether timing's flush makes a launch cold on this device");
  add_device_option(*c, args->device);
  c->add_option("--reps", args->reps, "timed repetitions of each kind")
      ->check(CLI::Range(1, 100000));
  c->add_option("--bytes", args->bytes, "bytes read (256M, 1G; default: half the cache)");
  c->add_flag("--json", args->json, "Machine-readable output");
  c->callback([args] { cmd_flush_check(*args); });
}

}  // namespace tune::cli
