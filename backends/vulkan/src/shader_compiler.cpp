#include "shader_compiler.hpp"

#include <vulkan/vulkan.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>

#include "tune/backend/hash.hpp"
#include "tune/backend/includes.hpp"
#include "vk_status.hpp"

// Versions of the compilers inside shaderc (which has no version query of its own): part of
// every SPIR-V cache key, so an upgraded glslang or optimiser never serves old SPIR-V.
#if __has_include(<glslang/build_info.h>)
#include <glslang/build_info.h>
#endif
#if __has_include(<spirv-tools/libspirv.h>)
#include <spirv-tools/libspirv.h>
#define TUNE_HAVE_SPIRV_TOOLS_VERSION 1
#endif

namespace tune::vk {
namespace {

// Bump when the SPIR-V that compile() produces for a given source and configuration changes
// for a reason the key does not otherwise see (shaderc options, macro spelling).
constexpr int kSpirvRecipe = 1;

std::string version_text(shaderc_env_version env) {
  unsigned spv_version = 0, spv_revision = 0;
  shaderc_get_spv_version(&spv_version, &spv_revision);
  const char* target = env == shaderc_env_version_vulkan_1_2 ? "vulkan1.2" : "vulkan1.1";
  return "shaderc (SPIR-V " + std::to_string(spv_version >> 16) + "." +
         std::to_string((spv_version >> 8) & 0xff) + " rev " + std::to_string(spv_revision) +
         ") target " + target + " -O";
}

// Everything but the source and macros that decides the SPIR-V compile() produces.
std::string toolchain_text(const std::string& version) {
  std::string t = "libtune spirv recipe " + std::to_string(kSpirvRecipe) + "\n" + version +
                  ", glsl compute shader, entry main, kernel.comp";
#ifdef GLSLANG_VERSION_MAJOR
  t += "\nglslang " + std::to_string(GLSLANG_VERSION_MAJOR) + "." +
       std::to_string(GLSLANG_VERSION_MINOR) + "." + std::to_string(GLSLANG_VERSION_PATCH) +
       GLSLANG_VERSION_FLAVOR;
#endif
#ifdef TUNE_HAVE_SPIRV_TOOLS_VERSION
  t += std::string("\n") + spvSoftwareVersionDetailsString();
#endif
  return t;
}

const char* const kAcceptedOptions =
    "-O, -O0, -Os, -g, -w, -Werror, -DNAME[=VALUE], --target-env=vulkan1.0|vulkan1.1|vulkan1.2, "
    "--target-spv=spv1.0 ... spv1.5";

}  // namespace

// What KernelSource::options ask of shaderc (the glslc spellings libtune maps).
struct GlslOptions {
  shaderc_optimization_level level = shaderc_optimization_level_performance;
  std::optional<shaderc_env_version> env;
  std::optional<shaderc_spirv_version> spv;
  bool debug_info = false;
  bool no_warnings = false;
  bool warnings_as_errors = false;
  std::vector<Definition> macros;
};

namespace {

Result<GlslOptions> parse_options(const std::vector<std::string>& options,
                                  shaderc_env_version max_env) {
  GlslOptions out;
  for (const std::string& o : options) {
    auto refuse = [&](const std::string& why) {
      return Status(StatusCode::invalid_argument,
                    "kernel option '" + o + "' refused for vulkan (shaderc): " + why);
    };
    const std::string_view v(o);
    if (o == "-O") {
      out.level = shaderc_optimization_level_performance;
    } else if (o == "-O0") {
      out.level = shaderc_optimization_level_zero;
    } else if (o == "-Os") {
      out.level = shaderc_optimization_level_size;
    } else if (o == "-g") {
      out.debug_info = true;
    } else if (o == "-w") {
      out.no_warnings = true;
    } else if (o == "-Werror") {
      out.warnings_as_errors = true;
    } else if (v.substr(0, 2) == "-D" && v.size() > 2) {
      const std::size_t eq = v.find('=');
      Definition d{std::string(v.substr(2, eq == v.npos ? v.npos : eq - 2)),
                   eq == v.npos ? std::string() : std::string(v.substr(eq + 1))};
      if (d.name.empty()) return refuse("no macro name");
      if (is_reserved_name(d.name))
        return refuse("names starting with TUNE_ are reserved for libtune's own definitions");
      out.macros.push_back(std::move(d));
    } else if (v.substr(0, 13) == "--target-env=") {
      const std::string_view env = v.substr(13);
      shaderc_env_version e{};
      if (env == "vulkan1.0") {
        e = shaderc_env_version_vulkan_1_0;
      } else if (env == "vulkan1.1") {
        e = shaderc_env_version_vulkan_1_1;
      } else if (env == "vulkan1.2") {
        e = shaderc_env_version_vulkan_1_2;
      } else {
        return refuse(
            "libtune targets vulkan1.0, vulkan1.1 or vulkan1.2 (a Vulkan 1.3 target "
            "states the workgroup size with LocalSizeId, which needs maintenance4)");
      }
      if (e > max_env) return refuse("beyond what this device's Vulkan version runs");
      out.env = e;
    } else if (v.substr(0, 13) == "--target-spv=") {
      const std::string_view spv = v.substr(13);
      static constexpr std::pair<std::string_view, shaderc_spirv_version> kSpv[] = {
          {"spv1.0", shaderc_spirv_version_1_0}, {"spv1.1", shaderc_spirv_version_1_1},
          {"spv1.2", shaderc_spirv_version_1_2}, {"spv1.3", shaderc_spirv_version_1_3},
          {"spv1.4", shaderc_spirv_version_1_4}, {"spv1.5", shaderc_spirv_version_1_5}};
      const auto* it = std::find_if(std::begin(kSpv), std::end(kSpv),
                                    [&](const auto& p) { return p.first == spv; });
      if (it == std::end(kSpv)) return refuse("libtune maps spv1.0 to spv1.5");
      out.spv = it->second;
    } else {
      return refuse(std::string("not an option libtune maps onto shaderc; accepted: ") +
                    kAcceptedOptions);
    }
  }
  // The SPIR-V version each Vulkan version consumes at most (without extensions).
  const shaderc_env_version env = out.env.value_or(max_env);
  const shaderc_spirv_version spv_max =
      env == shaderc_env_version_vulkan_1_0   ? shaderc_spirv_version_1_0
      : env == shaderc_env_version_vulkan_1_1 ? shaderc_spirv_version_1_3
                                              : shaderc_spirv_version_1_5;
  if (out.spv && *out.spv > spv_max)
    return Status(StatusCode::invalid_argument,
                  "kernel options refused for vulkan (shaderc): the SPIR-V version asked for "
                  "is beyond what the target environment consumes");
  return out;
}

// libtune's includer (tune/backend/includes.hpp's search rule), serving the text the cache key
// was computed from. The main file is "kernel.comp"; an included file's name is its origin.
class Includer final : public shaderc::CompileOptions::IncluderInterface {
 public:
  Includer(const KernelSource& source, const IncludeClosure& closure)
      : source_(source), closure_(closure) {}

  shaderc_include_result* GetInclude(const char* requested, shaderc_include_type type,
                                     const char* requesting, std::size_t depth) override {
    auto* r = new Result;
    const std::string_view includer = depth <= 1 ? std::string_view() : requesting;
    auto origin =
        resolve_include(source_, requested, type == shaderc_include_type_relative, includer);
    if (!origin) {
      r->content = "cannot find '" + std::string(requested) +
                   "' among the kernel's in-memory headers" +
                   (type == shaderc_include_type_relative ? ", beside the including file" : "") +
                   " or in its include_dirs";
    } else if (const IncludedFile* f = closure_.find(*origin)) {
      r->name = *origin;
      r->content = f->text;
    } else {
      // Not in the closure (read after the key was made): read it now.
      std::ifstream in(*origin, std::ios::binary);
      r->content.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      r->name = *origin;
    }
    r->result.source_name = r->name.c_str();
    r->result.source_name_length = r->name.size();
    r->result.content = r->content.c_str();
    r->result.content_length = r->content.size();
    r->result.user_data = r;
    return &r->result;
  }

  void ReleaseInclude(shaderc_include_result* data) override {
    delete static_cast<Result*>(data->user_data);
  }

 private:
  struct Result {
    shaderc_include_result result{};
    std::string name, content;  // an empty name: an error, `content` says why
  };
  const KernelSource& source_;
  const IncludeClosure& closure_;
};

// Why a precompiled module cannot run as libtune creates pipelines (empty: it can): a compute
// entry point "main", a SPIR-V version and workgroup-size form within `limits`.
std::string unusable(const SpirvInfo& si, const ShaderCompiler::ModuleLimits& limits) {
  const auto text = [](std::uint32_t v) {
    return std::to_string((v >> 16) & 0xffu) + "." + std::to_string((v >> 8) & 0xffu);
  };
  if (!si.has_compute_main) return "it has no GLCompute entry point \"main\"";
  if (si.version > limits.max_version)
    return "it is SPIR-V " + text(si.version) + "; this device takes " + text(limits.max_version) +
           " at most (its Vulkan version)";
  if (si.uses_local_size_id && !limits.local_size_id)
    return "it states its workgroup size with LocalSizeId, which needs maintenance4 (Vulkan "
           "1.3), not enabled on this device (an application's device: enable it and set "
           "vulkan::EnabledFeatures::maintenance4), or build the module for Vulkan 1.2";
  return {};
}

// A precompiled module (KernelSource::spirv), reflected and checked (unusable, then `fits`);
// never cached (there is nothing to save) and never compiled, so compile options are refused.
Result<std::shared_ptr<const ShaderCompiler::Spirv>> adopt_module(
    const KernelSource& source, const ShaderCompiler::ModuleCheck& fits,
    const ShaderCompiler::ModuleLimits& limits) {
  if (!source.options.empty()) {
    return Status(StatusCode::invalid_argument,
                  "kernel '" + source.entry +
                      "': KernelSource::options are compile options, and a precompiled SPIR-V "
                      "module (KernelSource::spirv) is not compiled");
  }
  auto info = reflect_spirv(source.spirv);
  if (!info.ok()) {
    return Status(StatusCode::invalid_argument,
                  "kernel '" + source.entry + "': KernelSource::spirv: " + info.status().message());
  }
  std::string why = unusable(*info, limits);
  if (why.empty() && fits) why = fits(*info);
  if (!why.empty()) {
    return Status(StatusCode::invalid_argument,
                  "kernel '" + source.entry + "': KernelSource::spirv: " + why);
  }
  auto out = std::make_shared<ShaderCompiler::Spirv>();
  out->words = source.spirv;
  out->info = std::move(*info);
  return std::shared_ptr<const ShaderCompiler::Spirv>(std::move(out));
}

}  // namespace

ShaderCompiler::ModuleLimits ShaderCompiler::module_limits(std::uint32_t api_version,
                                                           bool maintenance4) {
  ModuleLimits l;
  l.max_version = api_version >= VK_API_VERSION_1_3   ? 0x00010600u
                  : api_version >= VK_API_VERSION_1_2 ? 0x00010500u
                                                      : 0x00010300u;
  l.local_size_id = maintenance4 && api_version >= VK_API_VERSION_1_3;
  return l;
}

ShaderCompiler::ShaderCompiler(std::uint32_t api_version, bool maintenance4)
    : target_env_(api_version >= VK_API_VERSION_1_2 ? shaderc_env_version_vulkan_1_2
                                                    : shaderc_env_version_vulkan_1_1),
      modules_(module_limits(api_version, maintenance4)),
      version_(version_text(target_env_)),
      toolchain_(toolchain_text(version_)),
      disk_(BinaryCache::open_default("spirv")) {}

std::string ShaderCompiler::key_of(const KernelSource& source,
                                   const std::vector<Definition>& macros,
                                   const IncludeClosure& closure) const {
  std::string key = toolchain_;
  key += "\nsource " + std::to_string(source.text.size()) + " " + hex(stable_hash(source.text)) +
         " " + hex(stable_hash(source.text, 0x5eed5eed5eed5eedULL));
  // Each only when present: a source without them keeps the key it always had.
  for (const std::string& o : source.options) key += "\noption " + o;
  for (const std::string& d : source.include_dirs) key += "\ninclude-dir " + d;
  if (!closure.empty())
    key += "\nincludes " + std::to_string(closure.files.size()) + " " + hex(closure.hash());
  for (const Definition& d : macros) {
    key += "\n-D";
    key += d.name;
    key += '=';
    key += d.value;
  }
  return key;
}

Result<std::shared_ptr<const ShaderCompiler::Spirv>> ShaderCompiler::compile(
    const KernelSource& source, const std::vector<Definition>& macros, bool* cached,
    const ModuleCheck& fits) {
  if (cached != nullptr) *cached = false;
  if (source.module_globals) {
    return Status(StatusCode::invalid_argument,
                  "kernel '" + source.entry +
                      "': Vulkan has no module globals (KernelSource::module_globals is for "
                      "CUDA/HIP); give per-variant values as configuration parameters (macros, "
                      "or specialization constants) or as kernel arguments (push constants)");
  }
  if (source.tensor_maps || source.arch_specific) {
    return Status(StatusCode::invalid_argument,
                  "kernel '" + source.entry + "': Vulkan has no " +
                      (source.tensor_maps ? "TMA tensor maps (KernelSource::tensor_maps"
                                          : "architecture-specific targets (KernelSource::"
                                            "arch_specific") +
                      " is for CUDA)");
  }
  if (!source.spirv.empty()) return adopt_module(source, fits, modules_);
  auto parsed = parse_options(source.options, target_env_);
  if (!parsed.ok()) return parsed.status();
  auto closure = include_closure(source);
  if (!closure.ok()) return closure.status();
  const std::string key = key_of(source, macros, *closure);
  // The mutex covers only the maps: shaderc and disk reads run outside it, so the variants of
  // a tuning compile in parallel on the VariantCache's pool. A key being built by another
  // thread is waited for, not built twice.
  std::shared_ptr<std::promise<SpirvResult>> mine;
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (auto it = memory_.find(key); it != memory_.end()) {
      if (cached != nullptr) *cached = true;
      return it->second;
    }
    if (auto it = building_.find(key); it != building_.end()) {
      std::shared_future<SpirvResult> theirs = it->second;
      lock.unlock();
      SpirvResult r = theirs.get();
      if (cached != nullptr) *cached = r.ok();
      return r;
    }
    mine = std::make_shared<std::promise<SpirvResult>>();
    building_.emplace(key, mine->get_future().share());
  }
  SpirvResult out = Status(StatusCode::internal, "unset");
  bool from_disk = false;
  if (auto disk = load(key, fits)) {
    out = std::shared_ptr<const Spirv>(std::move(disk));
    from_disk = true;
  } else {
    out = run_shaderc(source, macros, *parsed, *closure, key);
    if (out.ok() && (!fits || fits((*out)->info).empty())) store(key, **out);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (from_disk) ++disk_hits_;
    if (out.ok()) memory_.emplace(key, *out);
    building_.erase(key);
  }
  mine->set_value(out);
  if (cached != nullptr) *cached = from_disk;
  return out;
}

Result<std::shared_ptr<const ShaderCompiler::Spirv>> ShaderCompiler::run_shaderc(
    const KernelSource& source, const std::vector<Definition>& macros, const GlslOptions& glsl,
    const IncludeClosure& closure, const std::string& key) {
  shaderc::CompileOptions opts;
  opts.SetSourceLanguage(shaderc_source_language_glsl);
  opts.SetTargetEnvironment(shaderc_target_env_vulkan, glsl.env.value_or(target_env_));
  if (glsl.spv) opts.SetTargetSpirv(*glsl.spv);
  opts.SetOptimizationLevel(glsl.level);
  if (glsl.debug_info) opts.SetGenerateDebugInfo();
  if (glsl.no_warnings) opts.SetSuppressWarnings();
  if (glsl.warnings_as_errors) opts.SetWarningsAsErrors();
  for (const Definition& d : glsl.macros) opts.AddMacroDefinition(d.name, d.value);
  for (const Definition& d : macros) opts.AddMacroDefinition(d.name, d.value);
  // Only a source with #include lines gets the includer (which turns on
  // GL_GOOGLE_include_directive): the SPIR-V of every other source stays as it was.
  if (!closure.empty() || !include_directives(source.text).empty())
    opts.SetIncluder(std::make_unique<Includer>(source, closure));
  shaderc_compiles_.fetch_add(1, std::memory_order_relaxed);
  shaderc::SpvCompilationResult res = compiler_.CompileGlslToSpv(
      source.text, shaderc_glsl_compute_shader, "kernel.comp", "main", opts);
  if (res.GetCompilationStatus() != shaderc_compilation_status_success) {
    std::string log = res.GetErrorMessage();
    if (log.empty())
      log = "(shaderc gave no log; status " +
            std::to_string(static_cast<int>(res.GetCompilationStatus())) + ")";
    return Status(StatusCode::compile_error, "shaderc: " + log);
  }
  auto entry = std::make_shared<Spirv>();
  entry->words.assign(res.cbegin(), res.cend());
  entry->log = res.GetErrorMessage();
  entry->key = key;
  auto info = reflect_spirv(entry->words);
  if (!info.ok()) return info.status();
  entry->info = std::move(*info);
  return std::shared_ptr<const Spirv>(std::move(entry));
}

void ShaderCompiler::store(const std::string& key, const Spirv& spirv) {
  if (!disk_) return;
  BinaryCacheEntry stored;
  stored.binary.assign(reinterpret_cast<const char*>(spirv.words.data()),
                       spirv.words.size() * sizeof(std::uint32_t));
  stored.log = spirv.log;
  stored.entry_name = "main";
  (void)disk_->store(key, stored);
}

std::shared_ptr<const ShaderCompiler::Spirv> ShaderCompiler::load(const std::string& key,
                                                                  const ModuleCheck& fits) {
  if (!disk_) return nullptr;
  // Every entry this backend writes names the entry point "main": one that does not was not
  // written for this key by libtune, and is evicted (a miss) before anything reads it.
  auto stored = disk_->load(key, [](const BinaryCacheEntry& e) -> std::string {
    return e.entry_name == "main" ? std::string()
                                  : "entry point '" + e.entry_name + "' is not this kernel's";
  });
  if (!stored) return nullptr;
  // The entry passed BinaryCache's checksum; still never hand the driver something that is
  // not a module this backend can reflect. A bad one is evicted, recompiled and replaced.
  auto bad = [&](const std::string& why) -> std::shared_ptr<const Spirv> {
    disk_->evict(key, why + "; compiling with shaderc");
    return nullptr;
  };
  const std::string& bytes = stored->binary;
  if (bytes.size() < 5 * sizeof(std::uint32_t) || bytes.size() % sizeof(std::uint32_t) != 0)
    return bad(std::to_string(bytes.size()) + " bytes is not a SPIR-V module");
  auto entry = std::make_shared<Spirv>();
  entry->words.resize(bytes.size() / sizeof(std::uint32_t));
  std::memcpy(entry->words.data(), bytes.data(), bytes.size());
  if (entry->words[0] != 0x07230203u) return bad("no SPIR-V magic number");
  auto info = reflect_spirv(entry->words);
  if (!info.ok()) return bad(info.status().to_string());
  // A well-formed module of another kernel (copied or forged under this key) would run its
  // code on this kernel's arguments: what is on disk must match the kernel exactly.
  if (fits) {
    if (std::string why = fits(*info); !why.empty())
      return bad("its interface does not match the kernel (" + why + ")");
  }
  entry->info = std::move(*info);
  entry->log = std::move(stored->log);
  entry->from_disk = true;
  entry->key = key;
  return entry;
}

bool ShaderCompiler::evict(const std::string& key, std::string_view why) {
  bool dropped = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    dropped = memory_.erase(key) > 0;
  }
  if (disk_ && disk_->evict(key, why)) dropped = true;
  return dropped;
}

ShaderCompiler::Stats ShaderCompiler::stats() const {
  Stats s;
  if (disk_) s.disk_dir = disk_->dir().string();
  std::lock_guard<std::mutex> lock(mu_);
  s.entries = memory_.size();
  s.shaderc_compiles = shaderc_compiles_.load(std::memory_order_relaxed);
  s.disk_hits = disk_hits_;
  return s;
}

}  // namespace tune::vk
