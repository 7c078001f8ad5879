#include "tune/config_space.hpp"

#include "tuning/user_code.hpp"

#include <algorithm>
#include <limits>
#include <set>

namespace tune {

ConfigSpace ConfigSpace::list(std::vector<Config> configs) {
  ConfigSpace s;
  s.is_list_ = true;
  s.list_ = std::move(configs);
  return s;
}

ConfigSpace& ConfigSpace::param(std::string name, std::vector<Value> values) {
  dims_.push_back({std::move(name), std::move(values)});
  return *this;
}

ConfigSpace& ConfigSpace::param(std::string name, std::initializer_list<int> values) {
  std::vector<Value> vs;
  vs.reserve(values.size());
  for (int v : values) vs.emplace_back(std::int64_t{v});
  return param(std::move(name), std::move(vs));
}

ConfigSpace& ConfigSpace::derive(std::function<void(Config&)> fn) {
  derive_ = std::move(fn);
  return *this;
}

ConfigSpace& ConfigSpace::constrain(std::string name, Constraint pred) {
  constraints_.emplace_back(std::move(name), std::move(pred));
  return *this;
}

std::uint64_t ConfigSpace::raw_size() const noexcept {
  if (is_list_) return list_.size();
  if (dims_.empty()) return 0;
  std::uint64_t n = 1;
  for (const auto& d : dims_) {
    if (d.values.empty()) return 0;
    if (n > std::numeric_limits<std::uint64_t>::max() / d.values.size())
      return std::numeric_limits<std::uint64_t>::max();
    n *= d.values.size();
  }
  return n;
}

Config ConfigSpace::at(std::uint64_t index) const {
  if (is_list_) return list_.at(index);
  Config c;
  // Mixed radix with the last dimension fastest.
  for (std::size_t i = dims_.size(); i-- > 0;) {
    const auto& d = dims_[i];
    c.set(d.name, d.values[index % d.values.size()]);
    index /= d.values.size();
  }
  if (derive_) run_derive(c);
  return c;
}

void ConfigSpace::run_derive(Config& c) const {
  try {
    derive_(c);
  } catch (...) {
    throw Error(detail::callback_failure("derive", &c, detail::describe_current_exception()));
  }
}

bool ConfigSpace::accepts(const Config& c, const DeviceInfo& dev, std::string* rejected_by) const {
  for (const auto& [name, pred] : constraints_) {
    bool ok = false;
    try {
      ok = pred(c, dev);
    } catch (...) {
      throw Error(detail::callback_failure("constraint '" + name + "'", &c,
                                           detail::describe_current_exception()));
    }
    if (!ok) {
      if (rejected_by != nullptr) *rejected_by = name;
      return false;
    }
  }
  return true;
}

std::uint64_t ConfigSpace::for_each(
    const DeviceInfo& dev, const std::function<bool(std::uint64_t, const Config&)>& fn) const {
  std::uint64_t n = raw_size();
  std::uint64_t visited = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    Config c = at(i);
    ++visited;
    if (!accepts(c, dev)) continue;
    if (!fn(i, c)) break;
  }
  return visited;
}

Result<std::vector<Config>> ConfigSpace::enumerate(const DeviceInfo& dev,
                                                   std::uint64_t limit) const {
  std::vector<Config> out;
  bool over = false;
  for_each(dev, [&](std::uint64_t, const Config& c) {
    if (out.size() >= limit) {
      over = true;
      return false;
    }
    out.push_back(c);
    return true;
  });
  if (over) {
    return Status(StatusCode::invalid_argument,
                  "config space has more than " + std::to_string(limit) +
                      " accepted points; use a search strategy or a perf model instead of "
                      "enumerating it");
  }
  return out;
}

bool ConfigSpace::contains(const Config& c) const {
  if (is_list_) return std::find(list_.begin(), list_.end(), c) != list_.end();
  // Every parameter of c must be a declared dimension with a value from its domain; then the
  // point, rebuilt from the space, must equal c (launch options as derived).
  Config rebuilt;
  for (const auto& d : dims_) {
    const Value* v = nullptr;
    Value launch_value;
    if (is_launch_option_name(d.name)) {
      // Launch values live in LaunchOptions; compare through a probe config.
      bool found = false;
      for (const auto& cand : d.values) {
        Config probe;
        probe.launch() = c.launch();
        Config with = probe;
        with.set(d.name, cand);
        if (with.launch() == probe.launch()) {
          launch_value = cand;
          found = true;
          break;
        }
      }
      if (!found) return false;
      v = &launch_value;
    } else {
      v = c.find(d.name);
      if (v == nullptr) return false;
      if (std::find(d.values.begin(), d.values.end(), *v) == d.values.end()) return false;
    }
    rebuilt.set(d.name, *v);
  }
  if (derive_) run_derive(rebuilt);
  return rebuilt == c;
}

Status ConfigSpace::validate() const {
  auto bad = [](std::string msg) { return Status(StatusCode::invalid_argument, std::move(msg)); };
  if (is_list_) {
    if (list_.empty()) return bad("config space is empty: the config list has no entries");
    std::set<std::string> seen;
    for (std::size_t i = 0; i < list_.size(); ++i) {
      std::string text = list_[i].to_string();
      if (!seen.insert(text).second)
        return bad("config list entry " + std::to_string(i) + " {" + text + "} is a duplicate");
      auto parsed = Config::parse(text);
      if (!parsed.ok())
        return bad("config list entry " + std::to_string(i) + ": " + parsed.status().message());
    }
    return {};
  }
  if (dims_.empty()) return bad("config space is empty: no parameters and no config list");
  std::set<std::string> names;
  for (const auto& d : dims_) {
    if (!names.insert(d.name).second) return bad("parameter '" + d.name + "' is declared twice");
    if (d.values.empty()) return bad("parameter '" + d.name + "' has an empty domain");
    if (!is_launch_option_name(d.name)) {
      auto probe = Config::parse(d.name + "=0");
      if (!probe.ok()) return bad("parameter name '" + d.name + "' is not an identifier");
    }
    ValueType t = type_of(d.values.front());
    for (const auto& v : d.values) {
      if (type_of(v) != t) {
        return bad("parameter '" + d.name + "' mixes value types (" + std::string(to_string(t)) +
                   " and " + std::string(to_string(type_of(v))) + ")");
      }
    }
    if (is_launch_option_name(d.name) && t == ValueType::string)
      return bad("launch option '" + d.name + "' must take integer values");
    std::set<std::string> seen;
    for (const auto& v : d.values)
      if (!seen.insert(value_to_text(v)).second)
        return bad("parameter '" + d.name + "' lists value " + value_to_text(v) + " twice");
  }
  return {};
}

}  // namespace tune
