// ConfigSpace: the set of configurations a kernel may be tuned over.
//
// Either an explicit list, or the cartesian product of per-dimension domains, optionally
// completed by a `derive` step (e.g. block.x computed from tile sizes) and filtered by
// constraints over the config and the device. Enumeration is lazy: a product of 10^6 points
// is walked by index and never materialised. Immutable once built; safe to share.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tune/config.hpp"
#include "tune/device_info.hpp"

namespace tune {

using Constraint = std::function<bool(const Config&, const DeviceInfo&)>;

class ConfigSpace {
 public:
  struct Dimension {
    std::string name;  // a parameter name or a reserved launch name (config.hpp)
    std::vector<Value> values;
  };

  ConfigSpace() = default;
  // An explicit list (duplicates are a user mistake: reported by validate()).
  static ConfigSpace list(std::vector<Config> configs);

  // Product builder: adds a dimension; the first dimension varies slowest.
  ConfigSpace& param(std::string name, std::vector<Value> values);
  ConfigSpace& param(std::string name, std::initializer_list<int> values);
  // Runs on every product point before constraints (fills derived launch options, etc.).
  // Like a constraint, it may throw: the exception reaches the caller as tune::Error with a
  // callback_failed Status naming it and the point (the Autotuner returns that Status).
  ConfigSpace& derive(std::function<void(Config&)> fn);
  // A named predicate; configs for which it is false are not in the space on that device.
  ConfigSpace& constrain(std::string name, Constraint pred);

  bool is_list() const noexcept { return is_list_; }
  const std::vector<Dimension>& dimensions() const noexcept { return dims_; }
  // Points before constraints: list size, or the product of domain sizes (saturating).
  std::uint64_t raw_size() const noexcept;
  // The i-th point before constraints (mixed radix, last dimension fastest), derived.
  Config at(std::uint64_t index) const;
  // Whether every constraint accepts `c` on `dev`; names the first that rejects it. A
  // constraint that throws: tune::Error with a callback_failed Status naming it and `c`.
  bool accepts(const Config& c, const DeviceInfo& dev, std::string* rejected_by = nullptr) const;

  // Calls fn on each point that passes every constraint, in index order, until fn returns
  // false. Returns the number of points visited.
  std::uint64_t for_each(const DeviceInfo& dev,
                         const std::function<bool(std::uint64_t, const Config&)>& fn) const;
  // Materialises the accepted points; fails (invalid_argument) when more than `limit`.
  Result<std::vector<Config>> enumerate(const DeviceInfo& dev,
                                        std::uint64_t limit = 1u << 20) const;

  // Whether `c` is a point of this space (before constraints): every parameter declared,
  // every value in its domain with the declared type, launch options as derived. Used to
  // validate configs read back from caches before they reach a compiler.
  bool contains(const Config& c) const;

  // User mistakes: an empty space, an empty domain, a duplicate dimension or list entry,
  // mixed value types in one domain, a non-integer launch option.
  Status validate() const;

 private:
  bool is_list_ = false;
  std::vector<Config> list_;
  std::vector<Dimension> dims_;
  void run_derive(Config& c) const;

  std::function<void(Config&)> derive_;
  std::vector<std::pair<std::string, Constraint>> constraints_;
};

}  // namespace tune
