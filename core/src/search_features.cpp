#include "search_features.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

namespace tune::detail {
namespace {

// log2(|v| + 1) of a number, sign kept (a boolean: 0 or 1); nullopt for a string.
std::optional<double> log_magnitude(const Value& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) {
    const double m = std::log2(1.0 + std::fabs(static_cast<double>(*i)));
    return *i < 0 ? -m : m;
  }
  if (const auto* b = std::get_if<bool>(&v)) return *b ? 1.0 : 0.0;
  return std::nullopt;
}

// Whether an integer's odd factor (|v| without its factors of two) is above 1; false for 0.
bool odd_factor_above_one(std::int64_t v) {
  if (v == 0) return false;
  std::uint64_t m = v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
  while (m % 2 == 0) m /= 2;
  return m > 1;
}

// `raw` mapped linearly onto [0, 1] by its least and greatest (all 0 when they are equal).
std::vector<double> unit_range(std::vector<double> raw) {
  if (raw.empty()) return raw;
  const auto [lo, hi] = std::minmax_element(raw.begin(), raw.end());
  const double a = *lo, span = *hi - *lo;
  for (double& r : raw) r = span > 0 ? (r - a) / span : 0.0;
  return raw;
}

}  // namespace

ListDomains list_domains(const ConfigSpace& s) {
  std::vector<std::string> names;
  ListDomains out;
  std::vector<Config> configs;
  for (std::uint64_t i = 0; i < s.raw_size(); ++i) configs.push_back(s.at(i));
  for (const auto& c : configs)
    for (const auto& [name, v] : c.params()) {
      auto it = std::find(names.begin(), names.end(), name);
      if (it == names.end()) {
        names.push_back(name);
        out.domains.emplace_back();
        it = names.end() - 1;
      }
      auto& dom = out.domains[static_cast<std::size_t>(it - names.begin())];
      if (std::find(dom.begin(), dom.end(), v) == dom.end()) dom.push_back(v);
    }
  out.rows.resize(configs.size());
  for (std::size_t r = 0; r < configs.size(); ++r)
    for (std::size_t p = 0; p < names.size(); ++p) {
      const auto& dom = out.domains[p];
      const Value* v = configs[r].find(names[p]);
      const auto at = v ? std::find(dom.begin(), dom.end(), *v) : dom.end();
      out.rows[r].push_back(v ? static_cast<std::uint32_t>(at - dom.begin())
                              : ListDomains::kMissing);
    }
  return out;
}

Features::Features(const Explorer& x) {
  const ConfigSpace& s = x.space();
  if (!s.is_list()) {
    for (const auto& d : s.dimensions()) add_column(d.values);
    return;
  }
  ListDomains list = list_domains(s);
  for (const auto& domain : list.domains) add_column(domain);
  list_rows_ = std::move(list.rows);
}

void Features::append(const Explorer& x, std::uint64_t index, std::vector<double>& out) const {
  if (list_rows_.empty()) {
    const auto& radix = x.radix();
    // The value indices of a product space's point, last dimension fastest (Explorer::digits
    // without its allocation).
    const std::size_t at = out.size();
    out.resize(at + width_);
    std::size_t end = out.size();
    for (std::size_t k = columns_.size(); k-- > 0;) {
      const std::uint64_t digit = index % radix[k];
      index /= radix[k];
      const Column& c = columns_[k];
      if (!c.odd.empty()) out[--end] = c.odd[digit];
      out[--end] = c.value[digit];
    }
    return;
  }
  const auto& row = list_rows_[index];
  for (std::size_t k = 0; k < columns_.size(); ++k) push(k, row[k], out);
}

void Features::add_column(const std::vector<Value>& values) {
  Column c;
  const bool numeric = std::all_of(values.begin(), values.end(),
                                   [](const Value& v) { return log_magnitude(v).has_value(); });
  std::vector<double> raw;
  for (std::size_t i = 0; i < values.size(); ++i)
    raw.push_back(numeric ? *log_magnitude(values[i]) : static_cast<double>(i));
  c.value = unit_range(std::move(raw));
  const bool integers = std::all_of(values.begin(), values.end(), [](const Value& v) {
    return std::holds_alternative<std::int64_t>(v);
  });
  if (integers && values.size() > 2) {
    for (const auto& v : values) c.odd.push_back(odd_factor_above_one(std::get<std::int64_t>(v)));
    if (std::all_of(c.odd.begin(), c.odd.end(), [&](double o) { return o == c.odd.front(); }))
      c.odd.clear();  // a column of one value tells nothing
  }
  width_ += 1 + (c.odd.empty() ? 0 : 1);
  columns_.push_back(std::move(c));
}

void Features::push(std::size_t k, std::uint64_t value_index, std::vector<double>& out) const {
  const Column& c = columns_[k];
  const bool missing = value_index == ListDomains::kMissing;
  out.push_back(missing ? -1.0 : c.value[value_index]);
  if (!c.odd.empty()) out.push_back(missing ? -1.0 : c.odd[value_index]);
}

}  // namespace tune::detail
