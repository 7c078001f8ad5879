#include "shader_compiler.hpp"

#include <vulkan/vulkan.h>

#include <cstring>

#include "tune/backend/hash.hpp"
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

}  // namespace

ShaderCompiler::ShaderCompiler(std::uint32_t api_version)
    : target_env_(api_version >= VK_API_VERSION_1_2 ? shaderc_env_version_vulkan_1_2
                                                    : shaderc_env_version_vulkan_1_1),
      version_(version_text(target_env_)),
      toolchain_(toolchain_text(version_)),
      disk_(BinaryCache::open_default("spirv")) {}

std::string ShaderCompiler::key_of(const KernelSource& source,
                                   const std::vector<Definition>& macros) const {
  std::string key = toolchain_;
  key += "\nsource " + std::to_string(source.text.size()) + " " + hex(stable_hash(source.text)) +
         " " + hex(stable_hash(source.text, 0x5eed5eed5eed5eedULL));
  for (const Definition& d : macros) {
    key += "\n-D";
    key += d.name;
    key += '=';
    key += d.value;
  }
  return key;
}

Result<std::shared_ptr<const ShaderCompiler::Spirv>> ShaderCompiler::compile(
    const KernelSource& source, const std::vector<Definition>& macros) {
  const std::string key = key_of(source, macros);
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = memory_.find(key); it != memory_.end()) return it->second;
  if (auto disk = load(key)) {
    ++disk_hits_;
    memory_.emplace(key, disk);
    return disk;
  }
  auto fresh = run_shaderc(source, macros);
  if (!fresh.ok()) return fresh.status();
  memory_.emplace(key, *fresh);
  store(key, **fresh);
  return fresh;
}

Result<std::shared_ptr<const ShaderCompiler::Spirv>> ShaderCompiler::run_shaderc(
    const KernelSource& source, const std::vector<Definition>& macros) {
  shaderc::CompileOptions opts;
  opts.SetSourceLanguage(shaderc_source_language_glsl);
  opts.SetTargetEnvironment(shaderc_target_env_vulkan, target_env_);
  opts.SetOptimizationLevel(shaderc_optimization_level_performance);
  for (const Definition& d : macros) opts.AddMacroDefinition(d.name, d.value);
  ++shaderc_compiles_;
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

std::shared_ptr<const ShaderCompiler::Spirv> ShaderCompiler::load(const std::string& key) {
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
  entry->info = std::move(*info);
  entry->log = std::move(stored->log);
  entry->from_disk = true;
  return entry;
}

ShaderCompiler::Stats ShaderCompiler::stats() const {
  Stats s;
  if (disk_) s.disk_dir = disk_->dir().string();
  std::lock_guard<std::mutex> lock(mu_);
  s.entries = memory_.size();
  s.shaderc_compiles = shaderc_compiles_;
  s.disk_hits = disk_hits_;
  return s;
}

}  // namespace tune::vk
