// Reading the HTML report's DOM (as headless Chromium dumps it) in the tool tests: the
// elements of a tag and class, with their attributes, and the checks every report must pass.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <map>
#include <regex>
#include <string>
#include <vector>

namespace tune::testing {

using Attributes = std::map<std::string, std::string>;

inline std::string html_unescape(std::string s) {
  const std::pair<const char*, const char*> entities[] = {
      {"&quot;", "\""}, {"&#39;", "'"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}};
  for (const auto& e : entities) {
    const std::string from = e.first;
    for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + 1))
      s.replace(at, from.size(), e.second);
  }
  return s;
}

// The attributes of every <tag ...> whose class list holds `cls` (any when empty), in order.
inline std::vector<Attributes> dom_elements(const std::string& dom, const std::string& tag,
                                            const std::string& cls = "") {
  std::vector<Attributes> out;
  const std::regex open("<" + tag + "(\\s[^>]*)?>");
  const std::regex attr(R"(([\w:-]+)="([^"]*)\")");
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), open); it != std::sregex_iterator();
       ++it) {
    const std::string body = (*it)[1].str();
    Attributes a;
    for (auto m = std::sregex_iterator(body.begin(), body.end(), attr); m != std::sregex_iterator();
         ++m)
      a[(*m)[1].str()] = html_unescape((*m)[2].str());
    if (!cls.empty()) {
      const std::string classes = " " + a["class"] + " ";
      if (classes.find(" " + cls + " ") == std::string::npos) continue;
    }
    out.push_back(std::move(a));
  }
  return out;
}

inline double dom_number(const Attributes& a, const std::string& name) {
  const auto it = a.find(name);
  REQUIRE_MESSAGE(it != a.end(), "no attribute " << name);
  return it->second == "inf" ? HUGE_VAL : std::strtod(it->second.c_str(), nullptr);
}

// Every report: it rendered (its script ran and counted `candidates` rows), and nothing in it
// points outside the file (no src or href but in-page anchors, no url(), no @import).
inline void check_self_contained(const std::string& html, const std::string& dom,
                                 std::size_t candidates) {
  auto bodies = dom_elements(dom, "body");
  REQUIRE(bodies.size() == 1);
  CHECK_MESSAGE(bodies[0]["data-rendered"] == std::to_string(candidates),
                "the page's script did not run or counted other rows");
  const std::regex link(R"((src|href)\s*=\s*"([^"]*)\")");
  for (auto m = std::sregex_iterator(html.begin(), html.end(), link); m != std::sregex_iterator();
       ++m)
    CHECK_MESSAGE((*m)[2].str().rfind('#', 0) == 0, "a link out of the page: " << (*m)[0].str());
  CHECK(html.find("url(") == std::string::npos);
  CHECK(html.find("@import") == std::string::npos);
  CHECK(html.find("http://") == std::string::npos);
  CHECK(html.find("https://") == std::string::npos);
}

}  // namespace tune::testing
