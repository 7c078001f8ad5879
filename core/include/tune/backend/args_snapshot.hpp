// ArgsSnapshot (backend kit): a copy of a call's arguments that a later call's are compared with,
// bitwise, without allocating. Hit paths use it to remember what the previous call on the same
// thread worked out (its key, its bound descriptor set) and skip that work when a program
// repeats the same call, as render and inference loops do.
//
// What "the same" means: every ArgValue field equal (kind, element type, buffer address, element
// count, scalar bits). A buffer is compared by address only: whoever keeps a snapshot must also
// notice when a buffer it names may have been destroyed (a generation counter), since a new
// buffer may reuse the address.
//
// Not thread-safe; meant to live in a thread_local.
#pragma once

#include <array>
#include <cstddef>

#include "tune/args.hpp"

namespace tune {

class ArgsSnapshot {
 public:
  // Calls with more arguments than this are never remembered (equals() is false for them).
  static constexpr std::size_t kCapacity = 16;

  // Copies `args`; false (and the snapshot is empty) when there are more than kCapacity.
  bool assign(ArgList args) noexcept {
    valid_ = args.size() <= kCapacity;
    if (!valid_) return false;
    size_ = args.size();
    for (std::size_t i = 0; i < size_; ++i) args_[i] = args[i];
    return true;
  }
  void clear() noexcept { valid_ = false; }

  bool equals(ArgList args) const noexcept {
    if (!valid_ || args.size() != size_) return false;
    for (std::size_t i = 0; i < size_; ++i) {
      const ArgValue& x = args[i];
      const ArgValue& y = args_[i];
      if (x.kind != y.kind || x.type != y.type || x.buffer != y.buffer || x.count != y.count ||
          x.bits != y.bits)
        return false;
    }
    return true;
  }

 private:
  std::array<ArgValue, kCapacity> args_{};
  std::size_t size_ = 0;
  bool valid_ = false;
};

}  // namespace tune
