// HookRunner: the side effects around every launch made while tuning one key.
//
// Before each launch: the previous launch's post-hook, then reset_to_zero buffers zeroed,
// restore_value buffers restored from a snapshot taken at the start, then the pre-hook.
// After the last one (or a failure): the pending post-hook, told the outcome. So pre and post
// hooks are strictly paired, whatever fails. A hook that throws becomes a callback_failed
// Status naming the hook and the configuration.
//
// Ownership: borrows the device, the definition and the caller's arguments for its lifetime;
// owns the snapshot copies. Not thread-safe: one tuning thread drives it.
#pragma once

#include <map>
#include <vector>

#include "tune/benchmark.hpp"
#include "tune/device.hpp"
#include "tune/kernel.hpp"

namespace tune::detail {

class HookRunner {
 public:
  HookRunner(Device& dev, const KernelDef& def, ArgList args, const std::vector<int>& zero,
             const std::vector<int>& restore);
  // Puts the buffers back (best effort) if the caller returned early.
  ~HookRunner();
  HookRunner(const HookRunner&) = delete;
  HookRunner& operator=(const HookRunner&) = delete;

  // Whether anything runs around launches (hooks or buffers to reset/restore).
  bool active() const noexcept;
  // Copies every hook buffer so that it can be restored. Call once before the first launch.
  Status snapshot();
  // The configuration of the launches that follow.
  void set_config(const Config* c) noexcept { config_ = c; }
  // Before one launch: pending post-hook (ok), zero, restore, pre-hook.
  Status before_launch();
  // What benchmarking runs before each launch of `c` (after snapshot()): with a pre- or
  // post-hook, before_launch() as a host step (one timing call per repetition); else only the
  // zero/restore buffers, which the backend records beside its timed launches. Empty when
  // !active().
  BeforeLaunch before(const Config* c);
  // Runs the pending post-hook, if any, told `outcome`. Returns the hook's own status.
  Status flush_post(const Status& outcome = {});
  // Ends the tuning: pending post-hook told `outcome`, then every snapshot buffer holds the
  // caller's contents again.
  Status finish(const Status& outcome = {});
  // Zeroes the reset_to_zero buffers (before run()'s own launch after a tuning).
  Status zero_outputs();

 private:
  Status restore_all();
  // The zero and restore buffers as device work (restores from the snapshot).
  LaunchResets resets() const;

  Device& dev_;
  const KernelDef& def_;
  ArgList args_;
  const std::vector<int>& zero_;
  const std::vector<int>& restore_;
  const Config* config_ = nullptr;
  const Config* pending_post_ = nullptr;  // config of a pre-hook whose post-hook is due
  bool finished_ = false;
  std::map<DeviceBuffer*, Buffer> saved_;
};

// The same zeroing, for run() after a tuning: reset_to_zero buffers of `args`.
Status zero_buffers(Device& dev, ArgList args, const std::vector<int>& zero);

}  // namespace tune::detail
