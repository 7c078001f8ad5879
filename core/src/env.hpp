// Boolean environment flags (TUNE_PRINT_AUTOTUNING, TUNE_DISABLE, ...), parsed alike.
// Internal to the core.
#pragma once

namespace tune {

// Reads the boolean variable `name`: 1/true/yes/on and 0/false/no/off in any case (surrounding
// blanks ignored); unset or empty is `fallback`. Any other value is `fallback` too, with one
// warning per variable and process naming the variable, its value and the accepted words.
// Thread-safe.
bool env_flag(const char* name, bool fallback = false);

}  // namespace tune
