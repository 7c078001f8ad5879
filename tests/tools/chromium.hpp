// Headless Chromium for the HTML report tests (Debian's `chromium`; scripts/install-deps.sh
// installs it, for the tests only): the DOM of a page after its scripts ran, and a screenshot.
// Run in the TuneCli's environment (its scratch HOME keeps Chromium's profile out of the
// user's). Skips (fails in CI) when no chromium is installed.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "skip.hpp"
#include "tune_process.hpp"

namespace tune::testing {

// The chromium executable, or empty when none is installed.
inline std::string find_chromium() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"})
    if (::access(p, X_OK) == 0) return p;
  return {};
}

inline std::string require_chromium() {
  std::string exe = find_chromium();
  if (exe.empty()) {
    const std::string why = "no headless Chromium (install Debian's chromium package)";
    if (in_ci()) FAIL(why);
    TUNE_SKIP(why);
  }
  return exe;
}

// Options for a local page only: no sandbox (CI containers run as root), no GPU, no
// first-run or background network activity.
inline std::vector<std::string> chromium_args(std::vector<std::string> extra) {
  std::vector<std::string> a = {"--headless",
                                "--no-sandbox",
                                "--disable-gpu",
                                "--disable-dev-shm-usage",
                                "--no-first-run",
                                "--disable-background-networking",
                                "--disable-component-update"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// The DOM of `page` after its DOMContentLoaded handlers ran, as HTML text.
inline std::string rendered_dom(const TuneCli& cli, const std::string& chromium,
                                const fs::path& page) {
  const ProcessResult r = cli.run_program(
      chromium, chromium_args({"--dump-dom", "file://" + fs::absolute(page).string()}),
      std::chrono::seconds(120));
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  REQUIRE_MESSAGE(r.out.find("<html") != std::string::npos, r.describe());
  return r.out;
}

// A PNG screenshot of `page` (width x height CSS pixels) into `png`.
inline void screenshot(const TuneCli& cli, const std::string& chromium, const fs::path& page,
                       const fs::path& png, int width, int height) {
  const ProcessResult r = cli.run_program(
      chromium,
      chromium_args({"--hide-scrollbars", "--screenshot=" + png.string(),
                     "--window-size=" + std::to_string(width) + "," + std::to_string(height),
                     "file://" + fs::absolute(page).string()}),
      std::chrono::seconds(120));
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  REQUIRE_MESSAGE(fs::exists(png), r.describe());
}

}  // namespace tune::testing
