// Config -> compiler options, resource-log parsing, and compiling through the binary cache.
#include "tune/gpu/rtc.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <variant>

#include "tune/hash.hpp"

namespace tune::gpu {

std::vector<std::string> config_defines(const Config& config) {
  std::vector<std::string> out;
  out.reserve(config.params().size() + 6);
  for (const auto& [name, value] : config.params()) {
    std::string def = "-D" + name + "=";
    if (const auto* i = std::get_if<std::int64_t>(&value)) {
      def += std::to_string(*i);
    } else if (const auto* b = std::get_if<bool>(&value)) {
      def += *b ? "1" : "0";
    } else {
      def += std::get<std::string>(value);
    }
    out.push_back(std::move(def));
  }
  const LaunchOptions& l = config.launch();
  if (l.block.x != 0) {
    out.push_back("-DTUNE_BLOCK_X=" + std::to_string(l.block.x));
    out.push_back("-DTUNE_BLOCK_Y=" + std::to_string(l.block.y == 0 ? 1 : l.block.y));
    out.push_back("-DTUNE_BLOCK_Z=" + std::to_string(l.block.z == 0 ? 1 : l.block.z));
  }
  if (l.num_warps != 0) out.push_back("-DTUNE_NUM_WARPS=" + std::to_string(l.num_warps));
  if (l.num_stages != 0) out.push_back("-DTUNE_NUM_STAGES=" + std::to_string(l.num_stages));
  if (l.shared_bytes != 0) out.push_back("-DTUNE_SHARED_BYTES=" + std::to_string(l.shared_bytes));
  return out;
}

Result<std::vector<std::string>> compile_options(const RtcCompiler& compiler, std::string_view arch,
                                                 const Config& config) {
  std::vector<std::string> opts = compiler.base_options();
  auto target = compiler.target_options(arch);
  if (!target.ok()) return target.status();
  opts.insert(opts.end(), target->begin(), target->end());
  if (config.launch().max_registers > 0) {
    std::string reg = compiler.max_registers_option(config.launch().max_registers);
    if (!reg.empty()) opts.push_back(std::move(reg));
  }
  auto defs = config_defines(config);
  opts.insert(opts.end(), defs.begin(), defs.end());
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

namespace {

// A template entry instantiated for one config, and the parameters it substituted.
struct Instantiation {
  std::string expr;  // empty for a plain entry
  std::vector<std::string> substituted;
};

Result<Instantiation> instantiate(std::string_view entry, const Config& config) {
  Instantiation out;
  const std::size_t open = entry.find('<');
  if (open == std::string_view::npos) return out;
  auto bad = [&](const char* why) {
    return Status(StatusCode::invalid_argument,
                  "kernel entry '" + std::string(entry) + "': " + why);
  };
  if (entry.back() != '>') return bad("a template entry must end with '>'");
  auto trim = [](std::string_view t) {
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.remove_prefix(1);
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.remove_suffix(1);
    return t;
  };
  std::string expr(trim(entry.substr(0, open)));
  if (expr.empty()) return bad("no function name before '<'");
  expr += '<';
  // Split the outermost argument list at commas outside nested <>, () and []. Inside
  // parentheses '<' and '>' are comparisons ("f<(N > 2)>"), not brackets.
  const std::string_view inner = entry.substr(open + 1, entry.size() - open - 2);
  int parens = 0, angles = 0;
  std::size_t start = 0;
  bool first = true;
  for (std::size_t i = 0; i <= inner.size(); ++i) {
    const char ch = i < inner.size() ? inner[i] : ',';
    if (ch == '(' || ch == '[') ++parens;
    if (ch == ')' || ch == ']') --parens;
    if (parens == 0 && ch == '<') ++angles;
    if (parens == 0 && ch == '>') --angles;
    if (parens < 0 || angles < 0) return bad("unbalanced brackets");
    if (ch != ',' || parens > 0 || angles > 0) continue;
    const std::string_view arg = trim(inner.substr(start, i - start));
    start = i + 1;
    if (arg.empty()) return bad("an empty template argument");
    if (!first) expr += ", ";
    first = false;
    const Value* v = config.find(arg);
    if (v != nullptr) out.substituted.emplace_back(arg);
    if (v == nullptr)
      expr += arg;
    else if (const auto* b = std::get_if<bool>(v))
      expr += *b ? "true" : "false";
    else if (const auto* n = std::get_if<std::int64_t>(v))
      expr += std::to_string(*n);
    else
      expr += std::get<std::string>(*v);
  }
  if (parens != 0 || angles != 0) return bad("unbalanced brackets");
  expr += '>';
  out.expr = std::move(expr);
  return out;
}

}  // namespace

Result<std::string> name_expression(std::string_view entry, const Config& config) {
  auto inst = instantiate(entry, config);
  if (!inst.ok()) return inst.status();
  return std::move(inst->expr);
}

Result<RtcOutput> compile_for(RtcCompiler& compiler, std::string_view arch,
                              const KernelSource& source, const Config& config,
                              BinaryCache* cache) {
  if (source.language != Language::cuda_hip) {
    return Status(StatusCode::invalid_argument, "source language is " +
                                                    std::string(to_string(source.language)) +
                                                    ", this compiler takes cuda_hip");
  }
  auto inst = instantiate(source.entry, config);
  if (!inst.ok()) return inst.status();
  const std::string& expr = inst->expr;
  // Parameters given as template arguments are not macros too: `template <int EPT>` would
  // read `template <int 4>`.
  Config defined;
  defined.launch() = config.launch();
  for (const auto& [name, value] : config.params()) {
    if (std::find(inst->substituted.begin(), inst->substituted.end(), name) ==
        inst->substituted.end())
      defined.set(name, value);
  }
  auto opts = compile_options(compiler, arch, defined);
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
  if (!expr.empty()) {  // the entry stores its lowered name: a hit needs no compiler
    key += '\n';
    key += expr;
  }
  // What a cached entry must name: the symbol the device will look up. The key is stored in
  // full and compared, but a well-formed entry under the right key may still name another
  // kernel (another program's code): such an entry is evicted and recompiled.
  const std::string_view base = std::string_view(source.entry).substr(0, source.entry.find('<'));
  // An empty name means the source's own entry (extern "C"); a lowered (mangled) name
  // contains the entry's identifier.
  auto fits = [&](const BinaryCacheEntry& e) -> std::string {
    if (e.binary.empty()) return "an empty binary";
    if (e.entry_name.empty() && expr.empty()) return {};
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
  auto out = compiler.compile(source.text, file, *opts, expr);
  if (!out.ok()) return out;
  if (cache != nullptr) (void)cache->store(key, {out->binary, out->log, out->entry_name});
  return out;
}

}  // namespace tune::gpu
