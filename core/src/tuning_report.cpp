// TuningReport's text (TUNE_PRINT_AUTOTUNING, TuningReport::to_string) and ResultSource's names.
#include <cstdio>

#include "tune/autotuner.hpp"

namespace tune {

std::string_view to_string(ResultSource s) noexcept {
  switch (s) {
    case ResultSource::memory:
      return "memory";
    case ResultSource::disk:
      return "disk";
    case ResultSource::tuned:
      return "tuned";
    case ResultSource::single:
      return "single";
    case ResultSource::disabled:
      return "disabled";
    case ResultSource::shared:
      return "shared";
    case ResultSource::empty:
      return "empty";
    case ResultSource::fallback:
      return "fallback";
  }
  return "unknown";
}

namespace {

std::string first_line(const std::string& s, std::size_t max = 160) {
  std::string out = s.substr(0, s.find('\n'));
  if (out.size() > max) out = out.substr(0, max) + "...";
  return out;
}

}  // namespace

std::string TuningReport::to_string() const {
  std::string s = "[libtune] " + kernel + " key {" + key + "} on " + device + ": " +
                  std::string(tune::to_string(source));
  char buf[224];
  std::snprintf(buf, sizeof buf, " in %.1f ms, %zu configs", wall_ms, results.size());
  s += buf;
  if (pruned > 0) s += " (" + std::to_string(pruned) + " pruned)";
  if (partial) s += " [partial: tuning budget reached]";
  s += "\n";
  std::snprintf(buf, sizeof buf,
                "  time: candidates %.1f, store %.1f, compile wait %.1f, verify %.1f, "
                "benchmark %.1f, strategy %.1f, overhead %.1f ms\n",
                times.candidates, times.store, times.compile, times.verify, times.benchmark,
                times.strategy, times.overhead);
  s += buf;
  if (showdown.finalists > 0) {
    std::string screened;
    if (showdown.screened > 0) screened = std::to_string(showdown.screened) + " screened, ";
    std::string sustained;
    if (showdown.sustained > 0)
      sustained = ", " + std::to_string(showdown.sustained) + " in sustained turns (" +
                  std::to_string(showdown.sustained_pairs) + " pairs of rounds, " +
                  std::to_string(showdown.sustained_turns) + " turns, " +
                  std::to_string(showdown.sustained_ruled_out) + " ruled out early)";
    std::snprintf(buf, sizeof buf, "  showdown: %s%d finalists, %d interleaved rounds%s%s\n",
                  screened.c_str(), showdown.finalists, showdown.rounds,
                  showdown.retimed == 0 ? ""
                  : showdown.stationary
                      ? ", re-timed after a shift"
                      : ", samples still shifting after the retries (timing conditions changed)",
                  sustained.c_str());
    s += buf;
  }
  for (const auto& r : results) {
    s += "  {" + r.config.to_string() + "} ";
    if (!r.status.ok())
      s += first_line(r.status.to_string());
    else if (r.stats.count > 0)
      s += r.stats.to_string();
    else
      s += "not timed";
    if (r.from_store) s += r.origin.empty() ? " (stored)" : " (stored, bundle " + r.origin + ")";
    if (r.fallback != FallbackLevel::none)
      s += " (fallback: " + std::string(tune::to_string(r.fallback)) +
           (r.origin.empty() || r.from_store ? "" : ", bundle " + r.origin) + ")";
    if (r.status.ok() && r.verified) s += " (output verified)";
    if (r.raced_out) s += " (raced out)";
    if (r.settled) s += " (within tolerance of the leader)";
    auto res = r.resources.to_string();
    if (!res.empty()) s += " " + res;
    s += "\n";
  }
  if (status.ok()) {
    s += "  winner {" + winner.to_string() + "}";
    for (const auto& r : results)
      if (r.from_store && !r.origin.empty() && r.config == winner) s += " from bundle " + r.origin;
    if (fallback != FallbackLevel::none)
      s += " served by fallback level '" + std::string(tune::to_string(fallback)) +
           "' (decision of " + fallback_device + ")";
    s += "\n";
  } else
    s += "  failed: " + first_line(status.to_string(), 400) + "\n";
  if (!bucket.edges.empty()) {
    s += "  bucket " + bucket.range + (bucket.split ? ": split" : ": holds") + " (edges";
    for (const auto& e : bucket.edges) {
      s += " " + e.arg + "=" + std::to_string(e.value);
      s += !e.skipped.empty() ? " skipped" : !e.winner.ok() ? " failed" : e.broke ? " lost" : " ok";
    }
    s += ")\n";
  }
  for (const auto& f : launch_fallbacks) s += "  fallback: " + f + "\n";
  return s;
}

}  // namespace tune
