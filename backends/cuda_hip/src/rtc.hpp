// Internal to backends/cuda_hip (not installed). Run-time compilation shared by the CUDA
// (NVRTC) and HIP (hiprtc) backends: a variant's compiler options (its definitions come from
// tune::definitions, as on every backend), the compiler adaptor, and compiling through the
// on-disk binary cache (tune::BinaryCache, tune/backend/binary_cache.hpp, shared with Vulkan).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tune/backend/binary_cache.hpp"
#include "tune/config.hpp"
#include "tune/cuda_hip.hpp"
#include "tune/definitions.hpp"
#include "tune/device.hpp"
#include "tune/status.hpp"

namespace tune::gpu {

// tune/cuda_hip.hpp: public, the result of tune::cuda::compile and tune::hip::compile.
using RtcOutput = ::tune::RtcOutput;

// The binary cache lives in core (one implementation for every backend); this name stays for
// the CUDA and HIP device factories that open it as gpu::BinaryCache.
using BinaryCache = ::tune::BinaryCache;

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
  // TUNE_WARP_SIZE for it; invalid_argument when `arch` is not a name this compiler knows, or
  // when `arch_specific` (KernelSource::arch_specific: "-arch=sm_90a") asks for what it has not.
  virtual Result<std::vector<std::string>> target_options(std::string_view arch,
                                                          bool arch_specific) const = 0;
  // Options every compile gets (language standard, optimisation, verbose resource output).
  virtual std::vector<std::string> base_options() const = 0;
  // The per-thread register cap option, or empty when the compiler has none.
  virtual std::string max_registers_option(int registers) const = 0;
  // Include options for the toolkit's own headers (NVRTC: "-I<cuda>/include/cccl",
  // "-I<cuda>/include"), after the kernel's include_dirs; empty by default.
  virtual std::vector<std::string> toolkit_include_options() const { return {}; }
  // Compiles `source`; compile_error with the log when it fails, invalid_argument naming the
  // options when the compiler refuses one. Blocking. `headers` are given to the compiler as
  // in-memory headers. A non-empty `name_expression` ("scale<4, true>") is instantiated and its
  // lowered (mangled) name returned in RtcOutput::entry_name.
  virtual Result<RtcOutput> compile(std::string_view source, std::string_view file_name,
                                    std::span<const std::string> options,
                                    std::span<const KernelHeader> headers,
                                    std::string_view name_expression) = 0;
};

// "-DNAME=value": how NVRTC and hiprtc are given one of tune::definitions() (definitions.hpp).
std::string define_option(const Definition& d);

// The kernel's own options (KernelSource::options) checked for what libtune must refuse:
// an empty option, one that selects the target or the register cap (libtune sets them from
// the device and the configuration), an include path or a forced include (use include_dirs
// and #include, which the cache key follows), a -D of a reserved TUNE_ name. invalid_argument
// naming the option and `compiler_name`.
Status check_kernel_options(std::span<const std::string> options, std::string_view compiler_name);

// Every option of one compile: base, target, register cap, the kernel's own options, -I of
// each include dir in order, the toolkit's include options, then the variant's definitions
// (tune::definitions(config, source), in their order). invalid_argument for an unknown `arch`,
// a refused kernel option, or a template entry whose brackets do not balance.
Result<std::vector<std::string>> compile_options(const RtcCompiler& compiler, std::string_view arch,
                                                 const Config& config, const KernelSource& source);

// Registers, spill stores and shared memory as printed by ptxas -v ("Used 40 registers, ...
// 8 bytes spill stores"). Fields the log does not mention stay zero.
KernelResources parse_resource_log(std::string_view log);

// Compiles `source` for `arch` with `config`, through `cache` when it is not null: the key is
// the compiler's version, every option (target, kernel options, include dirs and config
// definitions included), a hash of the source text and entry, and, when the source includes
// files, the hash of its include closure (tune/backend/includes.hpp: the text of every file an
// #include may open). A closure that changed while the compiler ran is not stored. A hit sets
// `from_cache` and skips the compiler. A template entry (see KernelSource) is instantiated by
// tune::name_expression, its lowered name stored with the binary; the parameters it substitutes are
// not among the definitions.
Result<RtcOutput> compile_for(RtcCompiler& compiler, std::string_view arch,
                              const KernelSource& source, const Config& config, BinaryCache* cache);

}  // namespace tune::gpu
