#include "env.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>

#include "tune/log.hpp"

namespace tune {
namespace {

std::string normalised(const char* raw) {
  std::string s(raw);
  auto blank = [](unsigned char c) { return std::isspace(c) != 0; };
  s.erase(s.begin(), std::find_if_not(s.begin(), s.end(), blank));
  s.erase(std::find_if_not(s.rbegin(), s.rend(), blank).base(), s.end());
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Warns once per variable name.
void warn_once(const char* name, const char* raw) {
  static std::mutex mu;
  static std::set<std::string> warned;
  {
    std::lock_guard lock(mu);
    if (!warned.insert(name).second) return;
  }
  log_warning(std::string(name) + "='" + raw +
              "' is not a boolean (1/true/yes/on or 0/false/no/off, any case); ignored");
}

}  // namespace

bool env_flag(const char* name, bool fallback) {
  const char* raw = std::getenv(name);
  if (raw == nullptr) return fallback;
  const std::string v = normalised(raw);
  if (v.empty()) return fallback;
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  warn_once(name, raw);
  return fallback;
}

}  // namespace tune
