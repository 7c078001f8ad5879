// A source's per-variant callback (KernelSource::module_globals, tensor_maps) called safely.
#pragma once

#include <exception>
#include <string>

#include "tune/config.hpp"
#include "tune/status.hpp"

namespace tune::gpu {

// Calls one of a source's per-variant callbacks (module_globals, tensor_maps) into `out`; an
// exception is callback_failed naming the callback and the variant.
template <class Fn, class T>
Status call_variant_callback(const Fn& fn, const Config& config, T* out, const char* what,
                             const std::string& variant) {
  std::string thrown;
  try {
    *out = fn(config);
  } catch (const std::exception& e) {
    thrown = e.what();
  } catch (...) {
    thrown = "an exception that is not a std::exception";
  }
  if (thrown.empty()) return {};
  return Status(StatusCode::callback_failed,
                std::string(what) + " threw for " + variant + ": " + thrown);
}

}  // namespace tune::gpu
