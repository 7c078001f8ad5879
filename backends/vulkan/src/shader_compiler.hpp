// ShaderCompiler: a GLSL compute shader and its macro definitions -> SPIR-V (shaderc, for the
// device's Vulkan version), reflected (spirv_reflect.hpp), with two caches: one in memory for
// the process and one on disk (<cache dir>/spirv through tune::BinaryCache, per TUNE_CACHE /
// TUNE_CACHE_DIR: off = neither read nor written, readonly = read only). The cache key names
// everything that decides the SPIR-V: the toolchain and its settings (shaderc, glslang and
// SPIRV-Tools versions, target, recipe), the source (two independent 64-bit hashes and its
// length) and every macro definition.
//
// Ownership: owns the shaderc compiler and both caches; compiled modules are shared
// (shared_ptr) with whoever asked for them and stay valid after the compiler is gone.
// Thread safety: compile() and stats() may be called from any thread. One mutex guards the
// in-memory maps only; shaderc (whose compiler object is safe to share between threads) and
// disk reads run outside it, so different variants compile in parallel (issue 15: a tuning's
// compiles were serialised here), while a variant asked for twice at once is built once: the
// second caller waits for the first.
// Blocking: compile() runs shaderc (2-110 ms) or reads a file, or waits for the thread that
// does.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <shaderc/shaderc.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "spirv_reflect.hpp"
#include "tune/backend/binary_cache.hpp"
#include "tune/backend/includes.hpp"
#include "tune/definitions.hpp"
#include "tune/device.hpp"

namespace tune::vk {

struct GlslOptions;  // KernelSource::options as shaderc settings (shader_compiler.cpp)

class ShaderCompiler {
 public:
  // One compiled module.
  struct Spirv {
    std::vector<std::uint32_t> words;
    SpirvInfo info;
    std::string log;         // warnings
    bool from_disk = false;  // read from the disk cache rather than compiled by this process
    std::string key;         // its cache key (evict())
  };
  // Why a module does not match the kernel it was asked for exactly (empty: it does).
  using ModuleCheck = std::function<std::string(const SpirvInfo&)>;
  struct Stats {
    std::uint64_t entries = 0;           // modules kept in memory
    std::uint64_t shaderc_compiles = 0;  // cache misses
    std::uint64_t disk_hits = 0;
    std::string disk_dir;  // empty without a disk cache
  };

  // What a precompiled module (KernelSource::spirv) may be on the device: SPIR-V up to the
  // version its Vulkan version consumes (1.1: 1.3, 1.2: 1.5, 1.3: 1.6), with LocalSizeId only
  // where maintenance4 is enabled.
  struct ModuleLimits {
    std::uint32_t max_version = 0x00010300u;  // the header's version word
    bool local_size_id = false;
  };
  static ModuleLimits module_limits(std::uint32_t api_version, bool maintenance4);

  // GLSL compiles for Vulkan 1.2 at most (`api_version` is the device's): a Vulkan 1.3 target
  // (SPIR-V 1.6) states the workgroup size with LocalSizeId, which needs maintenance4, and the
  // cache keys of every shader would change. Precompiled modules may go further (module_limits).
  ShaderCompiler(std::uint32_t api_version, bool maintenance4);
  ShaderCompiler(const ShaderCompiler&) = delete;
  ShaderCompiler& operator=(const ShaderCompiler&) = delete;

  // Whether shaderc initialised.
  bool valid() const { return compiler_.IsValid(); }
  // "shaderc (SPIR-V 1.6 rev 1) target vulkan1.2 -O": DeviceInfo::compiler_version.
  const std::string& version() const noexcept { return version_; }

  // The module for `source` with `macros`; compile_error with shaderc's log on failure. A
  // precompiled module (KernelSource::spirv) is reflected and returned as it is (the macros
  // are then its specialization constants' values, set at pipeline creation: specialization.hpp);
  // invalid_argument when it is not well-formed SPIR-V, does not fit, or comes with options.
  // `source.options` are glslc spellings mapped onto shaderc (README); any other option, and
  // module globals (Vulkan has none), are invalid_argument. #include lines are served by
  // libtune's includer (tune/backend/includes.hpp: in-memory headers, then the including
  // file's directory for "quoted" names, then include_dirs), and the text of every file they
  // may open is in the cache key. `*cached` (when given) says whether the module came from
  // this compiler's memory or the disk cache rather than from shaderc in this call.
  // `fits` (when given): an entry read from disk that does not fit is evicted (a warning) and
  // compiled afresh; a module shaderc built that does not fit (a variant that leaves an
  // argument unused) is kept in memory but never written to disk.
  Result<std::shared_ptr<const Spirv>> compile(const KernelSource& source,
                                               const std::vector<Definition>& macros,
                                               bool* cached = nullptr,
                                               const ModuleCheck& fits = {});
  // Drops the module of `key` from memory and from the disk cache, logging `why`; whether
  // anything was dropped. Modules already handed out stay valid.
  bool evict(const std::string& key, std::string_view why);
  Stats stats() const;

 private:
  std::string key_of(const KernelSource& source, const std::vector<Definition>& macros,
                     const IncludeClosure& closure) const;
  using SpirvResult = Result<std::shared_ptr<const Spirv>>;
  // Without mu_ (shaderc's compiler is shared between threads).
  Result<std::shared_ptr<const Spirv>> run_shaderc(const KernelSource& source,
                                                   const std::vector<Definition>& macros,
                                                   const GlslOptions& glsl,
                                                   const IncludeClosure& closure,
                                                   const std::string& key);
  // Without mu_ (BinaryCache is thread-safe). Null on a miss or a damaged or unfitting entry
  // (evicted).
  std::shared_ptr<const Spirv> load(const std::string& key, const ModuleCheck& fits);
  void store(const std::string& key, const Spirv& spirv);

  shaderc_env_version target_env_;
  ModuleLimits modules_;
  std::string version_;
  std::string toolchain_;  // the first lines of every cache key
  std::shared_ptr<BinaryCache> disk_;

  mutable std::mutex mu_;
  shaderc::Compiler compiler_;
  std::map<std::string, std::shared_ptr<const Spirv>> memory_;
  // Keys being loaded or compiled by some thread; later callers wait on the future.
  std::map<std::string, std::shared_future<SpirvResult>> building_;
  std::atomic<std::uint64_t> shaderc_compiles_{0};
  std::uint64_t disk_hits_ = 0;
};

}  // namespace tune::vk
