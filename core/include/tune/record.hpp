// Record in production, tune offline (docs/deploy.md): AutotunerOptions::record (or
// TUNE_RECORD=<file>) appends one JSON line per key that was served by the fallback chain or
// not served at all (strict mode, no level of the chain), and tune_recorded() tunes exactly
// those keys later, on a machine with the device, with the application's own Autotuners.
//
// A line: {"kernel", "source_hash" ("0x" + 16 hex digits), "key" (TuningReport::key),
// "device" (fingerprint), "served" (the fallback level, or "none" when the call failed),
// "args": [{"name", "kind": "buffer", "type", "count" (elements), "bytes" (the buffer's
// size)} or {"name", "kind": "scalar", "type", "bits" (the value's bits, "0x" hex),
// "value" (readable)}]}. Never a buffer's contents.
//
// Writing: at most one line per key and process, appended only when a key is met for the
// first time (never on the hit path), in one write() on a descriptor opened O_APPEND under
// an exclusive flock: processes appending at once never tear or lose a line. A file that
// cannot be written is one warning; the call goes on.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tune/args.hpp"
#include "tune/status.hpp"

namespace tune {

class Autotuner;
class Device;

struct RecordedArg {
  std::string name;
  ArgKind kind = ArgKind::buffer;
  ElemType type = ElemType::f32;
  std::uint64_t count = 0;  // buffers: elements passed
  std::uint64_t bytes = 0;  // buffers: the buffer's size
  std::uint64_t bits = 0;   // scalars: the value (ArgValue::bits)
};

struct RecordedKey {
  std::string kernel;
  std::uint64_t source_hash = 0;
  std::string key;
  std::string device;
  std::string served;  // to_string(FallbackLevel), "none" when not served
  std::vector<RecordedArg> args;
};

// The record's lines in order. A line that does not parse (torn, not JSON, no source hash) is
// skipped with one warning naming the file and line; io_error naming the file when unreadable.
Result<std::vector<RecordedKey>> read_record(const std::string& path);

struct RecordTuning {
  std::size_t tuned = 0;             // keys tune() decided (tuned, or found stored meanwhile)
  std::vector<std::string> skipped;  // why, one per key not tuned and per line not read
};

// Tunes on `dev` with Autotuner::tune each distinct (kernel, source hash, key) of the record
// whose kernel one of `tuners` defines (KernelDef::name) from the recorded source (its hash on
// dev.language(); a line of another version is refused, naming both hashes): arguments are
// re-created (buffers of the recorded size and count, random: floats in [0.5, 1), integers in
// [0, 100); scalars as recorded). A key whose rebuilt arguments give another key text, a kernel
// none of `tuners` defines, a failed tuning or an unread line is skipped ("kernel K key {..}:
// why", "record file F line N skipped: why"); the rest go on. Give the Autotuners the default
// fallback policy (tune), else tune() serves the chain instead. Errors: the record's.
Result<RecordTuning> tune_recorded(const std::string& path, Device& dev,
                                   std::span<Autotuner* const> tuners);
template <class... Tuners>
Result<RecordTuning> tune_recorded(const std::string& path, Device& dev, Tuners&... tuners) {
  Autotuner* const list[] = {&tuners...};
  return tune_recorded(path, dev, std::span<Autotuner* const>(list));
}

}  // namespace tune
