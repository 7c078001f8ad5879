#include "decision_text.hpp"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>

namespace tune::cli {

std::string flips_text(std::uint64_t flips, std::uint64_t retunings) {
  if (retunings == 0) return "no re-tunings";
  return std::to_string(flips) + (flips == 1 ? " flip in " : " flips in ") +
         std::to_string(retunings) + (retunings == 1 ? " re-tuning" : " re-tunings");
}

double FlipTally::rate() const noexcept {
  return retunings == 0 ? std::numeric_limits<double>::quiet_NaN()
                        : static_cast<double>(flips) / static_cast<double>(retunings);
}

std::string decision_summary(const DecisionRecord& d) {
  std::string o;
  char buf[64];
  if (d.runner_up.empty()) {
    o = "no runner-up";
  } else {
    if (std::isfinite(d.margin)) {
      std::snprintf(buf, sizeof buf, "margin %+.1f%% over ", 100.0 * d.margin);
      o = buf + d.runner_up;
    } else {
      o = "runner-up " + d.runner_up;
    }
    if (std::isfinite(d.confidence)) {
      std::snprintf(buf, sizeof buf, ", confidence %.2f", d.confidence);
      o += buf;
    }
  }
  o += ", " + (d.timing.empty() ? std::string("timing unknown") : d.timing);
  if (d.sustained_turns > 0) o += ", " + std::to_string(d.sustained_turns) + " sustained turns";
  if (!d.library_version.empty()) o += ", libtune " + d.library_version;
  if (d.unix_time > 0) {
    const std::time_t t = static_cast<std::time_t>(d.unix_time);
    std::tm tm{};
    gmtime_r(&t, &tm);
    std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
    o += ", decided ";
    o += buf;
  }
  return o + ", " + flips_text(d.flips, d.tunings > 0 ? d.tunings - 1 : 0);
}

}  // namespace tune::cli
