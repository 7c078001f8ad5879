// The judge of `tune-lab stability --quality` (issue 15): the picks that a tuning made, timed
// head to head against the reference's fastest candidates, so that a pick is called wrong on
// what the GPU does when the two run in the same minute, not on the exhaustive reference, whose
// passes minutes apart move by 2-11% on a hot, power-limited H200 (2026-12-02, 5eb395d^,
// 8b2343a) and so cannot tell 2% apart by themselves.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "stability_reference.hpp"

namespace tune::cli {

// The contenders for one key: every distinct pick (a key of `winners`) and the `top` fastest
// candidates of `reference` (config text -> ns), ordered by reference time, picks missing from
// the reference last (in text order). Pure.
std::vector<std::string> judge_contenders(const std::map<std::string, int>& winners,
                                          const std::map<std::string, double>& reference, int top);

// The contenders timed head to head.
struct HeadToHead {
  // Each contender's turn medians in ns, one per round, in round order (NaN where its turn
  // failed). Rounds come in pairs, an order forward and the same reversed backward, the order
  // turned each pair (alternating_turns), so a clock that drifts over a pair favours nobody,
  // and a clock that dips in step with the pairs does not always hit the same contender.
  std::map<std::string, std::vector<double>> rounds;
  // Each contender's mean over its pairs of rounds (pair_means); missing when a turn failed.
  std::map<std::string, double> ns;
  // The largest difference between one contender's pair means over its mean among those within
  // 5% of the fastest (pass_spread over the pairs): the judge's own noise.
  double pair_spread = 0;
  // A pick's time over the fastest contender's; NaN for a pick the judge has no time for.
  double ratio(const std::string& pick) const;
  // A one-sided `confidence` lower bound of how much slower the pick is, from its pairs: the
  // mean of the pick's per-pair ratios to the fastest contender (pair_means; close to, not the
  // same as, ratio(), a ratio of means) less Student's t (pairs - 1 degrees of freedom) times
  // their standard error. Pairs, not rounds: a pick's two turns of one pair can sit side by
  // side (last forward, first backward), so they are not two independent measurements. A pick
  // is shown to be more than x slower only when this exceeds 1 + x; the judge's own noise
  // (pair_spread) is what separates the two. 1 for the fastest itself; NaN without a time or
  // with fewer than two pairs.
  double ratio_lower(const std::string& pick, double confidence) const;
};

// Each contender's mean of each pair of rounds (round 2j and 2j+1), by contender; a contender
// with a failed turn (NaN) has none. Pure.
std::map<std::string, std::vector<double>> pair_means(
    const std::map<std::string, std::vector<double>>& rounds);

// Times `contenders` (texts of configurations in `c`) in `pairs` forward/backward pairs of
// rounds, their orders from `seed`; in each round every contender runs one sustained turn of
// `turn_ms` (alternating_turns), so each one's clock follows its own draw, as in the tuner's
// sustained turns and the reference. A contender without a compiled kernel, or whose turn
// fails, has NaN rounds. Blocks. Fails only when the device is lost.
Result<HeadToHead> head_to_head(Device& dev, const Candidates& c,
                                const std::vector<std::string>& contenders, double turn_ms,
                                int pairs, std::uint64_t seed);

}  // namespace tune::cli
