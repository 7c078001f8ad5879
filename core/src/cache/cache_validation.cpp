// Validation of stored rows against a kernel's declared space. See tune/cache_validation.hpp.
#include "cache/cache_validation.hpp"

#include <set>
#include <utility>

#include "cache/row_rules.hpp"
#include "tune/log.hpp"

namespace tune {
namespace {

// Why `c` is not a point of a product space, naming the first offending parameter; empty when
// every parameter is declared, typed and within its domain (then the mismatch is elsewhere:
// a missing parameter or launch options that differ from the derived ones).
std::string product_mismatch(const Config& c, const ConfigSpace& space) {
  for (const auto& [name, value] : c.params()) {
    const ConfigSpace::Dimension* dim = nullptr;
    for (const auto& d : space.dimensions()) {
      if (d.name == name) {
        dim = &d;
        break;
      }
    }
    if (dim == nullptr) return "parameter '" + name + "' is not declared";
    if (dim->values.empty()) return "parameter '" + name + "' has an empty domain";
    ValueType want = type_of(dim->values.front());
    ValueType got = type_of(value);
    if (got != want) {
      return "parameter '" + name + "' is " + std::string(to_string(got)) + " " +
             value_to_text(value) + ", declared " + std::string(to_string(want));
    }
    bool in_domain = false;
    for (const Value& v : dim->values) in_domain = in_domain || v == value;
    if (!in_domain)
      return "parameter '" + name + "' = " + value_to_text(value) + " is not in its domain";
  }
  return {};
}

}  // namespace

Status check_point(const Config& c, const ConfigSpace& space, const Config* heuristic_values) {
  const Config* point = &c;
  Config rest;
  if (heuristic_values != nullptr && !heuristic_values->params().empty()) {
    // Heuristic parameters are not dimensions of the space: each must hold exactly the value
    // this call computed; the rest must be a point of the space.
    rest.launch() = c.launch();
    for (const auto& [name, value] : c.params()) {
      if (const Value* want = heuristic_values->find(name)) {
        if (*want != value) {
          return Status(StatusCode::invalid_argument,
                        "heuristic parameter '" + name + "' = " + value_to_text(value) +
                            ", this call computes " + value_to_text(*want));
        }
      } else {
        rest.set(name, value);
      }
    }
    for (const auto& [name, value] : heuristic_values->params()) {
      if (!c.has(name))
        return Status(StatusCode::invalid_argument,
                      "heuristic parameter '" + name + "' is missing");
    }
    point = &rest;
  }
  // ConfigSpace::contains is the authority (it knows derived parameters and launch options);
  // the per-parameter look only explains a rejection.
  if (space.contains(*point)) return {};
  std::string why = space.is_list() ? std::string() : product_mismatch(*point, space);
  if (why.empty()) {
    why = space.is_list() ? "not in the kernel's config list"
                          : "not a point of the kernel's config space";
  }
  return Status(StatusCode::invalid_argument, why);
}

Result<ValidatedRow> validate_row(const StoredResult& row, const ConfigSpace& space,
                                  const Config* heuristic_values) {
  std::string canonical;
  Status st = check_stored_row(row, &canonical);
  if (!st.ok()) return st;
  Result<Config> parsed = Config::parse(canonical);
  if (!parsed.ok()) return parsed.status();
  TUNE_RETURN_IF_ERROR(check_point(*parsed, space, heuristic_values));
  ValidatedRow out{std::move(*parsed), row};
  out.row.config = std::move(canonical);
  return out;
}

std::vector<ValidatedRow> validate_rows(std::span<const StoredResult> rows,
                                        const ConfigSpace& space, std::string_view kernel,
                                        const Config* heuristic_values) {
  std::vector<ValidatedRow> out;
  out.reserve(rows.size());
  std::set<std::string> seen;
  std::vector<std::string> reasons;
  for (const StoredResult& r : rows) {
    Result<ValidatedRow> v = validate_row(r, space, heuristic_values);
    if (!v.ok()) {
      reasons.push_back("config '" + r.config + "': " + v.status().message());
      continue;
    }
    if (!seen.insert(v->row.config).second) continue;
    out.push_back(std::move(*v));
  }
  warn_ignored("kernel " + std::string(kernel), reasons, "stored result",
               " that do not fit its config space");
  return out;
}

void warn_ignored(const std::string& where, const std::vector<std::string>& reasons,
                  const std::string& noun, const std::string& tail) {
  if (reasons.empty()) return;
  std::string msg = where + ": ignored " + std::to_string(reasons.size()) + " " + noun +
                    (reasons.size() == 1 ? "" : "s") + tail + ": ";
  constexpr std::size_t kShown = 3;
  for (std::size_t i = 0; i < reasons.size() && i < kShown; ++i) {
    if (i > 0) msg += "; ";
    msg += reasons[i];
  }
  if (reasons.size() > kShown) msg += "; ...";
  log_warning(msg);
}

}  // namespace tune
