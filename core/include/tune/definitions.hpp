// What a configuration means to a kernel: the one rule, the same on every backend.
//
// A variant of a kernel is compiled with its configuration's values as preprocessor
// definitions: `-DNAME=value` for CUDA (NVRTC) and HIP (hiprtc), shaderc macro definitions for
// Vulkan GLSL. definitions() below is the only place that list is made; every backend compiles
// exactly what it returns, so what it shows a user is what the kernel sees.
//
// The list, in this order:
//   1. every parameter of the Config, in the Config's own order (by name, as Config keeps them),
//      except those a CUDA/HIP template entry substitutes (see KernelSource in device.hpp);
//   2. the launch options that are set (nonzero), in the order LaunchOptions declares them:
//        TUNE_BLOCK_X, TUNE_BLOCK_Y, TUNE_BLOCK_Z   the block / workgroup size, when set; a
//                                                   block with some dimensions 0 has 1 there
//        TUNE_NUM_WARPS, TUNE_NUM_STAGES, TUNE_MAX_REGISTERS, TUNE_SHARED_BYTES
// Values are written by value_source_text(): integers in decimal, booleans 1 / 0 (so `#if FLAG`
// works in C++ and GLSL alike), strings verbatim (a string value is source text: a type name
// such as `half`, an expression).
//
// Reserved names: every name that starts with "TUNE_" belongs to libtune (the launch options
// above, TUNE_WARP_SIZE that the CUDA and HIP backends define per target, TUNE_KERNEL and the
// other helpers of the bundled kernels, and any added later). A parameter may not use that
// prefix, nor the name of a kernel argument (as a macro it would rewrite the argument's
// declaration), nor the name of another parameter or heuristic: check_names() refuses each,
// and Autotuner::make calls it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tune/config.hpp"
#include "tune/device.hpp"
#include "tune/status.hpp"

namespace tune {

struct KernelDef;  // kernel.hpp

// Every name that starts with this prefix is reserved for libtune's own definitions.
inline constexpr std::string_view kReservedPrefix = "TUNE_";
bool is_reserved_name(std::string_view name) noexcept;

// The macro name libtune defines for a launch option ("block.x" -> "TUNE_BLOCK_X",
// "num_stages" -> "TUNE_NUM_STAGES"); empty for a name that is not a launch option.
std::string_view launch_option_macro(std::string_view launch_name) noexcept;

// One preprocessor definition: `#define name value`.
struct Definition {
  std::string name;
  std::string value;
  friend bool operator==(const Definition&, const Definition&) = default;
};

// A configuration value as kernel source text: integers in decimal, booleans 1 / 0, strings
// verbatim. The one spelling of every definition (1 / 0 so that `#if FLAG` works in GLSL too).
std::string value_source_text(const Value& v);

// The template instantiation a CUDA/HIP entry names for `config` ("scale<EPT, NEG, float>"
// with EPT=4, NEG=true gives "scale<4, true, float>"): each whole top-level argument that
// names a parameter is replaced by its value_source_text, except that a boolean is `true` /
// `false` (hiprtc finds the instantiation by comparing the name expression with the demangled
// name, which spells a bool argument that way); other arguments (types, nested templates,
// expressions) stay as written. Empty for a plain entry ("k", "main"). invalid_argument for an
// entry whose brackets do not balance.
Result<std::string> name_expression(std::string_view entry, const Config& config);

// The definitions a variant of `source` compiled with `config` gets, in the order above. Only
// `source.entry` is read (to leave out the parameters a template entry substitutes).
// invalid_argument when the entry is a template whose brackets do not balance.
Result<std::vector<Definition>> definitions(const Config& config, const KernelSource& source);

// Refuses (invalid_argument, naming both sides of the clash) a kernel whose parameters clash:
// a parameter of the space (a dimension, a value that `derive` sets, a parameter of a list
// entry) or of a heuristic that starts with kReservedPrefix or has the name of a kernel
// argument, a heuristic whose parameter is also a dimension of the space or of another
// heuristic, or a heuristic parameter that is neither an identifier nor a launch option. The
// space's own duplicate dimensions are ConfigSpace::validate's to report. `derive` is a
// function: the parameters it adds are read from the space's first point.
Status check_names(const KernelDef& def);

}  // namespace tune
