// Decision records (tune/store.hpp's DecisionRecord) as the `tune` commands show them: one line
// of text, and the flip rate of a kernel's keys (the re-tunings that picked another winner).
// Pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <string>

#include "tune/store.hpp"

namespace tune::cli {

// "margin +12.0% over BM=32, confidence 0.98, flush, libtune 0.1.0, decided 2026-12-06,
// 1 flip in 2 re-tunings" ("runner-up BM=32" without a margin, "no runner-up" without one).
std::string decision_summary(const DecisionRecord& d);

// Re-tunings of a set of keys and how many of them picked another winner than the one before.
struct FlipTally {
  std::uint64_t flips = 0;
  std::uint64_t retunings = 0;  // tunings after each key's first
  void add(const DecisionRecord& d) noexcept {
    flips += d.flips;
    retunings += d.tunings > 0 ? d.tunings - 1 : 0;
  }
  // flips / retunings; NaN when no key was re-tuned.
  double rate() const noexcept;
};

// "1 flip in 2 re-tunings" ("no re-tunings" for none).
std::string flips_text(std::uint64_t flips, std::uint64_t retunings);

}  // namespace tune::cli
