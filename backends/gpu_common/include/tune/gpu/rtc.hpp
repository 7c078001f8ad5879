// Run-time compilation shared by the CUDA (NVRTC) and HIP (hiprtc) backends: how a Config
// becomes compiler options, the compiler adaptor, and the on-disk binary cache.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tune/config.hpp"
#include "tune/device.hpp"
#include "tune/status.hpp"

namespace tune::gpu {

// A compiled code object (CUBIN / HSACO) and the compiler's log.
struct RtcOutput {
  std::string binary;
  std::string log;
  bool from_cache = false;
};

// One run-time compiler. Implementations must make compile() safe to call from several
// threads at once (serialising internally when the library is not thread-safe).
class RtcCompiler {
 public:
  virtual ~RtcCompiler() = default;
  // "NVRTC 13.0" / "hiprtc 5.2": part of every binary-cache key and DeviceInfo.
  virtual std::string version() const = 0;
  // Subfolder of the cache directory and file suffix: "cubin", "hsaco".
  virtual std::string_view binary_kind() const noexcept = 0;
  // Options selecting the target (e.g. "-arch=sm_90", "--offload-arch=gfx90a") and defining
  // TUNE_WARP_SIZE for it; invalid_argument when `arch` is not a name this compiler knows.
  virtual Result<std::vector<std::string>> target_options(std::string_view arch) const = 0;
  // Options every compile gets (language standard, optimisation, verbose resource output).
  virtual std::vector<std::string> base_options() const = 0;
  // The per-thread register cap option, or empty when the compiler has none.
  virtual std::string max_registers_option(int registers) const = 0;
  // Compiles `source`; compile_error with the log when it fails. Blocking.
  virtual Result<RtcOutput> compile(std::string_view source, std::string_view file_name,
                                    std::span<const std::string> options) = 0;
};

// The -D definitions of a configuration: NAME=value for each parameter (booleans 1/0, strings
// verbatim), TUNE_BLOCK_X/Y/Z, TUNE_NUM_WARPS, TUNE_NUM_STAGES and TUNE_SHARED_BYTES for each
// launch option that is set.
std::vector<std::string> config_defines(const Config& config);

// Every option of one compile: base, target, register cap, then the config's definitions.
Result<std::vector<std::string>> compile_options(const RtcCompiler& compiler, std::string_view arch,
                                                 const Config& config);

// Registers, spill stores and shared memory as printed by ptxas -v ("Used 40 registers, ...
// 8 bytes spill stores"). Fields the log does not mention stay zero.
KernelResources parse_resource_log(std::string_view log);

// CUBIN/HSACO files keyed by everything that decides their bytes. Entries are written to a
// temporary file and renamed into place, so concurrent writers (threads or processes) never
// expose a partial file; a corrupt or foreign entry reads as a miss (with a warning) and is
// replaced. Thread-safe; never fails the compile (I/O problems become warnings).
class BinaryCache {
 public:
  // $TUNE_CACHE_DIR/<kind>, else $XDG_CACHE_HOME/libtune/<kind>, else ~/.cache/libtune/<kind>.
  // Null when TUNE_CACHE=off or no directory can be named; read-only when TUNE_CACHE=readonly.
  static std::shared_ptr<BinaryCache> open_default(std::string_view kind);
  BinaryCache(std::filesystem::path dir, bool writable);

  std::optional<RtcOutput> load(std::string_view key_text);
  void store(std::string_view key_text, const RtcOutput& output);
  const std::filesystem::path& dir() const noexcept { return dir_; }

 private:
  std::filesystem::path path_for(std::uint64_t hash) const;
  std::filesystem::path dir_;
  bool writable_;
};

// Compiles `source` for `arch` with `config`, through `cache` when it is not null.
Result<RtcOutput> compile_for(RtcCompiler& compiler, std::string_view arch,
                              const KernelSource& source, const Config& config, BinaryCache* cache);

}  // namespace tune::gpu
