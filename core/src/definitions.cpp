// Config -> the definitions and template instantiation a kernel variant gets (definitions.hpp).
#include "tune/definitions.hpp"

#include <algorithm>
#include <cctype>
#include <variant>

namespace tune {

bool is_reserved_name(std::string_view name) noexcept {
  return name.substr(0, kReservedPrefix.size()) == kReservedPrefix;
}

std::string_view launch_option_macro(std::string_view launch_name) noexcept {
  if (launch_name == kBlockX) return "TUNE_BLOCK_X";
  if (launch_name == kBlockY) return "TUNE_BLOCK_Y";
  if (launch_name == kBlockZ) return "TUNE_BLOCK_Z";
  if (launch_name == kNumWarps) return "TUNE_NUM_WARPS";
  if (launch_name == kNumStages) return "TUNE_NUM_STAGES";
  if (launch_name == kMaxRegisters) return "TUNE_MAX_REGISTERS";
  if (launch_name == kSharedBytes) return "TUNE_SHARED_BYTES";
  if (launch_name == kSubgroupSize) return "TUNE_SUBGROUP_SIZE";
  return {};
}

std::string value_source_text(const Value& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "1" : "0";
  return std::get<std::string>(v);
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
    if (v == nullptr) {
      expr += arg;
    } else {
      out.substituted.emplace_back(arg);
      // A bool as the demangled instantiation spells it (see name_expression).
      const bool* b = std::get_if<bool>(v);
      expr += b != nullptr ? (*b ? "true" : "false") : value_source_text(*v);
    }
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

Result<std::vector<Definition>> definitions(const Config& config, const KernelSource& source) {
  auto inst = instantiate(source.entry, config);
  if (!inst.ok()) return inst.status();
  std::vector<Definition> out;
  out.reserve(config.params().size() + 7);
  for (const auto& [name, value] : config.params()) {
    // A parameter given as a template argument is not a macro too: `template <int EPT>` would
    // read `template <int 4>`.
    const auto& sub = inst->substituted;
    if (std::find(sub.begin(), sub.end(), name) != sub.end()) continue;
    out.push_back({name, value_source_text(value)});
  }
  const LaunchOptions& l = config.launch();
  auto add = [&](std::string_view launch_name, std::int64_t v) {
    if (v != 0) out.push_back({std::string(launch_option_macro(launch_name)), std::to_string(v)});
  };
  const Dim3 block = normalized_block(l.block);
  add(kBlockX, block.x);
  add(kBlockY, block.y);
  add(kBlockZ, block.z);
  add(kNumWarps, l.num_warps);
  add(kNumStages, l.num_stages);
  add(kMaxRegisters, l.max_registers);
  add(kSharedBytes, l.shared_bytes);
  add(kSubgroupSize, l.subgroup_size);
  return out;
}

}  // namespace tune
