// A search that evaluates given points first, then runs a strategy: how every search of the
// Autotuner starts from the configuration the kernel would run untuned (the first candidate,
// candidates.hpp), so a search never ends worse than not tuning at all.
//
// The seeds are evaluated in order (points the constraints reject, and repeats, are skipped),
// each counted against the budget; then `inner` runs. A point the inner strategy proposes
// again is answered from the seeds' values without calling the objective a second time, so no
// point is evaluated twice; since the inner strategy counts such answers against its budget,
// it is given the whole budget, and the caller stops the search once `max_evaluations`
// objective calls are made (SearchSession does, for every strategy). The result's history holds
// every objective call in call order; name() is the inner strategy's. Internal to the core.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "tune/search.hpp"

namespace tune::detail {

// `seeds`: indices of points of the space the search is given (ConfigSpace::at).
std::shared_ptr<const SearchStrategy> seeded_search(std::shared_ptr<const SearchStrategy> inner,
                                                    std::vector<std::uint64_t> seeds);

}  // namespace tune::detail
