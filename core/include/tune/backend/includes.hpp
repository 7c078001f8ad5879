// Which files a kernel's #include lines may open, read, so that the binary caches and the
// tuning store key on their text: an edited header is a miss, never a stale binary.
//
// The search rule libtune's own includer follows (GLSL through shaderc), and the order NVRTC
// follows too: a name is looked up first among the source's in-memory `headers` (exact name),
// then, for a "quoted" name, in the including file's directory, then in each of
// `include_dirs` in order. The compilers do not all agree on that order (hiprtc prefers the
// including file's directory to an in-memory header; NVRTC also searches the process's working
// directory for the kernel's own quoted includes), so the closure does not guess which file a
// compiler opens: it takes every candidate that exists along the search path (the working
// directory too, for a CUDA/HIP kernel's own quoted includes), reads it, and follows its
// #include lines. Lines are followed whatever #if surrounds them. So the closure is a
// superset of what the compiler reads: an edit to any candidate changes its hash (at worst a
// needless recompile).
//
// Not in the closure: names found nowhere above — the toolkit's headers (<cub/cub.cuh>,
// <cuda/std/...>), which the compiler's version and the -I options in the key cover, and
// missing files, which the compiler reports. A file of the include dirs that only a toolkit
// header includes is not seen either (the toolkit's headers are not scanned). An #include
// whose operand is a macro cannot be followed: then every regular file under the include dirs
// (recursively) and every in-memory header is in the closure instead.
//
// Limits: at most `max_files` files and `max_bytes` bytes are read; beyond either the closure
// is an invalid_argument error naming the limit and the file that crossed it (a compile of
// such a source fails with it rather than cache a binary whose inputs were not all read).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tune/device.hpp"
#include "tune/status.hpp"

namespace tune {

struct IncludedFile {
  std::string name;    // as written in the #include ("" for a file listed by a computed one)
  std::string origin;  // "header:<name>" for an in-memory header, else the file's path
  std::string text;
};

struct IncludeClosure {
  std::vector<IncludedFile> files;  // in discovery order, each origin once
  bool computed_include = false;    // an #include named a macro: every file is in `files`
  std::uint64_t bytes = 0;          // the text read, in total

  bool empty() const noexcept { return files.empty() && !computed_include; }
  // Of every file's origin, name and text, in order; 0 when empty().
  std::uint64_t hash() const;
  // The file read from `origin`, or null.
  const IncludedFile* find(std::string_view origin) const noexcept;
};

struct IncludeLimits {
  std::size_t max_files = 4096;
  std::uint64_t max_bytes = 64ull << 20;
};

// The closure of `source` (see above). invalid_argument beyond the limits or for a file that
// exists but cannot be read.
Result<IncludeClosure> include_closure(const KernelSource& source,
                                       const IncludeLimits& limits = {});

// One #include line of a kernel: its name and form.
struct IncludeDirective {
  std::string name;
  bool quoted = false;    // "name" rather than <name>
  bool computed = false;  // the operand is neither: a macro
};
// The #include lines of `text`, in order (any #if around them ignored).
std::vector<IncludeDirective> include_directives(std::string_view text);

// Where `name` is found by the search rule above, for an #include in the file at
// `includer_origin` (empty for the kernel's own text): "header:<name>" or a path; nullopt when
// nowhere. The first of the closure's candidates: what libtune's includer opens.
std::optional<std::string> resolve_include(const KernelSource& source, std::string_view name,
                                           bool quoted, std::string_view includer_origin);

}  // namespace tune
