#include "call_keys.hpp"

#include <cmath>

#include "cache/cache_validation.hpp"
#include "candidates.hpp"
#include "tune/backend/hash.hpp"
#include "user_code.hpp"

namespace tune::detail {
namespace {

std::int64_t value_key(const Value& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return *i;
  if (const auto* b = std::get_if<bool>(&v)) return *b ? 1 : 0;
  return static_cast<std::int64_t>(stable_hash(std::get<std::string>(v)));
}

}  // namespace

void CallKeys::init(KeyBuilder builder) {
  builder_ = std::move(builder);
  calls_user_code_ = !def_.heuristics.empty();
  for (const auto& k : def_.key) {
    calls_user_code_ = calls_user_code_ || k.bucket == Bucket::custom;
    const int idx = def_.signature.index_of(k.arg);
    const auto& decl = def_.signature.decls()[static_cast<std::size_t>(idx)];
    if (decl.kind == ArgKind::scalar && is_float(decl.type)) float_key_idx_.push_back(idx);
  }
}

TuningKey CallKeys::make_key(const Device& dev, ArgList args) const {
  TuningKey k = builder_.build(args, reinterpret_cast<std::uintptr_t>(&dev));
  if (!def_.heuristics.empty()) {
    for (const auto& h : def_.heuristics) {
      Value v;
      try {
        v = h.fn(args, dev.info());
      } catch (...) {
        throw Error(
            callback_failure("heuristic '" + h.param + "'", nullptr, describe_current_exception()));
      }
      k.push(value_key(v));
    }
    k.rehash();
  }
  return k;
}

Status CallKeys::key_of(const Device& dev, ArgList args, TuningKey* out) const {
  if (Status st = def_.signature.check(args); !st.ok())
    return st.with_context("kernel " + def_.name);
  for (int i : float_key_idx_) {
    const double v = args[static_cast<std::size_t>(i)].as_double();
    if (!std::isfinite(v)) {
      return Status(StatusCode::invalid_argument,
                    "kernel " + def_.name + ": key argument '" +
                        def_.signature.decls()[static_cast<std::size_t>(i)].name + "' is " +
                        std::to_string(v) + "; a key must be a finite number");
    }
  }
  try {
    *out = make_key(dev, args);
  } catch (...) {
    return current_exception_status("building the key", nullptr)
        .with_context("kernel " + def_.name);
  }
  return {};
}

Status CallKeys::forms_of(const Device& dev, ArgList args, const TuningKey& key,
                          KeyForms* forms) const {
  forms->key = key;
  auto heur = heuristic_values(def_, dev.info(), args);
  if (!heur.ok()) return heur.status();
  forms->heuristics = std::move(*heur);
  TuningKey base = key;
  base.size = key_args() + 1;
  forms->text = builder_.to_string(base);
  for (const auto& [name, value] : forms->heuristics.params())
    forms->text += "," + name + "=" + value_to_text(value);
  const KernelSource* src = def_.source_for(dev.language());
  const DeviceInfo& info = dev.info();
  forms->store_key = StoreKey{def_.name, src == nullptr ? 0 : src->hash(), forms->text,
                              info.fingerprint(), info.toolchain_fingerprint()};
  return {};
}

Status CallKeys::forms_of(const Device& dev, ArgList args, KeyForms* forms) const {
  TuningKey key{TuningKey::Unfilled{}};
  TUNE_RETURN_IF_ERROR(key_of(dev, args, &key));
  return forms_of(dev, args, key, forms).with_context("kernel " + def_.name);
}

Status CallKeys::check_point_of_key(const Device& dev, const KeyForms& forms,
                                    const Config& c) const {
  Status st = check_point(c, def_.space, &forms.heuristics);
  std::string by;
  if (st.ok()) {
    try {
      if (!def_.space.accepts(c, dev.info(), &by))
        st = Status(StatusCode::invalid_argument, "constraint '" + by + "' rejects it");
    } catch (...) {
      st = current_exception_status("the config space", &c);
    }
  }
  if (st.ok()) return {};
  return Status(StatusCode::invalid_argument,
                "config {" + c.to_string() + "} is not one of kernel " + def_.name +
                    "'s configurations for key {" + forms.text + "}: " + st.message());
}

}  // namespace tune::detail
