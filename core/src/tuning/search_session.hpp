// One key's tuning by a SearchStrategy (KernelDef::search): the strategy proposes points, each
// evaluated once (stored timing, or compile + verify + time), and the Autotuner, not the
// strategy, keeps the books: it enforces the evaluation and time budgets (a user strategy
// cannot exceed them), and picks the winner from what it measured. Internal to the core.
#pragma once

#include "session.hpp"

namespace tune::detail {

Result<Selection> search_one_key(const SessionContext& ctx, Device& dev, ArgList args,
                                 const KeyForms& forms, const KernelSource& src,
                                 TuningReport& report);

}  // namespace tune::detail
