// The KernelDef::verify of a Python kernel: a configuration's outputs after its first launch
// while tuning, compared with the call's references (Tuner(..., reference={"y": expected},
// rtol=, atol=)) and given to the kernel's own verify(config, outputs) when it has one.
//
// A mismatch drops the configuration with wrong_output naming the output, how many elements
// differ, the first one with both values, and the tolerances; verify returning False drops it
// with wrong_output naming the configuration; verify raising fails the call (callback_failed,
// the Python exception raised from the call). Runs on the tuning thread: downloads with the
// GIL released, compares with it held.
#pragma once

#include <functional>
#include <memory>

#include "callbacks.hpp"
#include "kernel.hpp"

namespace tune::python {

DeviceHook make_verify(std::shared_ptr<const ArgMeta> meta, PyRef verify);
// KernelDef::verify_applies for that hook: without the kernel's `verify`, only a call that
// passes references is checked, so the others' configurations are reported as not checked.
std::function<bool(ArgList)> make_verify_applies(bool has_verify);

}  // namespace tune::python
