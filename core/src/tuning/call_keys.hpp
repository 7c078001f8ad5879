// How a call's arguments become its key (the hit path: checked arguments, then a numeric key),
// and a new key its forms (KeyForms: the heuristic values, the key text, the store key).
// Internal to the core.
#pragma once

#include <vector>

#include "key_builder.hpp"
#include "session.hpp"
#include "tune/kernel.hpp"

namespace tune::detail {

class CallKeys {
 public:
  // `def` must outlive this; init() is called once, before any call.
  explicit CallKeys(const KernelDef& def) : def_(def) {}
  void init(KeyBuilder builder);

  // Arguments checked, key built: everything a call does before the table lookup. A throwing
  // heuristic or custom key function becomes its callback_failed.
  Status key_of(const Device& dev, ArgList args, TuningKey* out) const;
  // A new key's forms, built once.
  Status forms_of(const Device& dev, ArgList args, const TuningKey& key, KeyForms* forms) const;
  // Key and forms of a call (key_text, candidates, measure), errors naming the kernel.
  Status forms_of(const Device& dev, ArgList args, KeyForms* forms) const;
  // Whether `c` is one of this key's points: a point of the space with the key's heuristic
  // values that the constraints accept. invalid_argument naming it and why not.
  Status check_point_of_key(const Device& dev, const KeyForms& forms, const Config& c) const;

  // Heuristics or custom buckets: the key runs user code, so no HitMemo (hit_memo.hpp).
  bool calls_user_code() const noexcept { return calls_user_code_; }
  // How many of a key's values are key arguments (the rest: buffer types, heuristics).
  int key_args() const noexcept { return static_cast<int>(builder_.specs().size()); }
  // The key arguments resolved against the signature (bucket splits re-key with it).
  const KeyBuilder& builder() const noexcept { return builder_; }

 private:
  // The numeric key of a call. May throw (a heuristic or custom key function).
  TuningKey make_key(const Device& dev, ArgList args) const;

  const KernelDef& def_;
  KeyBuilder builder_;
  std::vector<int> float_key_idx_;  // float scalars among the key arguments
  bool calls_user_code_ = false;
};

}  // namespace tune::detail
