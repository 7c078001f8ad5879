#include "tune/environment.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>

#include "tune/log.hpp"

namespace tune {
namespace {

constexpr EnvVariable kVariables[] = {
    {"TUNE_DEVICE",
     "device to open by default: `backend` or `backend:selector` (index or name substring), "
     "e.g. `vulkan:llvmpipe`, `cuda:0`"},
    {"TUNE_BACKEND", "backend to open by default when `TUNE_DEVICE` is unset"},
    {"TUNE_VULKAN_DEVICE",
     "Vulkan device by index or name substring (default: discrete GPU, then integrated, then "
     "CPU)"},
    {"TUNE_VULKAN_VALIDATION",
     "boolean: open Vulkan devices with the Khronos validation layer and count its messages "
     "(`vulkan::OpenOptions::validation` wins)"},
    {"TUNE_PRINT_AUTOTUNING",
     "boolean: print every tuning: kernel, key, each configuration's median or failure reason, "
     "winner, wall time (`AutotunerOptions::print` wins)"},
    {"TUNE_CACHE",
     "`off`, `readonly` or `readwrite` (default) for every disk cache: the tuning database and "
     "the compiled variants (`off`: nothing read or written; `readonly`: read, never written)"},
    {"TUNE_CACHE_DIR",
     "where the caches live (default `$XDG_CACHE_HOME/libtune`, else `~/.cache/libtune`): "
     "`tune.db`, `cubin/`, `hsaco/`, `spirv/`, `vkpipeline/`"},
    {"TUNE_BUNDLES",
     "read-only bundles of tuning decisions (`tune bundle create`), separated by `:`, looked up "
     "after the user's database and `AutotunerOptions::bundles`, in order"},
    {"TUNE_STORE",
     "a PostgreSQL server shared by many machines (`postgresql://user@host/db`, "
     "`postgres://...`; libtune built with `TUNE_POSTGRESQL`): the local `tune.db` stays in "
     "front, misses are asked of the server, new results go to both (docs: \"Sharing results "
     "across machines\")"},
    {"TUNE_DISABLE",
     "boolean: never time: use heuristics or the first configuration that survives pruning "
     "(`AutotunerOptions::disable` wins)"},
    {"TUNE_STRICT",
     "boolean: never tune: a key with no stored winner is an error (failed_precondition) "
     "instead of a tuning (`AutotunerOptions::strict` wins)"},
    {"TUNE_BUCKET_EDGES",
     "boolean, on when unset: before a winner covers a `pow2` key bucket, launch, verify and "
     "time it against the runner-up at the bucket's edges, and split the bucket where it fails "
     "or loses (`AutotunerOptions::check_bucket_edges` wins)"},
    {"TUNE_RECORD",
     "a file that gets one JSON line per key served by the fallback chain or not served at "
     "all (kernel, source hash, key, argument types, sizes and scalar values, device), to be "
     "tuned offline with `tune::tune_recorded` (`AutotunerOptions::record` wins)"},
    {"TUNE_FALLBACK",
     "`tune` (default), `keep` or `background`: what a key with no decision for this device "
     "and toolchain does: tune now, or serve the device-family fallback chain (same "
     "architecture, same vendor, nearest key, default configuration) and never tune, or tune "
     "in the background and switch (`AutotunerOptions::fallback` wins)"},
    {"TUNE_GPU_LOCK",
     "boolean, on when unset: hold a per-GPU lock file (`$XDG_RUNTIME_DIR/libtune/locks/`, "
     "else `/tmp/libtune-<uid>/locks/`; never under the cache directory) while a tuning times, "
     "so two processes never time on one GPU at once (`AutotunerOptions::gpu_lock` wins)"},
    {"TUNE_LOCK_DIR",
     "the directory of the per-GPU lock files instead of the per-user default (one that several "
     "users can write makes them take turns on a GPU too)"},
    {"TUNE_WORKER",
     "the isolated tuning worker executable (`AutotunerOptions::isolation.worker` wins; "
     "default: the `tune-worker` installed with libtune)"},
    {"TUNE_CUDA_INCLUDE_DIR",
     "the CUDA toolkit's include directory that NVRTC compiles see (CUB, `cuda/std`, "
     "`cuda_fp16.h`; its `cccl/` subdirectory first when present); default: the toolkit "
     "libtune was built with, e.g. `/usr/local/cuda/include`"},
    {"TUNE_LLC_BYTES",
     "the last-level cache size that timing assumes (`256M`, `96MiB`, bytes): the flush before "
     "each timed launch writes twice it, rotating input copies exceed it (default: as the "
     "device reports it, AMD's Infinity Cache by architecture, else a default per device "
     "type)"},
};

// The variable's row; std::logic_error when it has none.
const EnvVariable& row_of(std::string_view name) {
  for (const auto& v : kVariables)
    if (v.name == name) return v;
  throw std::logic_error("libtune reads the environment variable " + std::string(name) +
                         " but it has no row in tune::environment_variables()");
}

std::string normalised(const char* raw) {
  std::string s(raw);
  auto blank = [](unsigned char c) { return std::isspace(c) != 0; };
  s.erase(s.begin(), std::find_if_not(s.begin(), s.end(), blank));
  s.erase(std::find_if_not(s.rbegin(), s.rend(), blank).base(), s.end());
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Warns once per variable name.
void warn_once(const std::string& name, const char* raw) {
  static std::mutex mu;
  static std::set<std::string> warned;
  {
    std::lock_guard lock(mu);
    if (!warned.insert(name).second) return;
  }
  log_warning(name + "='" + raw +
              "' is not a boolean (1/true/yes/on or 0/false/no/off, any case); ignored");
}

}  // namespace

std::span<const EnvVariable> environment_variables() noexcept { return kVariables; }

std::string env_text(std::string_view name) {
  const std::string n(row_of(name).name);
  const char* raw = std::getenv(n.c_str());
  return raw == nullptr ? std::string() : std::string(raw);
}

bool env_flag(std::string_view name, bool fallback) {
  const std::string n(row_of(name).name);
  const char* raw = std::getenv(n.c_str());
  if (raw == nullptr) return fallback;
  const std::string v = normalised(raw);
  if (v.empty()) return fallback;
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  warn_once(n, raw);
  return fallback;
}

}  // namespace tune
