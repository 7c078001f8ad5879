// Wire: what ranks send each other, as text blobs for Exchange. A Decision is the outcome of
// one key (the winner and the results that decided it, or the error that stopped it); a
// Measured is one rank's share of a key's candidates (its results, or its error).
//
// Format: fields in order, each a decimal length, ':' and the bytes (numbers as their
// shortest round-trip decimal text); a blob that does not parse is data_loss naming what it
// was. Sent only between ranks of one job (the same build), so there is no version field.
#pragma once

#include <string>
#include <vector>

#include "tune/autotuner.hpp"

namespace tune::mpi::detail {

struct Decision {
  Status status;                       // ok, or why the key has no winner (code and message travel)
  Config config;                       // the winner when ok
  std::vector<ConfigResult> results;   // what decided it (may be empty: a memory hit)
  std::vector<std::string> finalists;  // share_space: configs re-timed on the leader
};

std::string encode(const Decision& d);
Result<Decision> decode_decision(const std::string& blob, const std::string& what);

// One rank's results (or its error) for a share of candidates.
std::string encode_results(const Status& status, const std::vector<ConfigResult>& results);
Result<std::vector<ConfigResult>> decode_results(const std::string& blob, const std::string& what);

// A list of texts as one blob, and back.
std::string encode_texts(const std::vector<std::string>& texts);
Result<std::vector<std::string>> decode_texts(const std::string& blob, const std::string& what);

}  // namespace tune::mpi::detail
