#include "tune/device.hpp"

#include <cstdio>

#include "tune/backend/comparison_kernel.hpp"
#include "tune/backend/hash.hpp"
#include "tune/backend/includes.hpp"
#include "tune/version.hpp"

namespace tune {

std::string_view to_string(Language l) noexcept {
  switch (l) {
    case Language::glsl:
      return "glsl";
    case Language::cuda_hip:
      return "cuda_hip";
    case Language::simulated:
      return "simulated";
  }
  return "unknown";
}

bool Device::evict_binary(const CompiledKernel& /*kernel*/, std::string_view /*why*/) {
  return false;
}

std::uint64_t KernelSource::hash() const {
  std::uint64_t h = stable_hash(text, stable_hash(entry, static_cast<std::uint64_t>(language)));
  // Each part only when present, so a source without them keeps the hash it always had (and
  // the tuning rows stored under it). A tag and the count per part: {a}{} and {}{a} differ.
  auto strings = [&h](std::uint64_t tag, const std::vector<std::string>& v) {
    if (v.empty()) return;
    h = hash_combine(hash_combine(h, tag), v.size());
    for (const std::string& s : v) h = hash_combine(stable_hash(s, h), s.size());
  };
  strings(1, options);
  strings(2, include_dirs);
  if (!headers.empty()) {
    h = hash_combine(hash_combine(h, 3), headers.size());
    for (const KernelHeader& hd : headers) {
      h = hash_combine(stable_hash(hd.name, h), hd.name.size());
      h = hash_combine(stable_hash(hd.text, h), hd.text.size());
    }
  }
  if (arch_specific) h = hash_combine(h, 6);
  if (!spirv.empty()) {
    h = hash_combine(hash_combine(h, 7), spirv.size());
    for (std::uint32_t w : spirv) h = hash_combine(h, w);
  }
  // The text of every file an #include may open, as read now.
  auto closure = include_closure(*this);
  if (!closure.ok()) return stable_hash(closure.status().to_string(), hash_combine(h, 4));
  if (!closure->empty()) h = hash_combine(hash_combine(h, 5), closure->hash());
  return h;
}

std::string KernelResources::to_string() const {
  std::string s;
  auto add = [&](const char* name, std::uint32_t v) {
    if (v == 0) return;
    if (!s.empty()) s += ' ';
    s += name;
    s += '=';
    s += std::to_string(v);
  };
  add("regs", registers);
  add("spill", spill_bytes);
  add("local", local_bytes);
  add("smem", shared_bytes);
  add("max_threads", max_threads);
  return s;
}

std::string DeviceInfo::fingerprint() const {
  return backend + "|" + name + "|" + arch + "|" + driver_version;
}

std::string format_uuid(const void* bytes16) {
  const auto* b = static_cast<const unsigned char*>(bytes16);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  bool any = false;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kHex[b[i] >> 4];
    out += kHex[b[i] & 15];
    any = any || b[i] != 0;
  }
  return any ? out : std::string();
}

std::uint64_t DeviceInfo::fingerprint_hash() const { return stable_hash(fingerprint()); }

std::string DeviceInfo::toolchain_fingerprint() const {
  return compiler_version + "|libtune " + std::string(kVersion);
}

Status LaunchResets::check() const {
  for (const DeviceBuffer* b : zero)
    if (b == nullptr) return Status(StatusCode::invalid_argument, "LaunchResets: null zero buffer");
  for (const BufferRestore& r : restore) {
    if (r.dst == nullptr || r.src == nullptr)
      return Status(StatusCode::invalid_argument, "LaunchResets: null restore buffer");
    if (r.src->size_bytes() < r.dst->size_bytes()) {
      return Status(StatusCode::invalid_argument, "LaunchResets: restore source of " +
                                                      std::to_string(r.src->size_bytes()) +
                                                      " bytes is smaller than its destination of " +
                                                      std::to_string(r.dst->size_bytes()));
    }
  }
  return {};
}

Status apply_resets(Device& dev, const LaunchResets& resets) {
  TUNE_RETURN_IF_ERROR(resets.check());
  for (DeviceBuffer* b : resets.zero)
    TUNE_RETURN_IF_ERROR(dev.fill(*b, 0, LaunchResets::zero_bytes(*b)));
  for (const BufferRestore& r : resets.restore)
    TUNE_RETURN_IF_ERROR(dev.copy(*r.dst, *r.src, r.dst->size_bytes()));
  return {};
}

std::string LaunchTarget::to_string() const {
  if (kind == Kind::device_queue) return "device queue";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s %p", kind == Kind::stream ? "stream" : "command buffer",
                handle);
  return buf;
}

namespace {
Status no_target(const Device& dev, const char* what, const LaunchTarget& target) {
  return Status(StatusCode::unavailable,
                std::string(what) + ": the " + dev.info().backend + " device " + dev.info().name +
                    " cannot use a " + target.to_string() +
                    " (only its own queue); open it through its backend's interop API");
}
}  // namespace

Result<Comparison> Device::compare(const DeviceBuffer& actual, const DeviceBuffer& expected,
                                   const CompareSpec& spec) {
  return compare_by_download(*this, actual, expected, spec);
}

Status Device::launch_on(const CompiledKernel& kernel, const LaunchDims& dims, ArgList args,
                         const LaunchTarget& target) {
  if (target.is_queue()) return launch(kernel, dims, args);
  return no_target(*this, "launch", target);
}

Result<bool> Device::capturing(const LaunchTarget& /*target*/) { return false; }

Status Device::queue_waits_for(const LaunchTarget& target) {
  if (target.is_queue()) return {};
  return no_target(*this, "queue_waits_for", target);
}

Status Device::target_waits_for_queue(const LaunchTarget& target) {
  if (target.is_queue()) return {};
  return no_target(*this, "target_waits_for_queue", target);
}

}  // namespace tune
