// Checking rows read back from a TuningStore against the kernel's declared space.
//
// A stored row is data from outside the process: another libtune version, another program,
// a hand-edited or imported file. Nothing from it may reach a compiler unless it is a
// declared parameter's value of the declared type. The Autotuner calls validate_rows() on
// what TuningStore::load() returns, before using any row:
//
//   auto rows = validate_rows(store->load(skey), def.space, def.name, &heuristic_values);
//   for (const ValidatedRow& r : rows) { /* r.config is a point of def.space */ }
//
// Rejected rows are logged in one warning per call that names the kernel, counts them and
// gives the first few reasons; they are never returned.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tune/config.hpp"
#include "tune/config_space.hpp"
#include "tune/status.hpp"
#include "tune/store.hpp"

namespace tune {

struct ValidatedRow {
  Config config;     // parsed, a point of the space
  StoredResult row;  // row.config holds config.to_string() (canonical text)
};

// Checks one row: the config parses; every parameter is declared, of the declared type and
// within its domain; the whole config is a point of the space (ConfigSpace::contains); the
// statistics of an ok row are sane. invalid_argument / data_loss naming the problem.
//
// `heuristic_values`: for a kernel with heuristics (KernelDef::heuristics), the parameters
// this call computed. A stored config must hold exactly these values for them (they are part
// of the key anyway); they are set aside before the space check, since they are not
// dimensions of the space. Null or empty: every parameter must belong to the space.
// Whether `c` is a point of `space` once the heuristic parameters are set aside (each must
// hold exactly the value in `heuristic_values`). Also checks what early_prune returns. The
// message names the first offending parameter.
Status check_point(const Config& c, const ConfigSpace& space,
                   const Config* heuristic_values = nullptr);

Result<ValidatedRow> validate_row(const StoredResult& row, const ConfigSpace& space,
                                  const Config* heuristic_values = nullptr);

// The rows that pass validate_row, in input order; the rest are dropped with one warning
// naming `kernel`. A config that appears twice keeps its first row.
std::vector<ValidatedRow> validate_rows(std::span<const StoredResult> rows,
                                        const ConfigSpace& space, std::string_view kernel,
                                        const Config* heuristic_values = nullptr);

// Logs one warning for the rows a read ignored: "<where>: ignored <n> <noun>[s]<tail>: " and
// the first few reasons. Nothing when `reasons` is empty.
void warn_ignored(const std::string& where, const std::vector<std::string>& reasons,
                  const std::string& noun, const std::string& tail = "");

}  // namespace tune
