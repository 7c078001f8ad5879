// Compiler options, resource-log parsing, and compiling through the binary cache.
#include "rtc.hpp"

#include <charconv>

#include "tune/backend/hash.hpp"

namespace tune::gpu {

std::string define_option(const Definition& d) { return "-D" + d.name + "=" + d.value; }

Result<std::vector<std::string>> compile_options(const RtcCompiler& compiler, std::string_view arch,
                                                 const Config& config, const KernelSource& source) {
  std::vector<std::string> opts = compiler.base_options();
  auto target = compiler.target_options(arch);
  if (!target.ok()) return target.status();
  opts.insert(opts.end(), target->begin(), target->end());
  if (config.launch().max_registers > 0) {
    std::string reg = compiler.max_registers_option(config.launch().max_registers);
    if (!reg.empty()) opts.push_back(std::move(reg));
  }
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
      return out;
    }
  }
  const std::string file = (base.empty() ? std::string("kernel") : std::string(base)) + ".cu";
  auto out = compiler.compile(source.text, file, *opts, *expr);
  if (!out.ok()) return out;
  if (cache != nullptr) (void)cache->store(key, {out->binary, out->log, out->entry_name});
  return out;
}

}  // namespace tune::gpu
