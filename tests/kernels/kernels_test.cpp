// The bundled kernels keep one contract in every language (kernels/src/contracts.cpp): the
// signature each language declares is what the shared workload passes, and the languages
// agree on name, signature, key and reset_to_zero. Runs on the simulated device; a language
// that is not built is skipped with the reason.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "skip.hpp"
#include "tune/kernels/bundled.hpp"
#include "tune/testing/sim_device.hpp"
#include "tune/tune.hpp"

namespace {

using namespace tune;
using kernels::BundledKernel;

constexpr Language kLanguages[] = {Language::glsl, Language::cuda_hip};

std::string signature_text(const KernelDef& d) {
  std::string out;
  for (const auto& a : d.signature.decls())
    out += a.name + (a.kind == ArgKind::buffer ? ":buf:" : ":val:") +
           std::string(to_string(a.type)) + " ";
  return out;
}

std::string key_text(const KernelDef& d) {
  std::string out;
  for (const auto& k : d.key) out += k.arg + "/" + std::to_string(static_cast<int>(k.bucket)) + " ";
  return out;
}

std::string zero_text(const KernelDef& d) {
  std::string out;
  for (const auto& z : d.reset_to_zero) out += z + " ";
  return out;
}

}  // namespace

TEST_CASE("every built language's kernels declare the signature their workload passes") {
  int languages = 0;
  for (Language lang : kLanguages) {
    const auto ks = kernels::bundled_kernels(lang);
    if (ks.empty()) continue;
    ++languages;
    for (const BundledKernel& k : ks) {
      CAPTURE(k.name);
      CHECK(k.def.name == k.name);
      CHECK(k.def.source_for(lang) != nullptr);
      testing::SimDevice dev;
      for (const auto& size : k.test_sizes) {
        auto w = k.workload(size);
        REQUIRE(w != nullptr);
        REQUIRE(w->setup(dev, 7).ok());
        const Status fits = k.def.signature.check(w->args());
        CHECK_MESSAGE(fits.ok(), fits.to_string());
        // What the kernel accumulates into is zeroed by the one shared helper, or handed over
        // as device work for a timing.
        CHECK(k.def.zero_reset_buffers(dev, w->args()).ok());
        auto resets = k.def.zero_resets(w->args());
        REQUIRE(resets.ok());
        CHECK(resets->zero.size() == k.def.reset_to_zero.size());
        CHECK(resets->restore.empty());
        KernelDef wrong = k.def;
        wrong.reset_to_zero = {"no_such_argument"};
        CHECK(wrong.zero_resets(w->args()).status().code() == StatusCode::invalid_argument);
      }
    }
  }
  if (languages == 0) TUNE_SKIP("no bundled kernel language is built (core-only build)");
}

TEST_CASE("the languages agree on each kernel's name, signature, key and reset_to_zero") {
  const auto glsl = kernels::bundled_kernels(Language::glsl);
  const auto cuda_hip = kernels::bundled_kernels(Language::cuda_hip);
  if (glsl.empty() || cuda_hip.empty())
    TUNE_SKIP("needs both the GLSL and the CUDA/HIP kernels built (the 'all' preset)");
  // Each language's own matrix-unit kernels aside (CUDA/HIP: the sm_90 wgmma matmuls; GLSL:
  // the cooperative-matrix ones), every kernel exists in both.
  std::size_t cuda_only = 0, glsl_only = 0;
  for (const BundledKernel& c : cuda_hip)
    if (!kernels::bundled_kernel(Language::glsl, c.name).has_value()) {
      CHECK_MESSAGE(c.name.starts_with("matmul_wgmma"), c.name << " has no GLSL twin");
      ++cuda_only;
    }
  for (const BundledKernel& g : glsl)
    if (!kernels::bundled_kernel(Language::cuda_hip, g.name).has_value()) {
      CHECK_MESSAGE(g.name.find("_coopmat") != std::string::npos,
                    g.name << " has no CUDA/HIP twin");
      ++glsl_only;
    }
  CHECK(cuda_only == 2);
  CHECK(glsl_only == 3);
  REQUIRE(glsl.size() - glsl_only + cuda_only == cuda_hip.size());
  for (const BundledKernel& g : glsl) {
    if (g.name.find("_coopmat") != std::string::npos) continue;
    CAPTURE(g.name);
    const auto c = kernels::bundled_kernel(Language::cuda_hip, g.name);
    REQUIRE(c.has_value());
    CHECK(signature_text(g.def) == signature_text(c->def));
    CHECK(key_text(g.def) == key_text(c->def));
    CHECK(zero_text(g.def) == zero_text(c->def));
  }
}

TEST_CASE("bundled_kernel finds by name and says when a kernel is not there") {
  for (Language lang : kLanguages) {
    for (const BundledKernel& k : kernels::bundled_kernels(lang)) {
      const auto found = kernels::bundled_kernel(lang, k.name);
      REQUIRE(found.has_value());
      CHECK(found->name == k.name);
    }
    CHECK_FALSE(kernels::bundled_kernel(lang, "no_such_kernel").has_value());
  }
}
