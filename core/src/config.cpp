#include "tune/config.hpp"

#include <algorithm>
#include <charconv>

#include "identifier.hpp"
#include "tune/backend/hash.hpp"

namespace tune {

ValueType type_of(const Value& v) noexcept { return static_cast<ValueType>(v.index()); }

std::string_view to_string(ValueType t) noexcept {
  switch (t) {
    case ValueType::integer:
      return "integer";
    case ValueType::boolean:
      return "boolean";
    case ValueType::string:
      return "string";
  }
  return "unknown";
}

std::string value_to_text(const Value& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  const auto& s = std::get<std::string>(v);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

std::string to_string(const Dim3& d) {
  return std::to_string(d.x) + "x" + std::to_string(d.y) + "x" + std::to_string(d.z);
}

bool is_launch_option_name(std::string_view name) noexcept {
  return name == kBlockX || name == kBlockY || name == kBlockZ || name == kNumWarps ||
         name == kNumStages || name == kMaxRegisters || name == kSharedBytes ||
         name == kSubgroupSize;
}

namespace {

// Sets a launch option from an integer or boolean; returns false for strings.
bool set_launch(LaunchOptions& l, std::string_view name, const Value& value) {
  std::int64_t v = 0;
  if (const auto* i = std::get_if<std::int64_t>(&value))
    v = *i;
  else if (const auto* b = std::get_if<bool>(&value))
    v = *b ? 1 : 0;
  else
    return false;
  auto u32 = static_cast<std::uint32_t>(v);
  auto i32 = static_cast<std::int32_t>(v);
  if (name == kBlockX) l.block.x = u32;
  if (name == kBlockY) l.block.y = u32;
  if (name == kBlockZ) l.block.z = u32;
  if (name == kNumWarps) l.num_warps = i32;
  if (name == kNumStages) l.num_stages = i32;
  if (name == kMaxRegisters) l.max_registers = i32;
  if (name == kSharedBytes) l.shared_bytes = u32;
  if (name == kSubgroupSize) l.subgroup_size = u32;
  return true;
}

}  // namespace

Config::Config(std::initializer_list<std::pair<std::string, Value>> params) {
  for (const auto& [name, value] : params) set(name, value);
}

Config& Config::set(std::string_view name, Value value) {
  if (is_launch_option_name(name)) {
    // A block dimension left at 0 would make the block empty: setting one dimension of an
    // unset block makes the others 1.
    bool was_unset = !launch_.block.any_set();
    if (set_launch(launch_, name, value) && was_unset)
      launch_.block = normalized_block(launch_.block);
    return *this;
  }
  auto it = std::lower_bound(params_.begin(), params_.end(), name,
                             [](const auto& p, std::string_view n) { return p.first < n; });
  if (it != params_.end() && it->first == name)
    it->second = std::move(value);
  else
    params_.emplace(it, std::string(name), std::move(value));
  return *this;
}

const Value* Config::find(std::string_view name) const noexcept {
  // Launch-dims functions call this on every launch. Configs hold a handful of short names:
  // a linear scan that compares lengths first rarely calls memcmp at all.
  if (params_.size() <= 16) {
    for (const auto& p : params_)
      if (p.first.size() == name.size() && p.first == name) return &p.second;
    return nullptr;
  }
  auto it = std::lower_bound(params_.begin(), params_.end(), name,
                             [](const auto& p, std::string_view n) { return p.first < n; });
  return it != params_.end() && it->first == name ? &it->second : nullptr;
}

std::int64_t Config::get_int(std::string_view name, std::int64_t fallback) const noexcept {
  const Value* v = find(name);
  if (v == nullptr) return fallback;
  if (const auto* i = std::get_if<std::int64_t>(v)) return *i;
  if (const auto* b = std::get_if<bool>(v)) return *b ? 1 : 0;
  return fallback;
}

bool Config::get_bool(std::string_view name, bool fallback) const noexcept {
  const Value* v = find(name);
  if (v == nullptr) return fallback;
  if (const auto* b = std::get_if<bool>(v)) return *b;
  if (const auto* i = std::get_if<std::int64_t>(v)) return *i != 0;
  return fallback;
}

std::string Config::to_string() const {
  std::string out;
  for (const auto& [name, value] : params_) {
    if (!out.empty()) out += ',';
    out += name;
    out += '=';
    out += value_to_text(value);
  }
  std::string launch;
  auto add = [&](std::string_view n, const std::string& v) {
    launch += launch.empty() ? "" : ",";
    launch += n;
    launch += '=';
    launch += v;
  };
  if (launch_.block.any_set()) add("block", tune::to_string(launch_.block));
  if (launch_.num_warps != 0) add(kNumWarps, std::to_string(launch_.num_warps));
  if (launch_.num_stages != 0) add(kNumStages, std::to_string(launch_.num_stages));
  if (launch_.max_registers != 0) add(kMaxRegisters, std::to_string(launch_.max_registers));
  if (launch_.shared_bytes != 0) add(kSharedBytes, std::to_string(launch_.shared_bytes));
  if (launch_.subgroup_size != 0) add(kSubgroupSize, std::to_string(launch_.subgroup_size));
  if (!launch.empty()) out += ";" + launch;
  return out;
}

std::uint64_t Config::hash() const { return stable_hash(to_string()); }

namespace {

bool parse_int(std::string_view s, std::int64_t* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

Status parse_error(std::string_view text, std::size_t pos, std::string_view what) {
  return Status(StatusCode::invalid_argument, "config text '" + std::string(text) + "' at offset " +
                                                  std::to_string(pos) + ": " + std::string(what));
}

}  // namespace

Result<Config> Config::parse(std::string_view text) {
  Config c;
  std::size_t i = 0;
  bool in_launch = false;
  // A config with launch options only prints as ";num_stages=3".
  if (!text.empty() && text[0] == ';') {
    in_launch = true;
    i = 1;
    if (text.size() == 1) return parse_error(text, i, "empty launch options after ';'");
  }
  while (i < text.size()) {
    std::size_t eq = text.find('=', i);
    if (eq == std::string_view::npos) return parse_error(text, i, "expected name=value");
    std::string_view name = text.substr(i, eq - i);
    i = eq + 1;
    std::string_view raw;
    std::string str;
    bool quoted = i < text.size() && text[i] == '"';
    if (quoted) {
      ++i;
      bool closed = false;
      while (i < text.size()) {
        char ch = text[i++];
        if (ch == '\\' && i < text.size()) {
          str += text[i++];
        } else if (ch == '"') {
          closed = true;
          break;
        } else {
          str += ch;
        }
      }
      if (!closed)
        return parse_error(text, i, "unterminated string value of '" + std::string(name) + "'");
    } else {
      std::size_t end = text.find_first_of(",;", i);
      if (end == std::string_view::npos) end = text.size();
      raw = text.substr(i, end - i);
      i = end;
    }
    if (in_launch) {
      if (quoted)
        return parse_error(text, i, "launch option '" + std::string(name) + "' must be an integer");
      if (name == "block") {
        std::int64_t d[3] = {0, 0, 0};
        std::size_t p = 0;
        for (int k = 0; k < 3; ++k) {
          std::size_t x = k < 2 ? raw.find('x', p) : raw.size();
          if (x == std::string_view::npos || !parse_int(raw.substr(p, x - p), &d[k]) || d[k] < 0)
            return parse_error(text, i, "block must be XxYxZ, got '" + std::string(raw) + "'");
          p = x + 1;
        }
        c.launch_.block = {static_cast<std::uint32_t>(d[0]), static_cast<std::uint32_t>(d[1]),
                           static_cast<std::uint32_t>(d[2])};
      } else {
        std::int64_t v = 0;
        if (!is_launch_option_name(name) || name.substr(0, 6) == "block.")
          return parse_error(text, i, "unknown launch option '" + std::string(name) + "'");
        if (!parse_int(raw, &v) || v < 0)
          return parse_error(
              text, i, "launch option '" + std::string(name) + "' must be a non-negative integer");
        set_launch(c.launch_, name, Value{v});
      }
    } else {
      if (!detail::is_identifier(name))
        return parse_error(text, i,
                           "parameter name '" + std::string(name) + "' is not an identifier");
      if (c.has(name))
        return parse_error(text, i, "duplicate parameter '" + std::string(name) + "'");
      Value v;
      std::int64_t n = 0;
      if (quoted)
        v = str;
      else if (raw == "true")
        v = true;
      else if (raw == "false")
        v = false;
      else if (parse_int(raw, &n))
        v = n;
      else
        return parse_error(text, i,
                           "value '" + std::string(raw) + "' of '" + std::string(name) +
                               "' is not an integer, true/false or a quoted string");
      c.set(name, std::move(v));
    }
    if (i < text.size()) {
      char sep = text[i++];
      if (sep == ';') {
        if (in_launch) return parse_error(text, i, "a second ';'");
        in_launch = true;
      } else if (sep != ',') {
        return parse_error(text, i, "expected ',' or ';'");
      }
      if (i == text.size()) return parse_error(text, i, "trailing separator");
    }
  }
  return c;
}

}  // namespace tune
