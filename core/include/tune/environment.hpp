// The environment variables libtune reads: one table in code, printed by `tune env` and
// repeated by the README's "Environment" section (tests/core/environment_test.cpp keeps the
// two equal), and the two ways a variable is read. Thread-safe.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace tune {

struct EnvVariable {
  std::string_view name;    // "TUNE_CACHE"
  std::string_view effect;  // what it does, as the README says it
};

// Every variable libtune reads, in the README's order.
std::span<const EnvVariable> environment_variables() noexcept;

// The value of `name`, or "" when it is unset. `name` must have a row in
// environment_variables(): reading one without a row throws std::logic_error (a programming
// error that every test reaching the read reports).
std::string env_text(std::string_view name);

// A boolean variable: 1/true/yes/on and 0/false/no/off in any case (surrounding blanks
// ignored); unset or empty is `fallback`. Any other value is `fallback` too, with one warning
// per variable and process naming the variable, its value and the accepted words. `name` must
// have a row, as for env_text.
bool env_flag(std::string_view name, bool fallback = false);

}  // namespace tune
