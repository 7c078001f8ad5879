// Decision records (tune/store.hpp's DecisionRecord; docs/caches.md, "Decision records"): what
// a tuning that timed something stores with the winner it chose, and the bookkeeping that keeps
// the record on the key's latest winner only, counting the re-tunings that picked another one.
// Pure functions over a finished tuning's report and the key's stored rows; internal.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tune/autotuner.hpp"

namespace tune::detail {

// The record of `winner` (a configuration's text), `ranked` being the winner rule's order of
// report.results: the runner-up is the best-ranked other result still ok, margin and
// confidence against it; timing from report.timing_cache and report.showdown; `previous` (the
// key's last record, if any) continues the counts. None when the winner is not among the
// results, or when nothing was timed now (every result from the store: no new decision).
std::optional<DecisionRecord> record_decision(const TuningReport& report, const std::string& winner,
                                              const std::vector<std::size_t>& ranked,
                                              const std::optional<DecisionRecord>& previous,
                                              const std::string& previous_winner);

// Puts `record` on the winner's row: the one among `rows` (the rows this tuning stores), else a
// copy of its stored row added to them; and, when the key's last record was on another
// configuration's row, that row stored again without it. `stored` are the key's stored rows
// by configuration text. True when attached; false, with `rows` unchanged, when the winner has
// no row of the user's store (one of a bundle is never copied into it).
bool attach_decision(const DecisionRecord& record, const std::string& winner,
                     const std::map<std::string, StoredResult>& stored,
                     std::vector<StoredResult>& rows);

// Rows stored again without a new decision keep their stored row's record: each of `rows`
// without one takes that of its configuration's row in `stored`, if any.
void keep_decisions(const std::map<std::string, StoredResult>& stored,
                    std::vector<StoredResult>& rows);

// The configuration text and record of the stored row that carries the key's last decision;
// none when no row does.
std::optional<std::pair<std::string, DecisionRecord>> last_decision(
    const std::map<std::string, StoredResult>& stored);

}  // namespace tune::detail
