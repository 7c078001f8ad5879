// Output helpers of the `tune` commands. See cli_print.hpp.
#include "cli_print.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tune::cli {

using nlohmann::json;

void print_table(const std::vector<std::string>& header,
                 const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width(header.size());
  for (std::size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size() && i < width.size(); ++i)
      width[i] = std::max(width[i], r[i].size());
  auto line = [&](const std::vector<std::string>& r) {
    std::string s;
    for (std::size_t i = 0; i < r.size(); ++i) {
      s += r[i];
      if (i + 1 < r.size()) s += std::string(width[i] - r[i].size() + 2, ' ');
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    std::printf("%s\n", s.c_str());
  };
  line(header);
  for (const auto& r : rows) line(r);
}

void print_json(const json& j) {
  std::printf("%s\n", j.dump(2, ' ', false, json::error_handler_t::replace).c_str());
}

json stats_json(const SampleStats& s) {
  auto num = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  return {{"count", s.count},  {"min", num(s.min)}, {"p20", num(s.p20)},  {"median", num(s.median)},
          {"p80", num(s.p80)}, {"max", num(s.max)}, {"mean", num(s.mean)}};
}

}  // namespace tune::cli
