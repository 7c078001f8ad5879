#include "kernel.hpp"

#include <algorithm>
#include <set>

#include "call_context.hpp"
#include "convert.hpp"
#include "dtypes.hpp"
#include "verify.hpp"

namespace tune::python {
namespace {

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t");
  const auto e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

Language parse_language(const std::string& s) {
  if (s == "glsl") return Language::glsl;
  if (s == "cuda" || s == "hip" || s == "cuda_hip") return Language::cuda_hip;
  throw py::value_error("language '" + s + "': expected 'cuda', 'hip' or 'glsl'");
}

// "x: f32[]" is a buffer of f32, "n: i32" a scalar.
ArgDecl parse_decl(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos)
    throw py::value_error("signature entry '" + text +
                          "': expected 'name: type' or 'name: type[]'");
  ArgDecl d;
  d.name = trim(text.substr(0, colon));
  std::string type = trim(text.substr(colon + 1));
  d.kind = ArgKind::scalar;
  if (type.ends_with("[]")) {
    d.kind = ArgKind::buffer;
    type = trim(type.substr(0, type.size() - 2));
  }
  d.type = parse_elem_type(py::str(type), "signature entry '" + text + "'");
  return d;
}

std::vector<std::string> names(py::handle h) {
  std::vector<std::string> out;
  if (h.is_none()) return out;
  for (auto n : h) out.push_back(n.cast<std::string>());
  return out;
}

Dim3 to_dim3(py::handle h) {
  if (py::isinstance<py::int_>(h)) return {h.cast<std::uint32_t>(), 1, 1};
  Dim3 d;
  auto seq = h.cast<py::sequence>();
  if (seq.size() < 1 || seq.size() > 3)
    throw py::value_error("a grid or block is an int or a tuple of 1 to 3 ints");
  d.x = seq[0].cast<std::uint32_t>();
  if (seq.size() > 1) d.y = seq[1].cast<std::uint32_t>();
  if (seq.size() > 2) d.z = seq[2].cast<std::uint32_t>();
  return d;
}

// dims() returns a grid (int or tuple), or {"grid": ..., "block": ..., "shared_bytes": ...};
// the block defaults to the configuration's.
LaunchDims parse_dims(py::handle r, const Config& c) {
  LaunchDims d;
  d.block = normalized_block(c.launch().block);
  if (py::isinstance<py::dict>(r)) {
    auto m = r.cast<py::dict>();
    d.grid = to_dim3(m["grid"]);
    if (m.contains("block")) d.block = to_dim3(m["block"]);
    if (m.contains("shared_bytes")) d.shared_bytes = m["shared_bytes"].cast<std::uint32_t>();
    return d;
  }
  d.grid = to_dim3(r);
  return d;
}

std::int64_t config_int(const Config& c, const std::string& name) {
  const Dim3 b = normalized_block(c.launch().block);
  if (name == kBlockX) return b.x;
  if (name == kBlockY) return b.y;
  if (name == kBlockZ) return b.z;
  return c.get_int(name, 1);
}

std::function<LaunchDims(const Config&, ArgList)> grid_1d(const Grid1D& g, const ArgMeta& meta) {
  const int index = meta.index_of(g.size);
  if (index < 0) throw py::value_error("grid_1d: '" + g.size + "' is not an argument");
  const bool buffer = meta.decls[index].kind == ArgKind::buffer;
  return [g, index, buffer](const Config& c, ArgList args) {
    const auto& a = args[static_cast<std::size_t>(index)];
    const std::int64_t n = buffer ? static_cast<std::int64_t>(a.count) : a.as_int();
    std::int64_t per = 1;
    for (const auto& name : g.per_block) per *= config_int(c, name);
    per = std::max<std::int64_t>(per, 1);
    LaunchDims d;
    d.grid = {static_cast<std::uint32_t>((n + per - 1) / per), 1, 1};
    d.block = normalized_block(c.launch().block);
    return d;
  };
}

std::vector<KernelSource> make_sources(const std::string& name, py::object source,
                                       const py::kwargs& kw) {
  auto text_of = [](py::handle h) { return h.cast<std::string>(); };
  std::vector<std::pair<Language, std::string>> texts;
  if (py::isinstance<py::dict>(source)) {
    for (auto [lang, text] : source.cast<py::dict>())
      texts.emplace_back(parse_language(lang.cast<std::string>()), text_of(text));
  } else {
    if (!kw.contains("language") || kw["language"].is_none())
      throw py::type_error("Kernel '" + name + "': language= is required ('cuda' or 'glsl')");
    texts.emplace_back(parse_language(kw["language"].cast<std::string>()), text_of(source));
  }
  std::vector<KernelSource> out;
  for (auto& [lang, text] : texts) {
    KernelSource s;
    s.language = lang;
    s.text = std::move(text);
    s.entry = lang == Language::glsl ? "main" : name;
    if (kw.contains("entry") && !kw["entry"].is_none()) {
      py::object e = kw["entry"];
      if (py::isinstance<py::dict>(e)) {
        for (auto [l, v] : e.cast<py::dict>())
          if (parse_language(l.cast<std::string>()) == lang) s.entry = v.cast<std::string>();
      } else {
        s.entry = e.cast<std::string>();
      }
    }
    if (kw.contains("options")) s.options = names(kw["options"]);
    if (kw.contains("include_dirs")) s.include_dirs = names(kw["include_dirs"]);
    if (kw.contains("headers") && !kw["headers"].is_none())
      for (auto [n, t] : kw["headers"].cast<py::dict>())
        s.headers.push_back({n.cast<std::string>(), t.cast<std::string>()});
    out.push_back(std::move(s));
  }
  return out;
}

ConfigSpace make_space(py::handle space) {
  if (py::isinstance<py::dict>(space)) {
    ConfigSpace s;
    for (auto [name, values] : space.cast<py::dict>()) {
      const auto n = name.cast<std::string>();
      std::vector<Value> vs;
      for (auto v : values) vs.push_back(to_value(v, n.c_str()));
      s.param(n, std::move(vs));
    }
    return s;
  }
  std::vector<Config> list;
  for (auto c : space) list.push_back(dict_to_config(c));
  return ConfigSpace::list(std::move(list));
}

KeySpec make_key(py::handle item) {
  if (py::isinstance<py::str>(item)) return KeySpec::exact(item.cast<std::string>());
  auto t = item.cast<py::tuple>();
  if (t.size() != 2) throw py::value_error("a key entry is 'name' or (name, 'pow2' | callable)");
  const auto arg = t[0].cast<std::string>();
  if (py::isinstance<py::str>(t[1])) {
    const auto b = t[1].cast<std::string>();
    if (b == "pow2") return KeySpec::pow2(arg);
    if (b == "exact") return KeySpec::exact(arg);
    throw py::value_error("key '" + arg + "': bucket '" + b + "' (expected 'exact' or 'pow2')");
  }
  PyRef fn = keep(py::reinterpret_borrow<py::object>(t[1]));
  return KeySpec::custom(arg, [fn](std::int64_t v) {
    return with_gil([&] { return (*fn)(v).cast<std::int64_t>(); });
  });
}

// Every keyword Kernel() takes besides name and source.
const std::set<std::string>& known_keywords() {
  static const std::set<std::string> k = {
      "language",     "entry",         "signature",     "space",       "dims",       "key",
      "constraints",  "derive",        "heuristics",    "early_prune", "perf_model", "top_k",
      "top_fraction", "reset_to_zero", "restore_value", "pre_hook",    "post_hook",  "verify",
      "outputs",      "options",       "include_dirs",  "headers"};
  return k;
}

py::object get(const py::kwargs& kw, const char* name) {
  return kw.contains(name) ? py::reinterpret_borrow<py::object>(kw[name]) : py::none();
}

}  // namespace

int ArgMeta::index_of(const std::string& name) const {
  for (std::size_t i = 0; i < decls.size(); ++i)
    if (decls[i].name == name) return static_cast<int>(i);
  return -1;
}

py::dict args_dict(const ArgMeta& meta, ArgList args) {
  const CallContext* ctx = CallContext::current();
  py::dict d;
  for (std::size_t i = 0; i < meta.decls.size() && i < args.size(); ++i) {
    py::str name(meta.decls[i].name);
    if (ctx != nullptr && i < ctx->args.size())
      d[name] = ctx->args[i];
    else if (args[i].kind == ArgKind::buffer)
      d[name] = args[i].count;
    else if (is_float(args[i].type))
      d[name] = args[i].as_double();
    else
      d[name] = args[i].as_int();
  }
  return d;
}

namespace {

// The arguments' declarations from signature=, which of them are outputs (outputs=, else every
// buffer), and the definition's signature.
std::shared_ptr<ArgMeta> make_arg_meta(const py::kwargs& kw, KernelSignature& signature) {
  auto meta = std::make_shared<ArgMeta>();
  for (auto entry : kw["signature"]) meta->decls.push_back(parse_decl(entry.cast<std::string>()));
  for (const auto& d : meta->decls)
    d.kind == ArgKind::buffer ? signature.buffer(d.name, d.type) : signature.scalar(d.name, d.type);
  for (const auto& out : names(get(kw, "outputs"))) {
    const int i = meta->index_of(out);
    if (i < 0 || meta->decls[i].kind != ArgKind::buffer)
      throw py::value_error("outputs: '" + out + "' is not a buffer argument");
    meta->outputs.push_back(static_cast<std::size_t>(i));
  }
  if (meta->outputs.empty())
    for (std::size_t i = 0; i < meta->decls.size(); ++i)
      if (meta->decls[i].kind == ArgKind::buffer) meta->outputs.push_back(i);
  return meta;
}

// constraints= and derive=: the space's Python callbacks, called with the GIL.
void add_space_callbacks(KernelDef& def, const py::kwargs& kw) {
  py::object constraints = get(kw, "constraints");
  if (py::isinstance<py::dict>(constraints)) {
    for (auto [cname, fn_obj] : constraints.cast<py::dict>()) {
      PyRef fn = keep(py::reinterpret_borrow<py::object>(fn_obj));
      def.space.constrain(cname.cast<std::string>(), [fn](const Config& c, const DeviceInfo& d) {
        return with_gil([&] { return py::bool_((*fn)(config_to_dict(c), device_info_dict(d))); });
      });
    }
  } else if (!constraints.is_none()) {
    throw py::type_error("constraints: a dict of name -> callable(config, device)");
  }
  if (py::object derive = get(kw, "derive"); !derive.is_none()) {
    PyRef fn = keep(derive);
    def.space.derive([fn](Config& c) {
      with_gil([&] {
        py::object r = (*fn)(config_to_dict(c));
        if (!r.is_none())
          for (auto [n, v] : r.cast<py::dict>()) {
            const auto key = n.cast<std::string>();
            c.set(key, to_value(v, key.c_str()));
          }
      });
    });
  }
}

// dims=: a grid_1d(...) description, else a callable(config, args) -> dims.
void set_dims(KernelDef& def, const py::kwargs& kw, std::shared_ptr<const ArgMeta> meta) {
  py::object dims = kw["dims"];
  if (py::isinstance<Grid1D>(dims)) {
    def.dims = grid_1d(dims.cast<Grid1D>(), *meta);
  } else {
    PyRef fn = keep(dims);
    def.dims = [fn, meta](const Config& c, ArgList args) {
      return with_gil(
          [&] { return parse_dims((*fn)(config_to_dict(c), args_dict(*meta, args)), c); });
    };
  }
}

// heuristics=, early_prune= and perf_model= (with top_k/top_fraction): what chooses candidates.
void add_selection_callbacks(KernelDef& def, const py::kwargs& kw,
                             std::shared_ptr<const ArgMeta> meta) {
  if (py::object h = get(kw, "heuristics"); !h.is_none()) {
    for (auto [param, fn_obj] : h.cast<py::dict>()) {
      PyRef fn = keep(py::reinterpret_borrow<py::object>(fn_obj));
      auto p = param.cast<std::string>();
      def.heuristics.push_back(
          {p, [fn, meta, p](ArgList args, const DeviceInfo& d) {
             return with_gil([&] {
               return to_value((*fn)(args_dict(*meta, args), device_info_dict(d)), p.c_str());
             });
           }});
    }
  }
  if (py::object ep = get(kw, "early_prune"); !ep.is_none()) {
    PyRef fn = keep(ep);
    def.early_prune = [fn, meta](std::vector<Config> configs, ArgList args) {
      return with_gil([&] {
        py::list in;
        for (const auto& c : configs) in.append(config_to_dict(c));
        std::vector<Config> out;
        for (auto c : (*fn)(in, args_dict(*meta, args))) out.push_back(dict_to_config(c));
        return out;
      });
    };
  }
  if (py::object pm = get(kw, "perf_model"); !pm.is_none()) {
    PyRef fn = keep(pm);
    def.perf_model.estimate = [fn, meta](const Config& c, ArgList args, const DeviceInfo& d) {
      return with_gil([&] {
        return (*fn)(config_to_dict(c), args_dict(*meta, args), device_info_dict(d)).cast<double>();
      });
    };
    if (kw.contains("top_k")) def.perf_model.top_k = kw["top_k"].cast<int>();
    if (kw.contains("top_fraction"))
      def.perf_model.top_fraction = kw["top_fraction"].cast<double>();
  }
}

// pre_hook=, post_hook= and verify= (with the call's reference=): around each tuning launch.
void add_launch_hooks(KernelDef& def, const py::kwargs& kw, std::shared_ptr<const ArgMeta> meta) {
  if (py::object pre = get(kw, "pre_hook"); !pre.is_none()) {
    PyRef fn = keep(pre);
    def.pre_hook = [fn, meta](Device&, ArgList args, const Config& c) {
      with_gil([&] { (*fn)(config_to_dict(c), args_dict(*meta, args)); });
      return Status();
    };
  }
  if (py::object post = get(kw, "post_hook"); !post.is_none()) {
    PyRef fn = keep(post);
    def.post_hook = [fn, meta](Device&, ArgList args, const Config& c, const Status& outcome) {
      with_gil([&] {
        (*fn)(config_to_dict(c), args_dict(*meta, args),
              outcome.ok() ? py::none() : error_object(outcome));
      });
      return Status();
    };
  }
  py::object verify = get(kw, "verify");
  def.verify = make_verify(meta, verify.is_none() ? nullptr : keep(verify));
  def.verify_applies = make_verify_applies(!verify.is_none());
}

}  // namespace

std::shared_ptr<PyKernel> PyKernel::make(const std::string& name, py::object source,
                                         const py::kwargs& kw) {
  for (auto [k, v] : kw)
    if (!known_keywords().contains(k.cast<std::string>()))
      throw py::type_error("Kernel() got an unexpected keyword argument '" + k.cast<std::string>() +
                           "'");
  for (const char* required : {"signature", "space", "dims"})
    if (get(kw, required).is_none())
      throw py::type_error("Kernel '" + name + "': " + required + "= is required");

  auto k = std::make_shared<PyKernel>();
  KernelDef& def = k->def_;
  def.name = name;
  def.sources = make_sources(name, std::move(source), kw);

  std::shared_ptr<ArgMeta> meta = make_arg_meta(kw, def.signature);
  k->meta_ = meta;
  def.space = make_space(kw["space"]);
  add_space_callbacks(def, kw);
  set_dims(def, kw, meta);
  for (auto item : get(kw, "key").is_none() ? py::list() : py::list(kw["key"]))
    def.key.push_back(make_key(item));
  add_selection_callbacks(def, kw, meta);
  def.reset_to_zero = names(get(kw, "reset_to_zero"));
  def.restore_value = names(get(kw, "restore_value"));
  add_launch_hooks(def, kw, meta);
  return k;
}

}  // namespace tune::python
