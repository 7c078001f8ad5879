// OutputCheck: the checks of configurations' outputs during one tuning: KernelDef::verify (the
// user's callback), then KernelDef::reference compared on the device (Device::compare).
//
// The expected outputs are prepared once, at the first check (prepare): host arrays uploaded,
// user device buffers borrowed, the reference configuration compiled, launched on the call's
// arguments (with the hooks, as any launch while tuning) and its outputs copied aside. They stay
// on the device until the OutputCheck dies.
//
// Ownership: borrows the device, definition, arguments, variant cache and source for its
// lifetime; owns the expected copies. Not thread-safe: one tuning thread drives it.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hook_runner.hpp"
#include "tune/kernel.hpp"
#include "variants.hpp"

namespace tune::detail {

class OutputCheck {
 public:
  OutputCheck(Device& dev, const KernelDef& def, ArgList args, VariantCache& variants,
              const KernelSource& src)
      : dev_(dev), def_(def), args_(args), variants_(variants), src_(src) {}

  // Whether anything checks outputs (KernelDef::verify or KernelDef::reference).
  // KernelDef::verify counts only where verify_applies (asked once) says it checks this call.
  bool active() const noexcept { return verify_applies() || bool(def_.reference); }
  // One launch of `kernel` (configuration `c`) with the hooks around it (the post-hook hears
  // the launch's outcome), then KernelDef::verify and each reference output compared on the
  // device. A check failure is wrong_output naming the output and its errors (mismatch count,
  // first bad index, max abs and rel error); callback_failed and device_lost stay as they are;
  // launch failures keep their code. Takes the hooks' snapshot and prepares the expected
  // outputs at the first call; a failure there is the definition's or the reference's, not
  // c's: reference_failed() is then true and the tuning must end.
  // A wrong output from a binary read from a binary cache says nothing certain about its
  // configuration (the entry may be damaged or forged): the binary is evicted from the
  // device's caches and the variant cache, so the next compile runs the compiler, and the
  // configuration is untrusted(): its failure must not be stored.
  Status verify(HookRunner& hooks, const CompiledKernel& kernel, const Config& c);
  bool reference_failed() const noexcept { return prepared_ && !prepared_->ok(); }
  // Configurations (Config::to_string) whose cached binary failed its check in this tuning.
  const std::set<std::string>& untrusted() const noexcept { return untrusted_; }

 private:
  // The expected outputs, once (later calls return the first outcome).
  Status prepare(HookRunner& hooks);
  // KernelDef::verify is set and, per KernelDef::verify_applies, checks this call (cached).
  bool verify_applies() const noexcept;
  // After one synchronised launch of `c`: verify, then each reference output.
  Status check(const Config& c);
  struct Expected {
    std::size_t arg = 0;  // position in the arguments
    CompareSpec spec;
    const DeviceBuffer* buffer = nullptr;
    Buffer owned;  // uploaded or copied from the reference configuration's output
  };
  Status prepare_output(const ReferenceOutput& out);
  Status forget_cached_binary(const CompiledKernel& kernel, const Config& c, const Status& st);
  Status run_reference_config(HookRunner& hooks);

  Device& dev_;
  const KernelDef& def_;
  ArgList args_;
  VariantCache& variants_;
  const KernelSource& src_;
  std::optional<Status> prepared_;
  mutable std::optional<bool> verify_applies_;
  std::set<std::string> untrusted_;
  std::vector<Expected> expected_;
};

}  // namespace tune::detail
