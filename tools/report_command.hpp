// `tune report`: the HTML report (html_report.hpp) of the tuning cache's keys.
//
//   tune report [--db FILE] [--kernel K] [--device D] [--key K] [--out report.html]
//
// The cache keeps each configuration's statistics, status and reason, so the page shows
// candidates, failures, winners, parameter sensitivity, winners across keys and the device and
// toolchain fingerprints. Racing states, compile times, where the time went and best-so-far
// need the tuning itself: `tune demo --report FILE` writes the same page from the tunings it
// runs, with those.
#pragma once

namespace CLI {
class App;
}

namespace tune::cli {

// Adds the `report` subcommand to `app`.
void add_report_command(CLI::App& app);

}  // namespace tune::cli
