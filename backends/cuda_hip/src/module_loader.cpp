// Module loading: load, the cached binary's parameters, resources, limits, module globals.
#include "module_loader.hpp"

#include <utility>

#include "rtc.hpp"

namespace tune::gpu {
namespace {

constexpr std::uint32_t kDefaultSharedLimit = 48 * 1024;  // without the opt-in attribute

}  // namespace

std::string parameters_unlike(std::span<const std::size_t> sizes, const KernelSignature& sig,
                              std::size_t maps) {
  const auto& decls = sig.decls();
  if (sizes.size() != decls.size() + maps) {
    return std::to_string(sizes.size()) + " parameters, but the kernel has " +
           std::to_string(decls.size()) + " arguments" +
           (maps != 0 ? " and " + std::to_string(maps) + " tensor maps" : std::string());
  }
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const std::size_t want = i >= decls.size()                  ? std::size_t{128}
                             : decls[i].kind == ArgKind::buffer ? sizeof(DevPtr)
                                                                : size_of(decls[i].type);
    if (sizes[i] != want) {
      return "parameter " + std::to_string(i) + " takes " + std::to_string(sizes[i]) +
             " bytes, but " +
             (i < decls.size() ? "argument '" + decls[i].name + "'" : std::string("a tensor map")) +
             " is " + std::to_string(want);
    }
  }
  return {};
}

Result<LoadedModule> ModuleLoader::load(const void* binary, const std::string& symbol,
                                        const std::string& name) {
  Handle module = nullptr;
  if (int rc = api_.module_load(&module, binary); rc != 0)
    return status_.fail(Call::module_load, rc, StatusCode::compile_error, "loading " + name);
  // From here the module is unloaded on every failure path (LoadedModule's destructor).
  LoadedModule loaded(api_, module, nullptr);
  Handle function = nullptr;
  if (int rc = api_.module_get_function(&function, module, symbol.c_str()); rc != 0) {
    return status_.fail(
        Call::module_get_function, rc, StatusCode::compile_error,
        "entry point '" + symbol + "' of " + name + " (is it declared extern \"C\" __global__?)");
  }
  return LoadedModule(api_, loaded.release(), function);
}

std::vector<std::size_t> ModuleLoader::parameter_sizes(Handle function) const {
  std::vector<std::size_t> sizes;
  if (!api_.has_param_info()) return sizes;
  std::size_t offset = 0, bytes = 0;
  // Past the last parameter the driver answers an error; 4096 bounds a broken answer.
  while (sizes.size() < 4096 && api_.func_param_info(function, sizes.size(), &offset, &bytes) == 0)
    sizes.push_back(bytes);
  return sizes;
}

std::string ModuleLoader::cached_binary_unlike(Handle function, const KernelSignature& sig,
                                               std::size_t maps) const {
  if (sig.decls().empty() || !api_.has_param_info()) return {};
  return parameters_unlike(parameter_sizes(function), sig, maps);
}

Result<KernelResources> ModuleLoader::resources(Handle function, std::string_view log,
                                                const std::string& name) {
  KernelResources res = parse_resource_log(log);  // spill stores come only from here
  int value = 0;
  const std::pair<FuncAttr, std::uint32_t*> attrs[] = {
      {FuncAttr::num_regs, &res.registers},
      {FuncAttr::local_bytes, &res.local_bytes},
      {FuncAttr::shared_bytes, &res.shared_bytes},
      {FuncAttr::max_threads, &res.max_threads},
  };
  for (const auto& [attr, field] : attrs) {
    if (int rc = api_.func_get_attribute(&value, attr, function); rc != 0)
      return status_.fail(Call::func_get_attribute, rc, StatusCode::internal, name);
    if (value > 0) *field = static_cast<std::uint32_t>(value);
  }
  return res;
}

Result<std::uint32_t> ModuleLoader::fit_limits(Handle function, const LaunchOptions& lo,
                                               const KernelResources& res,
                                               const std::string& name) {
  const std::uint64_t threads = normalized_block(lo.block).product();  // 0 when unset
  const std::uint32_t max_threads =
      res.max_threads != 0 ? res.max_threads : info_.max_threads_per_block;
  if (threads > max_threads) {
    return Status(StatusCode::out_of_resources, name + ": needs " + std::to_string(threads) +
                                                    " threads per block but this variant " +
                                                    "allows " + std::to_string(max_threads) + " (" +
                                                    res.to_string() + ")");
  }
  const std::uint64_t smem = std::uint64_t{lo.shared_bytes} + res.shared_bytes;
  if (smem > info_.shared_bytes_per_block_optin) {
    return Status(StatusCode::out_of_resources,
                  name + ": needs " + std::to_string(smem) +
                      " bytes of shared memory per block; the device allows " +
                      std::to_string(info_.shared_bytes_per_block_optin));
  }
  const std::uint32_t default_limit =
      (info_.shared_bytes_per_block != 0 ? info_.shared_bytes_per_block : kDefaultSharedLimit);
  std::uint32_t dyn_limit = default_limit > res.shared_bytes ? default_limit - res.shared_bytes : 0;
  if (lo.shared_bytes > dyn_limit) {
    if (int rc = api_.func_set_max_dynamic_shared(function, static_cast<int>(lo.shared_bytes));
        rc != 0) {
      return status_.fail(Call::func_set_max_dynamic_shared, rc, StatusCode::out_of_resources,
                          name + " asking for " + std::to_string(lo.shared_bytes) +
                              " bytes of dynamic shared memory");
    }
    dyn_limit = lo.shared_bytes;
  }
  return dyn_limit;
}

Status ModuleLoader::write_globals(Handle module, const std::vector<ModuleGlobal>& globals,
                                   const std::string& name, std::mutex& queue_mutex,
                                   Handle stream) {
  for (const ModuleGlobal& g : globals) {
    DevPtr ptr = 0;
    std::size_t bytes = 0;
    if (int rc = api_.module_get_global(&ptr, &bytes, module, g.name.c_str()); rc != 0) {
      if (api_.classify(rc) != ErrorClass::other)
        return status_.fail(Call::module_get_global, rc, StatusCode::internal, name);
      return Status(
          StatusCode::invalid_argument,
          "module global '" + g.name + "' of " + name + ": the module has no such symbol (" +
              api_.call_name(Call::module_get_global) + ": " + api_.error_text(rc) +
              "); it must be a __constant__ or __device__ variable at global scope, or its "
              "mangled name");
    }
    if (bytes != g.bytes.size()) {
      return Status(StatusCode::invalid_argument,
                    "module global '" + g.name + "' of " + name + " is " + std::to_string(bytes) +
                        " bytes; module_globals gave " + std::to_string(g.bytes.size()));
    }
    if (bytes == 0) continue;
    std::lock_guard<std::mutex> lock(queue_mutex);
    if (int rc = api_.memcpy_htod(ptr, g.bytes.data(), bytes, stream); rc != 0)
      return status_.fail(Call::memcpy_htod, rc, StatusCode::internal,
                          "setting module global '" + g.name + "' of " + name);
    // The host bytes are freed when this returns: wait for the copy.
    if (int rc = api_.stream_sync(stream); rc != 0)
      return status_.fail(Call::stream_sync, rc, StatusCode::internal,
                          "setting module global '" + g.name + "' of " + name);
  }
  return {};
}

}  // namespace tune::gpu
