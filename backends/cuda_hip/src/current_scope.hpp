// Scopes over the calling thread's vendor state, each undone when the scope ends: the device's
// context current (CurrentScope) and a relaxed stream-capture mode (RelaxedCaptureScope).
//
// Thread safety: each scope changes only the calling thread's state, and puts back what it
// found there: an application thread's binding or capture mode is never changed behind its
// back. Blocking: none (thread-local driver calls).
#pragma once

#include "gpu_api.hpp"

namespace tune::gpu {

// The device's context current on the calling thread for one scope; the thread's previous one
// is put back when the scope ends (an application thread's binding is never changed behind its
// back). Nests: an inner scope finds the context current and does nothing. rc() is the vendor
// result of binding it (0: bound); on failure nothing is put back because nothing changed.
class CurrentScope {
 public:
  explicit CurrentScope(GpuApi& api) noexcept : api_(api), rc_(api.enter_current(&saved_)) {}
  ~CurrentScope() {
    if (rc_ == 0 && saved_.changed) api_.leave_current(saved_);
  }
  CurrentScope(const CurrentScope&) = delete;
  CurrentScope& operator=(const CurrentScope&) = delete;
  int rc() const noexcept { return rc_; }

 private:
  GpuApi& api_;
  SavedCurrent saved_;
  int rc_;
};

// The calling thread may load modules while an application's stream captures a graph in
// global mode (a CaptureMiss::fallback compiles its variant then): relaxed for one scope, the
// thread's own mode put back after.
class RelaxedCaptureScope {
 public:
  explicit RelaxedCaptureScope(GpuApi& api) noexcept
      : api_(api), relaxed_(api.relax_capture_mode(&previous_) == 0) {}
  ~RelaxedCaptureScope() {
    if (relaxed_) api_.restore_capture_mode(previous_);
  }
  RelaxedCaptureScope(const RelaxedCaptureScope&) = delete;
  RelaxedCaptureScope& operator=(const RelaxedCaptureScope&) = delete;

 private:
  GpuApi& api_;
  int previous_ = 0;
  bool relaxed_;
};

}  // namespace tune::gpu
