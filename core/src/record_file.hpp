// The record file's lines (tune/record.hpp): one JSON line per key, built from a call's
// arguments, appended atomically; and read back. Internal to the core.
#pragma once

#include <string>
#include <string_view>

#include "tune/kernel.hpp"
#include "tune/record.hpp"
#include "tune/store.hpp"

namespace tune::detail {

// The line of `key` (with its '\n'): the kernel's argument names from `sig`, each argument's
// type and size, scalars' values; never buffer contents. `served`: the fallback level's name,
// or "none".
std::string record_line(const KernelSignature& sig, const StoreKey& key, ArgList args,
                        std::string_view served);

// Appends `line` to `path` in one write() on an O_APPEND descriptor under an exclusive
// flock (created 0644 when absent). io_error naming the file and the call that failed.
Status append_record_line(const std::string& path, const std::string& line);

// One line read back; false (with `why`) when it is not a record line.
bool parse_record_line(const std::string& line, RecordedKey* out, std::string* why);

}  // namespace tune::detail
