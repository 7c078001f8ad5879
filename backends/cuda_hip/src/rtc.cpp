// Compiler options, resource-log parsing, and compiling through the binary cache.
#include "rtc.hpp"

#include <charconv>

#include "tune/backend/hash.hpp"
#include "tune/backend/includes.hpp"
#include "tune/log.hpp"

namespace tune::gpu {

std::string define_option(const Definition& d) { return "-D" + d.name + "=" + d.value; }

Status check_kernel_options(std::span<const std::string> options, std::string_view compiler_name) {
  auto starts = [](std::string_view o, std::string_view p) { return o.substr(0, p.size()) == p; };
  for (const std::string& o : options) {
    auto refuse = [&](std::string_view why) {
      return Status(StatusCode::invalid_argument, "kernel option '" + o + "' refused for " +
                                                      std::string(compiler_name) + ": " +
                                                      std::string(why));
    };
    if (o.empty()) return refuse("an empty option");
    if (starts(o, "-arch") || starts(o, "--gpu-architecture") || starts(o, "--offload-arch") ||
        starts(o, "-code") || starts(o, "--gpu-code"))
      return refuse("libtune chooses the target from the device");
    if (starts(o, "--maxrregcount") || starts(o, "-maxrregcount"))
      return refuse("the register cap is the launch option max_registers");
    if (starts(o, "-I") || starts(o, "--include-path") || starts(o, "-isystem"))
      return refuse(
          "give include directories as KernelSource::include_dirs (the binary-cache key reads "
          "the files they hold)");
    if (starts(o, "-include") || starts(o, "--pre-include"))
      return refuse("#include the header in the source instead (the binary-cache key follows it)");
    std::string_view macro;
    if (starts(o, "-D")) macro = std::string_view(o).substr(2);
    if (starts(o, "--define-macro=")) macro = std::string_view(o).substr(15);
    if (is_reserved_name(macro))
      return refuse("names starting with TUNE_ are reserved for libtune's own definitions");
    if (o == "-D" || o == "--define-macro")
      return refuse("give the macro in the same option (\"-DNAME=value\")");
  }
  return {};
}

Result<std::vector<std::string>> compile_options(const RtcCompiler& compiler, std::string_view arch,
                                                 const Config& config, const KernelSource& source) {
  if (!source.spirv.empty())
    return Status(StatusCode::invalid_argument,
                  "KernelSource::spirv (a precompiled SPIR-V module) is for Vulkan; CUDA and HIP "
                  "compile the source text");
  std::vector<std::string> opts = compiler.base_options();
  auto target = compiler.target_options(arch, source.arch_specific);
  if (!target.ok()) return target.status();
  opts.insert(opts.end(), target->begin(), target->end());
  if (config.launch().max_registers > 0) {
    std::string reg = compiler.max_registers_option(config.launch().max_registers);
    if (!reg.empty()) opts.push_back(std::move(reg));
  }
  TUNE_RETURN_IF_ERROR(check_kernel_options(source.options, compiler.version()));
  opts.insert(opts.end(), source.options.begin(), source.options.end());
  for (const std::string& dir : source.include_dirs) opts.push_back("-I" + dir);
  for (std::string& o : compiler.toolkit_include_options()) opts.push_back(std::move(o));
  auto defs = definitions(config, source);
  if (!defs.ok()) return defs.status();
  for (const Definition& d : *defs) opts.push_back(define_option(d));
  return opts;
}

namespace {

// The number just before `suffix` in `line`, or 0.
std::uint32_t number_before(std::string_view line, std::string_view suffix) {
  auto pos = line.find(suffix);
  if (pos == std::string_view::npos) return 0;
  auto end = pos;
  while (end > 0 && line[end - 1] == ' ') --end;
  auto begin = end;
  while (begin > 0 && line[begin - 1] >= '0' && line[begin - 1] <= '9') --begin;
  std::uint32_t v = 0;
  std::from_chars(line.data() + begin, line.data() + end, v);
  return v;
}

}  // namespace

KernelResources parse_resource_log(std::string_view log) {
  KernelResources r;
  std::size_t start = 0;
  while (start < log.size()) {
    std::size_t end = log.find('\n', start);
    if (end == std::string_view::npos) end = log.size();
    std::string_view line = log.substr(start, end - start);
    if (line.find("Used") != std::string_view::npos && line.find("registers") != line.npos)
      r.registers = number_before(line, "registers");
    if (line.find("spill stores") != std::string_view::npos)
      r.spill_bytes = number_before(line, "bytes spill stores");
    if (line.find("bytes stack frame") != std::string_view::npos)
      r.local_bytes = number_before(line, "bytes stack frame");
    if (line.find("bytes smem") != std::string_view::npos)
      r.shared_bytes = number_before(line, "bytes smem");
    start = end + 1;
  }
  return r;
}

Result<RtcOutput> compile_for(RtcCompiler& compiler, std::string_view arch,
                              const KernelSource& source, const Config& config,
                              BinaryCache* cache) {
  if (source.language != Language::cuda_hip) {
    return Status(StatusCode::invalid_argument, "source language is " +
                                                    std::string(to_string(source.language)) +
                                                    ", this compiler takes cuda_hip");
  }
  auto expr = name_expression(source.entry, config);
  if (!expr.ok()) return expr.status();
  auto opts = compile_options(compiler, arch, config, source);
  if (!opts.ok()) return opts.status();
  // Everything that decides the binary: compiler, options (arch included), source and entry.
  std::string key = compiler.version();
  key += '\n';
  for (const auto& o : *opts) {
    key += o;
    key += ' ';
  }
  key += '\n';
  key += hex64(stable_hash(source.text, stable_hash(source.entry)));
  // The text of every file an #include may open (none: the key is what it always was).
  auto closure = include_closure(source);
  if (!closure.ok()) return closure.status();
  const std::uint64_t includes = closure->hash();
  if (!closure->empty()) {
    key += "\nincludes " + std::to_string(closure->files.size()) + " " + hex64(includes);
  }
  if (!expr->empty()) {  // the entry stores its lowered name: a hit needs no compiler
    key += '\n';
    key += *expr;
  }
  // What a cached entry must name: the symbol the device will look up. The key is stored in
  // full and compared, but a well-formed entry under the right key may still name another
  // kernel (another program's code): such an entry is evicted and recompiled.
  const std::string_view base = std::string_view(source.entry).substr(0, source.entry.find('<'));
  // An empty name means the source's own entry (extern "C"); a lowered (mangled) name
  // contains the entry's identifier.
  auto fits = [&](const BinaryCacheEntry& e) -> std::string {
    if (e.binary.empty()) return "an empty binary";
    if (e.entry_name.empty() && expr->empty()) return {};
    if (!base.empty() && e.entry_name.find(base) != std::string::npos) return {};
    return "entry point '" + e.entry_name + "' is not a name of the kernel '" + source.entry + "'";
  };
  if (cache != nullptr) {
    if (auto hit = cache->load(key, fits)) {
      RtcOutput out;
      out.binary = std::move(hit->binary);
      out.log = std::move(hit->log);
      out.entry_name = std::move(hit->entry_name);
      out.from_cache = true;
      out.cache_key = key;
      return out;
    }
  }
  const std::string file = (base.empty() ? std::string("kernel") : std::string(base)) + ".cu";
  auto out = compiler.compile(source.text, file, *opts, source.headers, *expr);
  if (!out.ok()) return out;
  if (cache == nullptr) return out;
  // A header edited while the compiler ran: the binary may hold either text, so it is not
  // stored under the key of the text read before.
  if (!closure->empty()) {
    auto after = include_closure(source);
    if (!after.ok() || after->hash() != includes) {
      log_warning("binary cache: an include file of " + source.entry +
                  " changed during its compile; the binary is not cached");
      return out;
    }
  }
  if (cache->store(key, {out->binary, out->log, out->entry_name})) out->cache_key = key;
  return out;
}

}  // namespace tune::gpu
