// open_device / list_devices over the generated backend table.
#include "tune/backend/registry.hpp"

#include <cstdlib>
#include <string>

#include "tune/environment.hpp"

namespace tune {
namespace {

const detail::BackendEntry* find_backend(std::string_view name) {
  for (const auto& e : detail::backend_table())
    if (name == e.name) return &e;
  return nullptr;
}

std::string compiled_list() {
  std::string s;
  for (const auto& e : detail::backend_table()) {
    if (!s.empty()) s += ", ";
    s += e.name;
  }
  return s.empty() ? "none" : s;
}

Result<std::unique_ptr<Device>> open_spec(std::string_view spec, std::string_view origin) {
  auto colon = spec.find(':');
  std::string_view backend = spec.substr(0, colon);
  std::string_view selector = colon == std::string_view::npos ? "" : spec.substr(colon + 1);
  const auto* e = find_backend(backend);
  if (e == nullptr) {
    return Status(StatusCode::not_found,
                  std::string(origin) + "backend '" + std::string(backend) +
                      "' is not compiled into this build (compiled: " + compiled_list() + ")");
  }
  auto dev = e->open(selector);
  if (!dev.ok()) {
    Status s = dev.status();
    s.with_context(std::string(origin) + "opening " + std::string(spec));
    return s;
  }
  return dev;
}

}  // namespace

std::vector<std::string> compiled_backends() {
  std::vector<std::string> out;
  for (const auto& e : detail::backend_table()) out.emplace_back(e.name);
  return out;
}

Result<std::vector<DeviceListing>> list_devices(std::string_view backend) {
  const auto* e = find_backend(backend);
  if (e == nullptr) {
    return Status(StatusCode::not_found,
                  "backend '" + std::string(backend) +
                      "' is not compiled into this build (compiled: " + compiled_list() + ")");
  }
  return e->list();
}

Result<std::unique_ptr<Device>> open_device(std::string_view spec) {
  if (!spec.empty()) return open_spec(spec, "");
  if (const std::string env = env_text("TUNE_DEVICE"); !env.empty())
    return open_spec(env, "TUNE_DEVICE: ");
  if (const std::string env = env_text("TUNE_BACKEND"); !env.empty())
    return open_spec(env, "TUNE_BACKEND: ");
  std::string why;
  for (const auto& e : detail::backend_table()) {
    auto dev = e.open("");
    if (dev.ok()) return dev;
    why += std::string("\n  ") + e.name + ": " + dev.status().to_string();
  }
  return Status(StatusCode::unavailable,
                "no device could be opened (compiled backends: " + compiled_list() + ")" + why);
}

}  // namespace tune
