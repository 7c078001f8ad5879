// HitMemo: the Autotuner's memory of one thread's last cache hit, so that a program repeating
// the same call (a render or inference loop) skips checking the arguments and building the key.
//
// A call whose arguments equal, bitwise, those of the previous hit on this thread (same
// Autotuner, same device; tune/backend/args_snapshot.hpp says what equal means) launches that
// hit's entry directly, with the launch dimensions `def.dims` gave for those arguments: a memo
// hit calls no user code at all. That relies on the documented promise that `dims` is a pure
// function of (config, args) (tune/kernel.hpp); a dims that is not is called once per distinct
// arguments on each thread, not once per call. Only for kernels whose key calls no user code
// (no heuristics, no custom bucket functions): those build the key, and call dims, every call.
//
// Validity: entries are never freed while their Autotuner lives, but release() makes a
// device's entries unreachable and a destroyed Autotuner's address may be reused, so both move
// the process-wide generation on and every memo stops matching. A buffer destroyed and another
// allocated at the same address is the same argument to the key (keys read types and scalars,
// not buffers), so it needs no generation of its own.
//
// Thread safety: a memo is thread_local; the generation is an atomic.
#pragma once

#include <atomic>
#include <cstdint>

#include "tune/backend/args_snapshot.hpp"
#include "tune/device.hpp"

namespace tune::detail {

inline std::atomic<std::uint64_t> hit_generation{0};

template <class Entry>
struct HitMemo {
  const void* owner = nullptr;  // the Autotuner's Impl
  const void* device = nullptr;
  std::uint64_t generation = 0;
  ArgsSnapshot args;
  const Entry* entry = nullptr;
  LaunchDims dims;  // def.dims(entry->config, args)

  const Entry* find(const void* o, const void* dev, ArgList a) const noexcept {
    if (o != owner || dev != device || entry == nullptr) return nullptr;
    if (generation != hit_generation.load(std::memory_order_acquire)) return nullptr;
    return args.equals(a) ? entry : nullptr;
  }
  // `gen` is hit_generation read before the lookup that found `e`; `d` what dims gave.
  void remember(const void* o, const void* dev, std::uint64_t gen, ArgList a, const Entry* e,
                const LaunchDims& d) noexcept {
    owner = o;
    device = dev;
    generation = gen;
    dims = d;
    entry = args.assign(a) ? e : nullptr;
  }
};

}  // namespace tune::detail
