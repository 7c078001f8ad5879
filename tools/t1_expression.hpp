// The Python expressions of Kernel Tuner's T1 input format, evaluated without Python: the
// subset T1 files use for parameter values ("[16*i for i in range(1,9)]",
// "[1, 2, 4, 8, 16] + list(range(32, 1024+1, 32))", "[2**i for i in range(0, 6)]"), for
// conditions ("use_padding==0 or (block_size_x % 32 != 0)") and for argument sizes
// ("(ProblemSize[0]+max(filter_width)-1)").
//
// Supported: integers, floats, 'strings', True/False; names bound by the caller; + - * / //
// % ** (integers stay integers except /; list + list concatenates, list * n repeats);
// comparisons (chained, as in Python), `in` and `not in` (list elements, substrings); and, or,
// not; parentheses; lists and subscripts (ProblemSize[0], negative from the end); one-level
// comprehensions `[EXPR for NAME in SOURCE]` and `[EXPR for NAME in SOURCE if CONDITION]`;
// calls range (1 to 3 arguments), list, min, max (of a list or of several arguments), sum,
// len, abs, int. Anything else (attributes, other calls, nested comprehensions, lambdas,
// imports) is refused with invalid_argument naming the offending text and its offset in the
// expression: a T1 file is data, never code that runs. Lists are capped at kMaxListSize
// elements and evaluation depth at 64, so a hostile file cannot exhaust memory or the stack.
//
// Pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "tune/status.hpp"

namespace tune::cli {

inline constexpr std::size_t kMaxListSize = 100000;

struct PyValue;
using PyList = std::vector<PyValue>;
struct PyValue {
  std::variant<std::int64_t, double, bool, std::string, PyList> v;
};

using PyNames = std::map<std::string, PyValue, std::less<>>;

// Evaluates `text` with `names` bound.
Result<PyValue> eval_python(std::string_view text, const PyNames& names = {});

// Python's truth of a value (0, 0.0, False, '' and [] are false).
bool truthy(const PyValue& v);

// The value as Python would print it ("16", "True", "'half'", "[1, 2]").
std::string py_repr(const PyValue& v);

}  // namespace tune::cli
