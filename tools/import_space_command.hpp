// `tune import-space <t1.json> [--out space.json]`: Kernel Tuner's T1 input format (a tuning
// problem: kernel file and name, tuning parameters, conditions, launch sizes, arguments; schema
// vendored in tools/schema/T1/1.0.0) read into a libtune space file.
//
// The space file (JSON, "format": "libtune-space", version 1; read by space/space_file.hpp)
// holds the kernel name, language and file (resolved beside the T1 file), compiler options,
// every parameter with its Type and values evaluated (T1 writes them as Python expressions:
// "[16*i for i in range(1,9)]"), the conditions (expression and parameters), the block and grid
// expressions, the arguments as T1 gives them, the number of points before and after the
// conditions, and the T1 fields it does not use (t1_extra, for `tune export-space`). Expressions
// are evaluated by t1_expression.hpp's Python subset, never by Python.
//
// The input is checked before anything is written: a regular file of at most 16 MiB, JSON,
// the fields T1 requires with the types it requires, values of the parameter's declared Type,
// conditions that evaluate to a truth value on every point and name only parameters, launch
// sizes that evaluate. Each error names the field ("ConfigurationSpace.TuningParameters[2]
// .Values") and the reason. `tune run-space` (run_space_command.hpp) tunes a space file.
#pragma once

namespace CLI {
class App;
}

namespace tune::cli {

void add_import_space_command(CLI::App& app);

}  // namespace tune::cli
