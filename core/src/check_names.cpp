// check_names (definitions.hpp): parameter names that would not reach the kernel as the user
// meant, refused before any compile. Each becomes a macro; a clash would make the kernel see
// libtune's value instead of the parameter's, rewrite an argument's declaration, or let one
// parameter silently overwrite another.
#include <set>
#include <string>
#include <vector>

#include "identifier.hpp"
#include "tune/definitions.hpp"
#include "tune/kernel.hpp"

namespace tune {
namespace {

// A parameter name and where it was declared, for messages.
struct Named {
  std::string name;
  std::string origin;  // "parameter 'BM'", "heuristic parameter 'SPLIT'", ...
};

// Why `p` may not be a macro name of this kernel, or empty.
std::string clash(const Named& p, const KernelSignature& sig) {
  if (is_reserved_name(p.name)) {
    // Name the libtune definition it would shadow when there is one.
    for (std::string_view launch : {kBlockX, kBlockY, kBlockZ, kNumWarps, kNumStages, kMaxRegisters,
                                    kSharedBytes, kSubgroupSize}) {
      if (p.name == launch_option_macro(launch)) {
        return p.origin + " has the name of libtune's definition " + p.name +
               " (the launch option " + std::string(launch) + "); names starting with " +
               std::string(kReservedPrefix) + " are reserved for libtune";
      }
    }
    return p.origin + " starts with " + std::string(kReservedPrefix) +
           ", the prefix reserved for libtune's own definitions (TUNE_BLOCK_X, TUNE_NUM_STAGES, "
           "TUNE_WARP_SIZE, ...)";
  }
  const int arg = sig.index_of(p.name);
  if (arg >= 0) {
    return p.origin + " has the name of kernel argument " + std::to_string(arg) + " '" + p.name +
           "': as a macro it would rewrite the argument's declaration";
  }
  return {};
}

}  // namespace

Status check_names(const KernelDef& def) {
  auto bad = [](const std::string& msg) { return Status(StatusCode::invalid_argument, msg); };
  std::vector<Named> params;
  std::set<std::string> space_names;  // every name the space sets, launch options included
  const ConfigSpace& space = def.space;
  auto add_config = [&](const Config& c, const std::string& origin) {
    for (const auto& [name, value] : c.params()) {
      if (space_names.insert(name).second) params.push_back({name, origin + " '" + name + "'"});
    }
  };
  if (space.is_list()) {
    for (std::uint64_t i = 0; i < space.raw_size(); ++i)
      add_config(space.at(i), "parameter of config list entry " + std::to_string(i));
  } else {
    for (const auto& d : space.dimensions()) {
      if (!space_names.insert(d.name).second) continue;  // validate() reports duplicates
      if (!is_launch_option_name(d.name)) params.push_back({d.name, "parameter '" + d.name + "'"});
    }
    // derive may add parameters of its own: those of the first point.
    if (space.raw_size() > 0) add_config(space.at(0), "parameter set by derive");
  }
  for (const auto& p : params) {
    if (std::string why = clash(p, def.signature); !why.empty()) return bad(why);
  }

  std::set<std::string> heuristic_names;
  for (const auto& h : def.heuristics) {
    const Named p{h.param, "heuristic parameter '" + h.param + "'"};
    if (!detail::is_identifier(h.param) && !is_launch_option_name(h.param))
      return bad(p.origin + " is neither an identifier nor a launch option name");
    if (space_names.count(h.param) != 0) {
      return bad(p.origin + " is also a parameter of the config space '" + h.param +
                 "': the heuristic would overwrite the tuned value");
    }
    if (!heuristic_names.insert(h.param).second)
      return bad(p.origin + " is set by two heuristics: the second would overwrite the first");
    if (is_launch_option_name(h.param)) continue;  // a launch option, not a macro
    if (std::string why = clash(p, def.signature); !why.empty()) return bad(why);
  }
  return Status::ok_status();
}

}  // namespace tune
