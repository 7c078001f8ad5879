// A space file written back as a Kernel Tuner T1 document (`tune export-space --format t1`), so
// that T1 -> space -> T1 gives the document imported: the same parameters (Values as Python
// list literals of the evaluated values: "[16, 32, 48]" where the file had
// "[16*i for i in range(1,4)]"), conditions, launch sizes, arguments and the fields libtune
// does not read (General, Search, Budget, Device, ...), kept in the space file's t1_extra.
// Pure; safe from any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "space_file.hpp"

namespace tune::cli {

// The T1 document of `space`; KernelFile is written as `kernel_file` (the caller chooses it
// relative to where the document goes).
nlohmann::json t1_document(const SpaceFile& space, const std::string& kernel_file);

}  // namespace tune::cli
