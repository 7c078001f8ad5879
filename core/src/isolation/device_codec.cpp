#include "isolation/device_codec.hpp"

namespace tune::detail {
namespace {

// Element counts read from a message are bounded by what is left of it (every element takes
// at least one byte), so a garbage count cannot allocate without bound.
constexpr std::uint32_t kMaxItems = 1u << 20;

void put_dim3(WireWriter& w, const Dim3& d) {
  w.u32(d.x);
  w.u32(d.y);
  w.u32(d.z);
}
Dim3 get_dim3(WireReader& r) {
  Dim3 d;
  d.x = r.u32();
  d.y = r.u32();
  d.z = r.u32();
  return d;
}

void put_strings(WireWriter& w, const std::vector<std::string>& v) {
  w.u32(static_cast<std::uint32_t>(v.size()));
  for (const auto& s : v) w.str(s);
}
std::vector<std::string> get_strings(WireReader& r) {
  const std::uint32_t n = r.u32();
  std::vector<std::string> v;
  for (std::uint32_t i = 0; i < n && i < kMaxItems && r.ok(); ++i) v.push_back(r.str());
  if (n >= kMaxItems) r.fail();
  return v;
}

}  // namespace

void put_dims(WireWriter& w, const LaunchDims& d) {
  put_dim3(w, d.grid);
  put_dim3(w, d.block);
  w.u32(d.shared_bytes);
  put_dim3(w, d.cluster);
}

LaunchDims get_dims(WireReader& r) {
  LaunchDims d;
  d.grid = get_dim3(r);
  d.block = get_dim3(r);
  d.shared_bytes = r.u32();
  d.cluster = get_dim3(r);
  return d;
}

void put_args(WireWriter& w, ArgList args,
              const std::function<std::uint64_t(const DeviceBuffer*)>& id_of) {
  w.u32(static_cast<std::uint32_t>(args.size()));
  for (const ArgValue& a : args) {
    w.u8(static_cast<std::uint8_t>(a.kind));
    w.u8(static_cast<std::uint8_t>(a.type));
    w.u64(a.kind == ArgKind::buffer ? id_of(a.buffer) : 0);
    w.u64(a.count);
    w.u64(a.bits);
  }
}

bool get_args(WireReader& r, const std::function<DeviceBuffer*(std::uint64_t)>& buffer_of,
              std::vector<ArgValue>* out) {
  const std::uint32_t n = r.u32();
  if (n > kMaxItems) return false;
  out->clear();
  for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
    ArgValue a;
    const std::uint8_t kind = r.u8();
    const std::uint8_t type = r.u8();
    const std::uint64_t id = r.u64();
    a.count = r.u64();
    a.bits = r.u64();
    if (kind > static_cast<std::uint8_t>(ArgKind::scalar) ||
        type > static_cast<std::uint8_t>(ElemType::u64))
      return false;
    a.kind = static_cast<ArgKind>(kind);
    a.type = static_cast<ElemType>(type);
    if (a.kind == ArgKind::buffer) {
      a.buffer = buffer_of(id);
      if (a.buffer == nullptr) return false;
    }
    out->push_back(a);
  }
  return r.ok();
}

void put_source(WireWriter& w, const KernelSource& s) {
  w.u8(static_cast<std::uint8_t>(s.language));
  w.str(s.entry);
  w.str(s.text);
  put_strings(w, s.include_dirs);
  w.u32(static_cast<std::uint32_t>(s.headers.size()));
  for (const auto& h : s.headers) {
    w.str(h.name);
    w.str(h.text);
  }
  put_strings(w, s.options);
  w.u32(static_cast<std::uint32_t>(s.signature.decls().size()));
  for (const ArgDecl& d : s.signature.decls()) {
    w.str(d.name);
    w.u8(static_cast<std::uint8_t>(d.kind));
    w.u8(static_cast<std::uint8_t>(d.type));
  }
}

KernelSource get_source(WireReader& r) {
  KernelSource s;
  const std::uint8_t lang = r.u8();
  if (lang > static_cast<std::uint8_t>(Language::simulated)) r.fail();
  s.language = r.ok() ? static_cast<Language>(lang) : Language::glsl;
  s.entry = r.str();
  s.text = r.str();
  s.include_dirs = get_strings(r);
  const std::uint32_t nh = r.u32();
  if (nh >= kMaxItems) r.fail();
  for (std::uint32_t i = 0; i < nh && r.ok(); ++i) {
    KernelHeader h;
    h.name = r.str();
    h.text = r.str();
    s.headers.push_back(std::move(h));
  }
  s.options = get_strings(r);
  const std::uint32_t na = r.u32();
  if (na >= kMaxItems) r.fail();
  for (std::uint32_t i = 0; i < na && r.ok(); ++i) {
    std::string name = r.str();
    const std::uint8_t kind = r.u8();
    const std::uint8_t type = r.u8();
    if (kind > static_cast<std::uint8_t>(ArgKind::scalar) ||
        type > static_cast<std::uint8_t>(ElemType::u64)) {
      r.fail();
      break;
    }
    if (static_cast<ArgKind>(kind) == ArgKind::buffer)
      s.signature.buffer(std::move(name), static_cast<ElemType>(type));
    else
      s.signature.scalar(std::move(name), static_cast<ElemType>(type));
  }
  return s;
}

void put_globals(WireWriter& w, const std::vector<ModuleGlobal>& g) {
  w.u32(static_cast<std::uint32_t>(g.size()));
  for (const auto& m : g) {
    w.str(m.name);
    w.block(m.bytes.data(), m.bytes.size());
  }
}

std::vector<ModuleGlobal> get_globals(WireReader& r) {
  const std::uint32_t n = r.u32();
  std::vector<ModuleGlobal> g;
  if (n >= kMaxItems) r.fail();
  for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
    ModuleGlobal m;
    m.name = r.str();
    auto [p, len] = r.block();
    if (p != nullptr) m.bytes.assign(p, p + len);
    g.push_back(std::move(m));
  }
  return g;
}

void put_resources(WireWriter& w, const KernelResources& k) {
  w.u32(k.registers);
  w.u32(k.spill_bytes);
  w.u32(k.local_bytes);
  w.u32(k.shared_bytes);
  w.u32(k.max_threads);
}

KernelResources get_resources(WireReader& r) {
  KernelResources k;
  k.registers = r.u32();
  k.spill_bytes = r.u32();
  k.local_bytes = r.u32();
  k.shared_bytes = r.u32();
  k.max_threads = r.u32();
  return k;
}

}  // namespace tune::detail
