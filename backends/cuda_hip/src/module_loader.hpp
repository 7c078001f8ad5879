// Module loading: a compiled binary made a loaded module with its kernel function, checked
// against what the kernel must be (a cached binary's parameters, where the driver tells them),
// its resources read, its launch limits fitted and its module globals written.
//
// Ownership: a LoadedModule owns its module until release() hands it over (to a GpuKernel);
// the ModuleLoader refers to the device's GpuApi, GpuStatus and DeviceInfo, which outlive it.
// Thread safety: loading runs without the device's queue lock (module loading is thread-safe
// in both runtimes; several threads may compile at once); write_globals() takes the queue lock
// it is given around its copies. Callers bind the device's context (CurrentScope) first.
// Blocking: write_globals() waits for its copies (the host bytes are freed when it returns).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "gpu_api.hpp"
#include "gpu_status.hpp"
#include "tune/device.hpp"

namespace tune::gpu {

// A module and the kernel function in it; unloaded by the destructor unless released.
class LoadedModule {
 public:
  LoadedModule(GpuApi& api, Handle module, Handle function) noexcept
      : api_(&api), module_(module), function_(function) {}
  ~LoadedModule() { unload(); }
  LoadedModule(LoadedModule&& other) noexcept
      : api_(other.api_), module_(other.release()), function_(other.function_) {}
  LoadedModule& operator=(LoadedModule&&) = delete;
  LoadedModule(const LoadedModule&) = delete;
  LoadedModule& operator=(const LoadedModule&) = delete;

  Handle module() const noexcept { return module_; }
  Handle function() const noexcept { return function_; }
  // The module, no longer unloaded here: its new owner unloads it.
  Handle release() noexcept {
    Handle m = module_;
    module_ = nullptr;
    return m;
  }
  // Unloads the module now (nothing to report: a failed unload leaks it).
  void unload() noexcept {
    if (module_ != nullptr) (void)api_->module_unload(release());
  }

 private:
  GpuApi* api_;
  Handle module_;
  Handle function_;
};

// Why a function whose parameters have these sizes in bytes, in order, is not the kernel of
// `sig` followed by `maps` TMA tensor maps (a buffer is one device pointer, a scalar its type's
// size, a tensor map 128 bytes), or empty when it is. Pure.
std::string parameters_unlike(std::span<const std::size_t> sizes, const KernelSignature& sig,
                              std::size_t maps);

class ModuleLoader {
 public:
  ModuleLoader(GpuApi& api, GpuStatus& status, const DeviceInfo& info) noexcept
      : api_(api), status_(status), info_(info) {}

  // `binary` loaded and its function `symbol` found; compile_error naming `name` (the variant,
  // "entry{config}") when either fails.
  Result<LoadedModule> load(const void* binary, const std::string& symbol, const std::string& name);
  // Why a cached binary's function is not the kernel of `sig` with `maps` tensor maps, or
  // empty when it is, when `sig` is unknown, or where the driver cannot tell (HIP; CUDA before
  // 12.4's cuFuncGetParamInfo). What is on disk may have been put there by someone else.
  std::string cached_binary_unlike(Handle function, const KernelSignature& sig,
                                   std::size_t maps) const;
  // The function's resources: the compile log's (spill stores come only from there) with the
  // driver's attributes over it.
  Result<KernelResources> resources(Handle function, std::string_view log, const std::string& name);
  // The variant's launch options checked against the function's and the device's limits
  // (threads per block, shared memory), before any launch: out_of_resources naming what does
  // not fit. Returns the dynamic shared memory the function is allowed, raised above the
  // default when the options ask for more.
  Result<std::uint32_t> fit_limits(Handle function, const LaunchOptions& options,
                                   const KernelResources& res, const std::string& name);
  // Copies `globals` (KernelSource::module_globals' values) into `module` before its first
  // launch, on `stream` under `queue_mutex` (ordered before any launch of it). invalid_argument
  // for a symbol the module lacks or a size unlike the variable's.
  Status write_globals(Handle module, const std::vector<ModuleGlobal>& globals,
                       const std::string& name, std::mutex& queue_mutex, Handle stream);

 private:
  // The sizes of `function`'s parameters; empty where the driver cannot tell.
  std::vector<std::size_t> parameter_sizes(Handle function) const;

  GpuApi& api_;
  GpuStatus& status_;
  const DeviceInfo& info_;
};

}  // namespace tune::gpu
