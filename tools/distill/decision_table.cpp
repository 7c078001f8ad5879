#include "decision_table.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <tuple>

namespace tune::distill {
namespace {

// The number `text` spells entirely, or NaN.
double number_of(const std::string& text) {
  double v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  return (ec == std::errc() && p == end && !text.empty()) ? v : std::nan("");
}

// One stored key: its identity beyond the kernel, and its rows.
struct KeyGroup {
  StoreKey key;
  std::int64_t newest = 0;
  std::vector<StoredResult> rows;
};

// The rows of `kernel` grouped by StoreKey, one group per key text (the newest one when the
// source or toolchain changed between tunings); `superseded` counts the others.
Result<std::vector<KeyGroup>> key_groups(std::span<const CacheRow> rows, const std::string& kernel,
                                         std::size_t& superseded, std::string& device) {
  std::map<std::tuple<std::string, std::uint64_t, std::string>, KeyGroup> by_identity;
  std::vector<std::string> devices;
  for (const CacheRow& r : rows) {
    if (r.key.kernel != kernel) continue;
    if (std::find(devices.begin(), devices.end(), r.key.device) == devices.end())
      devices.push_back(r.key.device);
    KeyGroup& g = by_identity[{r.key.key, r.key.source_hash, r.key.toolchain}];
    g.key = r.key;
    g.newest = std::max(g.newest, r.result.unix_time);
    g.rows.push_back(r.result);
  }
  if (devices.empty())
    return Status(StatusCode::not_found, "no stored decision of kernel '" + kernel + "'");
  if (devices.size() > 1) {
    std::string list;
    for (const auto& d : devices) list += (list.empty() ? "" : "; ") + d;
    return Status(StatusCode::invalid_argument, "kernel '" + kernel + "' has rows of " +
                                                    std::to_string(devices.size()) + " devices (" +
                                                    list + "): choose one with --device");
  }
  device = devices.front();
  std::map<std::string, KeyGroup> newest;
  std::vector<std::string> order;
  for (auto& [id, g] : by_identity) {
    auto it = newest.find(g.key.key);
    if (it == newest.end()) {
      order.push_back(g.key.key);
      newest.emplace(g.key.key, std::move(g));
      continue;
    }
    ++superseded;
    if (g.newest > it->second.newest) it->second = std::move(g);
  }
  std::vector<KeyGroup> out;
  for (const auto& k : order) out.push_back(std::move(newest[k]));
  return out;
}

// The table's features from its keys' fields: those that vary, numeric when they can be.
Status fill_features(DecisionTable& t, const std::vector<std::vector<KeyField>>& fields) {
  const std::vector<KeyField>& first = fields.front();
  for (std::size_t i = 0; i < fields.size(); ++i) {
    bool same = fields[i].size() == first.size();
    for (std::size_t f = 0; same && f < first.size(); ++f)
      same = fields[i][f].name == first[f].name;
    if (!same)
      return Status(StatusCode::invalid_argument,
                    "keys '" + t.keys.front().key + "' and '" + t.keys[i].key +
                        "' have different fields: the keys of one kernel must share them");
  }
  std::vector<std::size_t> varying;
  for (std::size_t f = 0; f < first.size(); ++f) {
    bool varies = false, numeric = true, integral = true;
    for (const auto& k : fields) {
      varies = varies || k[f].value != first[f].value;
      const double v = number_of(k[f].value);
      numeric = numeric && !std::isnan(v);
      integral = integral && !std::isnan(v) && v == std::floor(v);
    }
    if (!varies) {
      t.constant.push_back(first[f].name + "=" + first[f].value);
      continue;
    }
    t.features.push_back({first[f].name, numeric, numeric && integral});
    varying.push_back(f);
  }
  for (std::size_t i = 0; i < t.keys.size(); ++i) {
    for (std::size_t j = 0; j < varying.size(); ++j) {
      const std::string& text = fields[i][varying[j]].value;
      t.keys[i].text.push_back(text);
      t.keys[i].value.push_back(t.features[j].numeric ? number_of(text) : 0.0);
    }
  }
  return Status();
}

bool usable(const StoredResult& r) {
  return r.status == StatusCode::ok && std::isfinite(r.stats.median) && r.stats.median > 0;
}

}  // namespace

std::vector<KeyField> key_fields(std::string_view key) {
  std::vector<KeyField> out;
  const std::size_t semi = key.find(';');
  const std::string_view named = key.substr(0, semi);
  std::size_t pos = 0;
  while (!named.empty() && pos <= named.size()) {
    std::size_t comma = named.find(',', pos);
    if (comma == std::string_view::npos) comma = named.size();
    const std::string_view field = named.substr(pos, comma - pos);
    const std::size_t eq = field.find('=');
    if (eq == std::string_view::npos)
      out.push_back({"field" + std::to_string(out.size()), std::string(field)});
    else
      out.push_back({std::string(field.substr(0, eq)), std::string(field.substr(eq + 1))});
    pos = comma + 1;
  }
  if (semi != std::string_view::npos) out.push_back({"types", std::string(key.substr(semi + 1))});
  return out;
}

Result<DecisionTable> decision_table(std::span<const CacheRow> rows, const std::string& kernel) {
  DecisionTable t;
  t.kernel = kernel;
  auto groups = key_groups(rows, kernel, t.superseded, t.device);
  if (!groups.ok()) return groups.status();
  for (const KeyGroup& g : *groups)
    for (const StoredResult& r : g.rows)
      if (usable(r)) t.configs.push_back(r.config);
  std::sort(t.configs.begin(), t.configs.end());
  t.configs.erase(std::unique(t.configs.begin(), t.configs.end()), t.configs.end());
  std::vector<std::vector<KeyField>> fields;
  for (const KeyGroup& g : *groups) {
    KeyRow k;
    k.key = g.key.key;
    k.slowdown.assign(t.configs.size(), kUnknown);
    k.best_median_ns = kUnknown;
    for (const StoredResult& r : g.rows)
      if (usable(r)) k.best_median_ns = std::min(k.best_median_ns, r.stats.median);
    if (!std::isfinite(k.best_median_ns)) continue;  // no configuration ran at this key
    for (const StoredResult& r : g.rows) {
      if (!usable(r)) continue;
      const auto c = std::lower_bound(t.configs.begin(), t.configs.end(), r.config);
      k.slowdown[static_cast<std::size_t>(c - t.configs.begin())] =
          r.stats.median / k.best_median_ns;
    }
    fields.push_back(key_fields(k.key));
    t.keys.push_back(std::move(k));
  }
  if (t.keys.empty())
    return Status(StatusCode::not_found, "kernel '" + kernel +
                                             "' has no key with a successful configuration: "
                                             "nothing to distill");
  if (Status s = fill_features(t, fields); !s.ok()) return s;
  return t;
}

}  // namespace tune::distill
