// See progress_line.hpp.
#include "progress_line.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>

#include "time_text.hpp"

namespace tune::cli {
namespace {

// The terminal's width, so that the line never wraps (a wrapped line cannot be redrawn with
// a carriage return); 80 when the terminal does not say.
std::size_t terminal_columns() {
  winsize ws{};
  if (::ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

}  // namespace

std::string progress_text(const TuningProgress& p) {
  std::string s = std::to_string(p.candidates) + " configs: " + std::to_string(p.compiled) +
                  " compiled, " + std::to_string(p.timed) + " timed, " +
                  std::to_string(p.raced_out) + " raced out, " + std::to_string(p.failed) +
                  " failed";
  if (p.stored > 0) s += ", " + std::to_string(p.stored) + " stored";
  if (std::isfinite(p.best_ns))
    s += "  best " + time_text(p.best_ns) + " {" + p.best.to_string() + "}";
  return s;
}

ProgressLine::ProgressLine(std::string text)
    : text_(std::move(text)), start_(std::chrono::steady_clock::now()) {
  if (::isatty(2) == 0) {
    std::fprintf(stderr, "%s ...\n", text_.c_str());
    return;
  }
  thread_ = std::thread([this] { draw_loop(); });
}

ProgressLine::~ProgressLine() { done(); }

void ProgressLine::update(const TuningProgress& p) {
  if (!thread_.joinable()) return;  // not a terminal: nothing is drawn
  std::string text = progress_text(p);
  std::lock_guard lock(mu_);
  counts_ = std::move(text);
}

void ProgressLine::draw_loop() {
  std::unique_lock lock(mu_);
  for (int i = 0; !stop_; ++i) {
    draw(i);
    cv_.wait_for(lock, std::chrono::milliseconds(200));
  }
  draw(0);  // the last counts (the final event may have come since the last redraw)
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
}

void ProgressLine::draw(int frame) {
  const char spin[] = {'|', '/', '-', '\\'};
  char tail[32];
  std::snprintf(tail, sizeof tail, "  %.1f s", elapsed_s());
  std::string line = std::string(1, spin[frame % 4]) + " " + text_;
  if (!counts_.empty()) line += "  " + counts_;
  const std::size_t room = terminal_columns() - 1;
  const std::string t = tail;
  if (line.size() + t.size() > room)
    line = line.substr(0, room > t.size() + 3 ? room - t.size() - 3 : 0) + "...";
  line += t;
  std::fprintf(stderr, "\r%s\033[K", line.c_str());
  std::fflush(stderr);
}

void ProgressLine::done() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

double ProgressLine::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

}  // namespace tune::cli
