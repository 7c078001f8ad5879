// See html_report.hpp.
#include "html_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>
#include <map>
#include <tuple>

#include "convergence.hpp"
#include "decision_text.hpp"
#include "host_text.hpp"
#include "time_text.hpp"
#include "tune/version.hpp"

namespace tune::cli {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string esc(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// A number for a data-* attribute: exact (17 significant digits), "inf" when not finite.
std::string num(double v) {
  if (!std::isfinite(v)) return "inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// num(), with "nan" for what is not known (a record's margin without a runner-up).
std::string num_or_nan(double v) { return std::isnan(v) ? "nan" : num(v); }

// A number for drawing: 2 decimals.
std::string px(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string ms_text(double ms) { return time_text(ms * 1e6); }

std::string percent(double part, double whole) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.1f%%", whole > 0 ? 100.0 * part / whole : 0.0);
  return buf;
}

bool ok_row(const ConfigResult& r) { return r.status.ok() && std::isfinite(r.stats.median); }

// The state a row shows: one word, also its CSS class.
const char* state_of(const ConfigResult& r, const Config& winner, bool has_winner) {
  if (!r.status.ok()) return "failed";
  if (has_winner && r.config == winner) return "winner";
  if (r.raced_out) return "raced-out";
  if (r.settled) return "settled";
  if (r.from_store) return "stored";
  return "ok";
}

// The output column's cell: Verification's name, also its CSS class ("not_checked" shown as
// "not checked": only what can win is checked unless the tuning asked for every one).
std::string output_cell(const std::string& verification) {
  std::string shown = verification;
  std::replace(shown.begin(), shown.end(), '_', ' ');
  return "<td class=\"output " + verification + "\" title=\"" +
         (verification == "not_checked"
              ? std::string("output not compared: only what can win is checked, unless every "
                            "configuration is (AutotunerOptions::verify)")
          : verification == "verified" ? std::string("output checked and passed")
                                       : std::string("output checked and wrong")) +
         "\">" + shown + "</td>";
}

// "name=value" pairs of a config's text, parameters and launch options alike
// ("EPT=4", "block=256x1x1").
std::vector<std::pair<std::string, std::string>> config_pairs(const Config& c) {
  std::vector<std::pair<std::string, std::string>> out;
  const std::string text = c.to_string();
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find_first_of(",;", start);
    if (end == std::string::npos) end = text.size();
    const std::string part = text.substr(start, end - start);
    const std::size_t eq = part.find('=');
    if (eq != std::string::npos) out.emplace_back(part.substr(0, eq), part.substr(eq + 1));
    start = end + 1;
  }
  return out;
}

// Log-scale x positions over [lo, hi] in a strip `width` wide with 4 px margins.
struct LogScale {
  double lo = 1, hi = 1, width = 1;
  double x(double v) const {
    if (!(hi > lo)) return width / 2;
    const double t = (std::log(std::max(v, lo)) - std::log(lo)) / (std::log(hi) - std::log(lo));
    return 4 + std::clamp(t, 0.0, 1.0) * (width - 8);
  }
};

// The min-max line, p20-p80 box and median tick of one configuration.
std::string strip_svg(const SampleStats& s, const LogScale& sc, const char* state) {
  const double h = 14;
  std::string o = "<svg class=\"strip " + std::string(state) + "\" width=\"" + px(sc.width) +
                  "\" height=\"" + px(h) + "\" viewBox=\"0 0 " + px(sc.width) + " " + px(h) +
                  "\" role=\"img\" aria-label=\"p20 to p80 band and min to max range\">";
  o += "<line class=\"range\" x1=\"" + px(sc.x(s.min)) + "\" x2=\"" + px(sc.x(s.max)) +
       "\" y1=\"7\" y2=\"7\"/>";
  const double x0 = sc.x(s.p20), x1 = sc.x(s.p80);
  o += "<rect class=\"band\" x=\"" + px(x0) + "\" y=\"2\" width=\"" + px(std::max(x1 - x0, 1.0)) +
       "\" height=\"10\"/>";
  o += "<line class=\"median\" x1=\"" + px(sc.x(s.median)) + "\" x2=\"" + px(sc.x(s.median)) +
       "\" y1=\"0\" y2=\"14\"/></svg>";
  return o;
}

struct TimePart {
  const char* name;
  double ms;
};

std::vector<TimePart> time_parts(const TuningTimes& t) {
  return {{"candidates", t.candidates}, {"store", t.store},         {"compile", t.compile},
          {"verify", t.verify},         {"benchmark", t.benchmark}, {"strategy", t.strategy},
          {"overhead", t.overhead}};
}

// Where the wall time went: a stacked bar and a table of the parts.
std::string times_html(const TuningReport& r) {
  const auto parts = time_parts(r.times);
  double sum = 0;
  for (const auto& p : parts) sum += p.ms;
  std::string o =
      "<h3>Where the time went</h3><div class=\"times\" data-wall-ms=\"" + num(r.wall_ms) + "\">";
  const double w = 600;
  o += "<svg class=\"time-bar\" width=\"600\" height=\"20\" viewBox=\"0 0 600 20\" role=\"img\" "
       "aria-label=\"tuning time by part\">";
  double x = 0;
  for (const auto& p : parts) {
    if (!(p.ms > 0) || !(sum > 0)) continue;
    const double pw = w * p.ms / sum;
    o += "<rect class=\"part-" + std::string(p.name) + "\" x=\"" + px(x) + "\" y=\"0\" width=\"" +
         px(pw) + "\" height=\"20\"><title>" + p.name + " " + ms_text(p.ms) + "</title></rect>";
    x += pw;
  }
  o += "</svg><table class=\"time-parts\"><tr><th>part</th><th>time</th><th>share</th></tr>";
  for (const auto& p : parts) {
    o += "<tr class=\"time-part\" data-part=\"" + std::string(p.name) + "\" data-ms=\"" +
         num(p.ms) + "\"><td><span class=\"swatch part-" + p.name + "\"></span>" + p.name +
         "</td><td>" + ms_text(p.ms) + "</td><td>" + percent(p.ms, r.wall_ms) + "</td></tr>";
  }
  o += "<tr><td>wall</td><td>" + ms_text(r.wall_ms) + "</td><td></td></tr></table></div>";
  return o;
}

// A step line through (x, y) points, as an SVG path.
std::string step_path(const std::vector<std::pair<double, double>>& xy) {
  std::string d;
  for (std::size_t i = 0; i < xy.size(); ++i) {
    if (i == 0) {
      d = "M" + px(xy[i].first) + "," + px(xy[i].second);
      continue;
    }
    d += " L" + px(xy[i].first) + "," + px(xy[i - 1].second) + " L" + px(xy[i].first) + "," +
         px(xy[i].second);
  }
  return d;
}

// Racing's progress against tuning time: the best median so far (log scale, left axis) and
// the configurations compiled, timed and raced out (count, right axis).
std::string progress_html(const std::vector<ProgressPoint>& pts) {
  if (pts.empty()) return {};
  double tmax = 0, lo = kInf, hi = 0;
  std::size_t nmax = 1;
  std::size_t finite = 0;
  for (const auto& q : pts) {
    tmax = std::max(tmax, q.elapsed_ms);
    nmax = std::max({nmax, q.candidates, q.compiled});
    if (!(std::isfinite(q.best_ns) && q.best_ns > 0)) continue;
    ++finite;
    lo = std::min(lo, q.best_ns);
    hi = std::max(hi, q.best_ns);
  }
  const double W = 640, H = 180, L = 70, R = 40, B = 24;
  const LogScale ys{lo, hi * 1.0001, H - B - 4};
  auto X = [&](double ms) { return L + (tmax > 0 ? ms / tmax : 1.0) * (W - L - R); };
  auto Y = [&](double ns) { return (H - B) - ys.x(ns); };
  auto N = [&](double n) { return (H - B) - (H - B - 8) * n / static_cast<double>(nmax); };
  std::vector<std::pair<double, double>> best, compiled, timed, raced;
  for (const auto& q : pts) {
    const double x = X(q.elapsed_ms);
    if (std::isfinite(q.best_ns) && q.best_ns > 0) best.emplace_back(x, Y(q.best_ns));
    compiled.emplace_back(x, N(static_cast<double>(q.compiled)));
    timed.emplace_back(x, N(static_cast<double>(q.timed)));
    raced.emplace_back(x, N(static_cast<double>(q.raced_out)));
  }
  double first_ns = kInf, last_ns = kInf;
  for (const auto& q : pts) {
    if (!(std::isfinite(q.best_ns) && q.best_ns > 0)) continue;
    if (!std::isfinite(first_ns)) first_ns = q.best_ns;
    last_ns = q.best_ns;
  }
  std::string o = "<h3>Racing against tuning time</h3>";
  o += "<svg class=\"best-so-far\" data-points=\"" + std::to_string(finite) + "\" data-events=\"" +
       std::to_string(pts.size()) + "\" data-first-ns=\"" + num(first_ns) + "\" data-last-ns=\"" +
       num(last_ns) + "\" width=\"" + px(W) + "\" height=\"" + px(H) + "\" viewBox=\"0 0 " + px(W) +
       " " + px(H) +
       "\" role=\"img\" aria-label=\"best median so far and configurations compiled, timed and "
       "raced out against elapsed tuning time\">";
  o += "<line class=\"axis\" x1=\"" + px(L) + "\" y1=\"" + px(H - B) + "\" x2=\"" + px(W - R) +
       "\" y2=\"" + px(H - B) + "\"/>";
  o += "<line class=\"axis\" x1=\"" + px(L) + "\" y1=\"4\" x2=\"" + px(L) + "\" y2=\"" + px(H - B) +
       "\"/>";
  if (finite > 0) {
    o += "<text x=\"" + px(L - 4) + "\" y=\"" + px(Y(hi) + 4) + "\" text-anchor=\"end\">" +
         esc(time_text(hi)) + "</text>";
    if (hi > lo)
      o += "<text x=\"" + px(L - 4) + "\" y=\"" + px(Y(lo) + 4) + "\" text-anchor=\"end\">" +
           esc(time_text(lo)) + "</text>";
  }
  o += "<text x=\"" + px(W - R + 4) + "\" y=\"" + px(N(static_cast<double>(nmax)) + 4) + "\">" +
       std::to_string(nmax) + "</text>";
  o += "<text x=\"" + px(W - R + 4) + "\" y=\"" + px(H - B + 4) + "\">0</text>";
  o += "<text x=\"" + px(L) + "\" y=\"" + px(H - 6) + "\">0</text>";
  o += "<text x=\"" + px(W - R) + "\" y=\"" + px(H - 6) + "\" text-anchor=\"end\">" +
       esc(ms_text(tmax)) + " elapsed</text>";
  o += "<path class=\"count compiled\" d=\"" + step_path(compiled) + "\"/>";
  o += "<path class=\"count timed\" d=\"" + step_path(timed) + "\"/>";
  o += "<path class=\"count raced\" d=\"" + step_path(raced) + "\"/>";
  if (!best.empty()) o += "<path class=\"best\" d=\"" + step_path(best) + "\"/>";
  for (const auto& b : best)
    o += "<circle r=\"2.5\" cx=\"" + px(b.first) + "\" cy=\"" + px(b.second) + "\"/>";
  o += "</svg><p class=\"legend\"><span class=\"swatch best\"></span>best median so far "
       "(left, log scale) <span class=\"swatch compiled\"></span>compiled "
       "<span class=\"swatch timed\"></span>timed <span class=\"swatch raced\"></span>raced "
       "out (right, configurations)</p>";
  return o;
}

// A search's convergence: the best median so far (log scale) against the evaluations made,
// one step per improvement, with the improvements listed below.
std::string convergence_html(const TuningReport& r) {
  const std::vector<ConvergenceStep> steps = convergence_steps(r);
  if (steps.empty()) return {};
  const double W = 640, H = 160, L = 70, R = 40, B = 24;
  const double n = static_cast<double>(r.results.size());
  const LogScale ys{steps.back().best_ns, steps.front().best_ns * 1.0001, H - B - 4};
  auto X = [&](double e) { return L + (n > 1 ? (e - 1) / (n - 1) : 1.0) * (W - L - R); };
  auto Y = [&](double ns) { return (H - B) - ys.x(ns); };
  std::vector<std::pair<double, double>> xy;
  for (const ConvergenceStep& s : steps)
    xy.emplace_back(X(static_cast<double>(s.evaluation)), Y(s.best_ns));
  xy.emplace_back(X(n), Y(steps.back().best_ns));
  std::string o = "<h3>Search convergence</h3><p class=\"convergence-text\">" +
                  esc(convergence_text(r)) + "</p>";
  o += "<svg class=\"convergence\" data-strategy=\"" + esc(r.strategy) + "\" data-evaluations=\"" +
       std::to_string(r.results.size()) + "\" data-improvements=\"" + std::to_string(steps.size()) +
       "\" data-first-ns=\"" + num(steps.front().best_ns) + "\" data-best-ns=\"" +
       num(steps.back().best_ns) + "\" data-best-at=\"" + std::to_string(steps.back().evaluation) +
       "\" width=\"" + px(W) + "\" height=\"" + px(H) + "\" viewBox=\"0 0 " + px(W) + " " + px(H) +
       "\" role=\"img\" aria-label=\"best median so far against configurations evaluated\">";
  o += "<line class=\"axis\" x1=\"" + px(L) + "\" y1=\"" + px(H - B) + "\" x2=\"" + px(W - R) +
       "\" y2=\"" + px(H - B) + "\"/><line class=\"axis\" x1=\"" + px(L) + "\" y1=\"4\" x2=\"" +
       px(L) + "\" y2=\"" + px(H - B) + "\"/>";
  o += "<text x=\"" + px(L - 4) + "\" y=\"" + px(Y(steps.front().best_ns) + 4) +
       "\" text-anchor=\"end\">" + esc(time_text(steps.front().best_ns)) + "</text>";
  if (steps.size() > 1)
    o += "<text x=\"" + px(L - 4) + "\" y=\"" + px(Y(steps.back().best_ns) + 4) +
         "\" text-anchor=\"end\">" + esc(time_text(steps.back().best_ns)) + "</text>";
  o += "<text x=\"" + px(L) + "\" y=\"" + px(H - 6) + "\">1</text><text x=\"" + px(W - R) +
       "\" y=\"" + px(H - 6) + "\" text-anchor=\"end\">" + std::to_string(r.results.size()) +
       " evaluations</text>";
  o += "<path class=\"best\" d=\"" + step_path(xy) + "\"/>";
  for (const ConvergenceStep& s : steps)
    o += "<circle class=\"improvement\" data-evaluation=\"" + std::to_string(s.evaluation) +
         "\" data-best-ns=\"" + num(s.best_ns) + "\" data-config=\"" + esc(s.config) +
         "\" r=\"2.5\" cx=\"" + px(X(static_cast<double>(s.evaluation))) + "\" cy=\"" +
         px(Y(s.best_ns)) + "\"><title>#" + std::to_string(s.evaluation) + " " +
         esc(time_text(s.best_ns)) + " " + esc(s.config) + "</title></circle>";
  o += "</svg>";
  return o;
}

// Per parameter, per value: the best and the median of the ok configurations' medians.
std::string sensitivity_html(const std::vector<const ConfigResult*>& ok, double best) {
  std::map<std::string, std::map<std::string, std::vector<double>>> by;
  for (const ConfigResult* r : ok)
    for (const auto& kv : config_pairs(r->config))
      by[kv.first][kv.second].push_back(r->stats.median);
  std::string o;
  for (auto& [param, values] : by) {
    if (values.size() < 2) continue;  // a parameter with one value tells nothing
    if (o.empty()) o = "<h3>Parameter sensitivity</h3><div class=\"sensitivity\">";
    o += "<table class=\"sens\" data-param=\"" + esc(param) + "\"><tr><th>" + esc(param) +
         "</th><th>best</th><th>typical</th><th>configs</th><th>best / winner</th></tr>";
    for (auto& [value, medians] : values) {
      std::sort(medians.begin(), medians.end());
      const double b = medians.front();
      const double typical = medians[medians.size() / 2];
      const double ratio = best > 0 ? b / best : 1.0;
      char rtext[16];
      std::snprintf(rtext, sizeof rtext, "%.2fx", ratio);
      const double bar = std::clamp(120.0 / ratio, 2.0, 120.0);
      o += "<tr class=\"sens-value\" data-value=\"" + esc(value) + "\" data-best-ns=\"" + num(b) +
           "\" data-count=\"" + std::to_string(medians.size()) + "\"><td>" + esc(value) +
           "</td><td>" + esc(time_text(b)) + "</td><td>" + esc(time_text(typical)) + "</td><td>" +
           std::to_string(medians.size()) + "</td><td><svg width=\"124\" height=\"10\">" +
           "<rect class=\"sens-bar\" x=\"0\" y=\"1\" height=\"8\" width=\"" + px(bar) +
           "\"/></svg> " + rtext + "</td></tr>";
    }
    o += "</table>";
  }
  if (!o.empty()) o += "</div>";
  return o;
}

// The key's section opening: its identity as data attributes, the winner, the margin to the
// runner-up, and what was tried.
std::string key_summary_html(const ReportKey& k, std::size_t index, const ConfigResult* win,
                             const ConfigResult* runner_up, std::size_t failed) {
  const TuningReport& r = k.report;
  std::string o = "<section class=\"key\" id=\"key-" + std::to_string(index) + "\" data-kernel=\"" +
                  esc(r.kernel) + "\" data-key=\"" + esc(r.key) + "\" data-device=\"" +
                  esc(r.device) + "\" data-winner=\"" +
                  esc(win != nullptr ? win->config.to_string() : "") + "\" data-candidates=\"" +
                  std::to_string(r.results.size()) + "\" data-failed=\"" + std::to_string(failed) +
                  "\" data-measured=\"" + (k.measured ? "true" : "false") + "\">";
  o += "<h2>" + esc(r.kernel) + " <span class=\"keytext\">" + esc(r.key) + "</span></h2>";
  o += "<dl class=\"summary\">";
  if (win != nullptr) {
    o += "<dt>winner</dt><dd class=\"winner\"><code>" + esc(win->config.to_string()) + "</code> " +
         esc(time_text(win->stats.median)) + "</dd>";
    if (runner_up != nullptr) {
      char m[32];
      std::snprintf(m, sizeof m, "%+.1f%%",
                    100.0 * (runner_up->stats.median / win->stats.median - 1));
      o += "<dt>margin</dt><dd class=\"margin\" data-runner-up=\"" +
           esc(runner_up->config.to_string()) + "\">runner-up <code>" +
           esc(runner_up->config.to_string()) + "</code> is " + m + " slower</dd>";
    }
  } else {
    o += "<dt>winner</dt><dd class=\"winner none\">none: " + esc(r.status.to_string()) + "</dd>";
  }
  o += "<dt>candidates</dt><dd>" + std::to_string(r.results.size()) + " timed or tried, " +
       std::to_string(r.pruned) + " pruned, " + std::to_string(failed) + " failed" +
       (r.partial ? ", partial (tuning budget)" : "") + "</dd>";
  o += "<dt>source</dt><dd>" + esc(std::string(to_string(r.source))) +
       (k.measured ? ", tuned in " + esc(ms_text(r.wall_ms))
                   : " (the cache keeps no racing, compile or time breakdown)") +
       "</dd>";
  o += "<dt>device</dt><dd>" + esc(r.device) + "</dd>";
  if (!k.toolchain.empty()) o += "<dt>toolchain</dt><dd>" + esc(k.toolchain) + "</dd>";
  if (const auto& d = k.decision) {
    o += "<dt>decision</dt><dd class=\"decision\" data-runner-up=\"" + esc(d->runner_up) +
         "\" data-margin=\"" + num_or_nan(d->margin) + "\" data-confidence=\"" +
         num_or_nan(d->confidence) + "\" data-timing=\"" + esc(d->timing) +
         "\" data-sustained-turns=\"" + std::to_string(d->sustained_turns) + "\" data-libtune=\"" +
         esc(d->library_version) + "\" data-decided=\"" + std::to_string(d->unix_time) +
         "\" data-tunings=\"" + std::to_string(d->tunings) + "\" data-flips=\"" +
         std::to_string(d->flips) + "\">" + esc(decision_summary(*d)) + "</dd>";
  }
  o += "</dl>";

  return o;
}

// The configurations, fastest first, then the failures, each with its distribution strip.
std::string candidates_html(const ReportKey& k, const std::vector<const ConfigResult*>& ok,
                            const std::vector<const ConfigResult*>& failed, const Config& winner,
                            bool has_winner) {
  std::string o;
  LogScale sc;
  sc.width = 260;
  sc.lo = kInf;
  sc.hi = 0;
  for (const ConfigResult* c : ok) {
    sc.lo = std::min(sc.lo, c->stats.min > 0 ? c->stats.min : c->stats.median);
    sc.hi = std::max(sc.hi, std::max(c->stats.max, c->stats.median));
  }
  o += "<h3>Configurations</h3><table class=\"cands\"><thead><tr><th data-sort=\"rank\">#</th>"
       "<th data-sort=\"config\">configuration</th><th data-sort=\"median\">median</th>"
       "<th>p20 &ndash; p80</th><th>min &ndash; max</th><th data-sort=\"n\">n</th>";
  if (k.measured) o += "<th data-sort=\"compile\">compile</th>";
  o += "<th>state</th><th>output</th><th>distribution (log scale)</th></tr></thead><tbody>";
  std::size_t rank = 0;
  for (const ConfigResult* c : ok) {
    ++rank;
    const char* state = state_of(*c, winner, has_winner);
    const std::string verification(to_string(c->verification()));
    const SampleStats& s = c->stats;
    o += "<tr class=\"cand " + std::string(state) + "\" data-rank=\"" + std::to_string(rank) +
         "\" data-config=\"" + esc(c->config.to_string()) + "\" data-state=\"" + state +
         "\" data-median-ns=\"" + num(s.median) + "\" data-p20-ns=\"" + num(s.p20) +
         "\" data-p80-ns=\"" + num(s.p80) + "\" data-min-ns=\"" + num(s.min) + "\" data-max-ns=\"" +
         num(s.max) + "\" data-n=\"" + std::to_string(s.count) + "\" data-compile-ms=\"" +
         num(c->compile_ms) + "\" data-verification=\"" + verification + "\">";
    o += "<td>" + std::to_string(rank) + "</td><td><code>" + esc(c->config.to_string()) +
         "</code></td><td>" + esc(time_text(s.median)) + "</td><td>" + esc(time_text(s.p20)) +
         " &ndash; " + esc(time_text(s.p80)) + "</td><td>" + esc(time_text(s.min)) + " &ndash; " +
         esc(time_text(s.max)) + "</td><td>" + std::to_string(s.count) + "</td>";
    if (k.measured) o += "<td>" + esc(ms_text(c->compile_ms)) + "</td>";
    o += "<td>" + std::string(state) + "</td>" + output_cell(verification) + "<td>" +
         strip_svg(s, sc, state) + "</td></tr>";
  }
  for (const ConfigResult* c : failed) {
    const std::string verification(to_string(c->verification()));
    o += "<tr class=\"cand failed\" data-rank=\"" + std::to_string(rank) + "\" data-config=\"" +
         esc(c->config.to_string()) +
         "\" data-state=\"failed\" data-median-ns=\"inf\" "
         "data-n=\"0\" data-compile-ms=\"" +
         num(c->compile_ms) + "\" data-verification=\"" + verification + "\"><td>" +
         std::to_string(rank) + "</td><td><code>" + esc(c->config.to_string()) +
         "</code></td><td>-</td><td>-</td><td>-</td><td>0</td>";
    if (k.measured) o += "<td>" + esc(ms_text(c->compile_ms)) + "</td>";
    o += "<td>failed</td>" + output_cell(verification) + "<td class=\"reason\">" +
         esc(std::string(to_string(c->status.code()))) + "</td></tr>";
  }
  o += "</tbody></table>";

  return o;
}

// Each failure with its code and message.
std::string failures_html(const std::vector<const ConfigResult*>& failed) {
  std::string o;
  if (!failed.empty()) {
    o += "<h3>Failures</h3><ul class=\"failures\">";
    for (const ConfigResult* c : failed) {
      o += "<li class=\"failure\" data-config=\"" + esc(c->config.to_string()) + "\" data-code=\"" +
           esc(std::string(to_string(c->status.code()))) + "\"><code>" +
           esc(c->config.to_string()) + "</code>: <b>" +
           esc(std::string(to_string(c->status.code()))) + "</b> <span class=\"reason\">" +
           esc(c->status.message()) + "</span></li>";
    }
    o += "</ul>";
  }
  return o;
}

std::string key_html(const ReportKey& k, std::size_t index) {
  const TuningReport& r = k.report;
  std::vector<const ConfigResult*> ok, failed;
  for (const auto& c : r.results) (ok_row(c) ? ok : failed).push_back(&c);
  std::stable_sort(ok.begin(), ok.end(), [](const ConfigResult* a, const ConfigResult* b) {
    return a->stats.median < b->stats.median;
  });
  const bool has_winner = !ok.empty() && r.status.ok();
  const Config winner = r.winner;
  const ConfigResult* win = nullptr;
  for (const ConfigResult* c : ok)
    if (has_winner && c->config == winner) win = c;
  const ConfigResult* runner_up = nullptr;
  for (const ConfigResult* c : ok)
    if (c != win) {
      runner_up = c;
      break;
    }

  std::string o = key_summary_html(k, index, win, runner_up, failed.size());
  if (k.measured) {
    o += times_html(r);
    o += progress_html(k.progress);
    o += convergence_html(r);
  }

  o += candidates_html(k, ok, failed, winner, has_winner);
  o += failures_html(failed);
  if (win != nullptr) o += sensitivity_html(ok, win->stats.median);
  o += "</section>";
  return o;
}

// Per kernel and device with several keys: each winning configuration's median relative to
// the best at each key (1.00 = it wins there).
std::string heatmap_html(const std::vector<ReportKey>& keys) {
  std::map<std::pair<std::string, std::string>, std::vector<const TuningReport*>> groups;
  for (const auto& k : keys) groups[{k.report.kernel, k.report.device}].push_back(&k.report);
  std::string o;
  for (const auto& [group, reports] : groups) {
    if (reports.size() < 2) continue;
    std::vector<std::string> winners;
    for (const TuningReport* r : reports) {
      if (!r->status.ok()) continue;
      const std::string w = r->winner.to_string();
      if (std::find(winners.begin(), winners.end(), w) == winners.end()) winners.push_back(w);
    }
    if (winners.empty()) continue;
    if (o.empty()) o = "<section class=\"across\"><h2>Winners across keys</h2>";
    o += "<p>" + esc(group.first) + " on " + esc(group.second) +
         ": each winning configuration's median relative to the best of the key.</p>";
    o += "<table class=\"heat\" data-kernel=\"" + esc(group.first) + "\"><tr><th>key</th>";
    for (const auto& w : winners) o += "<th><code>" + esc(w) + "</code></th>";
    o += "</tr>";
    for (const TuningReport* r : reports) {
      double best = kInf;
      for (const auto& c : r->results)
        if (ok_row(c)) best = std::min(best, c.stats.median);
      o += "<tr data-key=\"" + esc(r->key) + "\" data-winner=\"" +
           esc(r->status.ok() ? r->winner.to_string() : "") + "\"><th>" + esc(r->key) + "</th>";
      for (const auto& w : winners) {
        double t = kInf;
        for (const auto& c : r->results)
          if (ok_row(c) && c.config.to_string() == w) t = c.stats.median;
        if (!std::isfinite(t) || !std::isfinite(best)) {
          o += "<td class=\"cell none\" data-ratio=\"inf\">-</td>";
          continue;
        }
        const double ratio = t / best;
        // Green at 1.0 to red at 2.0 and beyond.
        const double hue = 120.0 * (1.0 - std::clamp(ratio - 1.0, 0.0, 1.0));
        char cell[160];
        std::snprintf(cell, sizeof cell,
                      "<td class=\"cell%s\" data-ratio=\"%s\" style=\"background:hsl(%.0f,70%%,"
                      "72%%)\">%.2f</td>",
                      ratio == 1.0 ? " win" : "", num(ratio).c_str(), hue, ratio);
        o += cell;
      }
      o += "</tr>";
    }
    o += "</table>";
  }
  if (!o.empty()) o += "</section>";
  return o;
}

// Per kernel with a decision record on any key: its flip rate, the share of re-tunings that
// picked another winner than the one before (FlipTally over its keys' latest records).
std::string flips_html(const std::vector<ReportKey>& keys) {
  std::map<std::string, FlipTally> by_kernel;
  for (const auto& k : keys)
    if (k.decision) by_kernel[k.report.kernel].add(*k.decision);
  if (by_kernel.empty()) return {};
  std::string o =
      "<section class=\"stability\"><h2>Decision stability</h2><p>Per kernel: re-tunings of "
      "its keys that picked another winner than the one before.</p><table class=\"flips\">"
      "<tr><th>kernel</th><th>flips</th><th>re-tunings</th><th>flip rate</th></tr>";
  for (const auto& [kernel, t] : by_kernel) {
    char rate[32] = "-";
    if (t.retunings > 0) std::snprintf(rate, sizeof rate, "%.0f%%", 100.0 * t.rate());
    o += "<tr data-kernel=\"" + esc(kernel) + "\" data-flips=\"" + std::to_string(t.flips) +
         "\" data-retunings=\"" + std::to_string(t.retunings) + "\" data-flip-rate=\"" +
         num_or_nan(t.rate()) + "\"><th>" + esc(kernel) + "</th><td>" + std::to_string(t.flips) +
         "</td><td>" + std::to_string(t.retunings) + "</td><td>" + rate + "</td></tr>";
  }
  return o + "</table></section>";
}

const char* const kStyle = R"CSS(
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#1d2330;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 6px;border-top:1px solid #ccd;padding-top:14px}
h3{font-size:14px;margin:14px 0 4px;color:#445}.keytext{font-weight:normal;color:#556;font-family:monospace;font-size:14px}
table{border-collapse:collapse;margin:4px 0}td,th{padding:2px 8px;text-align:left;border-bottom:1px solid #e4e6ee;vertical-align:middle}
th{background:#f3f4f8;font-weight:600}th[data-sort]{cursor:pointer}code{font-size:12px}
dl.summary{display:grid;grid-template-columns:max-content auto;gap:2px 12px;margin:6px 0}dt{color:#667}dd{margin:0}
tr.winner td{background:#e3f6e5;font-weight:600}tr.raced-out td{color:#8a8f9c}tr.settled td{color:#2c5aa0}
tr.failed td{color:#b3261e}tr.stored td{color:#555}
td.output.verified{color:#2e7d32}tr td.output.not_checked{color:#8a6d00;font-style:italic}td.output.wrong_output{color:#b3261e;font-weight:600}
svg.strip line.range{stroke:#8a8f9c;stroke-width:1}svg.strip rect.band{fill:#7aa7e0}svg.strip line.median{stroke:#1d2330;stroke-width:2}
svg.strip.winner rect.band{fill:#3c9a4b}svg.strip.raced-out rect.band{fill:#c9ccd6}svg.strip.settled rect.band{fill:#9bb8e8}
.part-candidates{fill:#9c6ade;background:#9c6ade}.part-store{fill:#c9a227;background:#c9a227}.part-compile{fill:#e07b39;background:#e07b39}
.part-verify{fill:#d64f6a;background:#d64f6a}.part-benchmark{fill:#3c9a4b;background:#3c9a4b}.part-strategy{fill:#2c7fb8;background:#2c7fb8}
.part-overhead{fill:#8a8f9c;background:#8a8f9c}.swatch{display:inline-block;width:10px;height:10px;margin-right:6px}
svg.best-so-far path.best,svg.convergence path.best{fill:none;stroke:#2c7fb8;stroke-width:2}svg.best-so-far circle,svg.convergence circle{fill:#2c7fb8}
svg.best-so-far path.count{fill:none;stroke-width:1.5;stroke-dasharray:4 2}path.compiled{stroke:#e07b39}path.timed{stroke:#3c9a4b}path.raced{stroke:#8a8f9c}
.swatch.best{background:#2c7fb8}.swatch.compiled{background:#e07b39}.swatch.timed{background:#3c9a4b}.swatch.raced{background:#8a8f9c}
p.legend{font-size:12px;color:#556;margin:0}td{white-space:nowrap}td.reason{white-space:normal}
svg.best-so-far line.axis,svg.convergence line.axis{stroke:#667}svg text{font-size:11px;fill:#445}
.sensitivity{display:flex;flex-wrap:wrap;gap:16px}rect.sens-bar{fill:#7aa7e0}
ul.failures li{margin:2px 0}.reason{color:#6b3a36;font-size:12px;white-space:pre-wrap}
table.heat td.cell{text-align:center;min-width:70px}table.heat td.win{font-weight:700}
footer{margin-top:32px;color:#889;font-size:12px}
)CSS";

// Sorts a candidates table by a clicked header; marks the page rendered (tests read it).
const char* const kScript = R"JS(
document.addEventListener('DOMContentLoaded', function () {
  document.querySelectorAll('table.cands').forEach(function (t) {
    t.querySelectorAll('th[data-sort]').forEach(function (th) {
      th.addEventListener('click', function () {
        var k = th.dataset.sort, body = t.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        var val = function (r) {
          var v = r.dataset[k === 'median' ? 'medianNs' : k === 'compile' ? 'compileMs' : k];
          var n = v === 'inf' ? Infinity : parseFloat(v);
          return isNaN(n) ? v : n;
        };
        rows.sort(function (a, b) { var x = val(a), y = val(b); return x < y ? -1 : x > y ? 1 : 0; });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  document.body.dataset.rendered = String(document.querySelectorAll('tr.cand').length);
});
)JS";

std::string now_text() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  char buf[32];
  if (::gmtime_r(&t, &tm) == nullptr ||
      std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm) == 0)
    return "";
  return buf;
}

}  // namespace

std::string html_report(const ReportInput& in) {
  std::string o = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  o += "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">";
  o += "<title>" + esc(in.title) + "</title><style>" + kStyle + "</style><script>" + kScript +
       "</script></head><body>";
  o += "<h1>" + esc(in.title) + "</h1>";
  o += "<table class=\"identity\">";
  for (const auto& [name, value] : in.identity)
    o += "<tr data-field=\"" + esc(name) + "\"><th>" + esc(name) + "</th><td>" + esc(value) +
         "</td></tr>";
  o += "</table>";
  if (in.keys.empty()) o += "<p class=\"empty\">No tuning results.</p>";
  o += "<nav><ul>";
  for (std::size_t i = 0; i < in.keys.size(); ++i)
    o += "<li><a href=\"#key-" + std::to_string(i) + "\">" + esc(in.keys[i].report.kernel) + " " +
         esc(in.keys[i].report.key) + "</a></li>";
  o += "</ul></nav>";
  for (std::size_t i = 0; i < in.keys.size(); ++i) o += key_html(in.keys[i], i);
  o += heatmap_html(in.keys);
  o += flips_html(in.keys);
  o += "<footer>libtune " + esc(std::string(kVersion)) + ", " + esc(now_text()) +
       ". Times are medians of timed launches; bands are p20 to p80, whiskers min to max."
       "</footer></body></html>\n";
  return o;
}

std::vector<ReportKey> report_keys_from_rows(std::span<const CacheRow> rows) {
  std::vector<ReportKey> out;
  auto same = [](const StoreKey& a, const StoreKey& b) {
    return std::tie(a.kernel, a.source_hash, a.key, a.device, a.toolchain) ==
           std::tie(b.kernel, b.source_hash, b.key, b.device, b.toolchain);
  };
  std::vector<StoreKey> keys;
  for (const CacheRow& row : rows) {
    std::size_t i = 0;
    while (i < keys.size() && !same(keys[i], row.key)) ++i;
    if (i == keys.size()) {
      keys.push_back(row.key);
      ReportKey k;
      k.report.kernel = row.key.kernel;
      k.report.key = row.key.key;
      k.report.device = row.key.device;
      k.report.source = ResultSource::disk;
      k.toolchain = row.key.toolchain;
      k.report.status = Status(StatusCode::not_found, "no stored configuration succeeded");
      out.push_back(std::move(k));
    }
    TuningReport& r = out[i].report;
    const StoredResult& s = row.result;
    ConfigResult c;
    auto parsed = Config::parse(s.config);
    if (parsed.ok()) c.config = *parsed;
    c.status = s.status == StatusCode::ok ? Status() : Status(s.status, s.reason);
    c.stats = s.stats;
    if (!c.status.ok()) c.stats.median = kInf;
    c.from_store = true;
    c.verified = s.verified;
    if (auto& d = out[i].decision; s.decision && (!d || s.decision->unix_time > d->unix_time))
      d = s.decision;
    if (ok_row(c)) {
      bool best = true;
      for (const auto& o : r.results)
        if (ok_row(o) && o.stats.median <= c.stats.median) best = false;
      if (best) {
        r.winner = c.config;
        r.status = Status();
      }
    }
    r.results.push_back(std::move(c));
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> report_identity(const DeviceInfo& info) {
  return {{"device", info.name},
          {"backend", info.backend},
          {"vendor", info.vendor},
          {"architecture", info.arch},
          {"driver", info.driver_version},
          {"compiler", info.compiler_version},
          {"fingerprint", info.fingerprint()},
          {"toolchain", info.toolchain_fingerprint()},
          {"host", host_os_text()},
          {"libtune", std::string(kVersion)}};
}

}  // namespace tune::cli
