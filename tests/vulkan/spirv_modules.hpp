// Precompiled SPIR-V for the Vulkan tests: GLSL built with shaderc here (as an application
// would build its modules offline) and wrapped as a KernelSource::spirv.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <shaderc/shaderc.hpp>
#include <utility>
#include <vector>

#include "tune/tune.hpp"

namespace tune::testing {

// `glsl` as a compute module for `env`; the test fails with the compiler's message otherwise.
inline std::vector<std::uint32_t> to_spirv(
    const char* glsl, shaderc_env_version env = shaderc_env_version_vulkan_1_2) {
  shaderc::Compiler compiler;
  shaderc::CompileOptions opts;
  opts.SetTargetEnvironment(shaderc_target_env_vulkan, env);
  auto r = compiler.CompileGlslToSpv(glsl, shaderc_compute_shader, "test.comp", opts);
  REQUIRE_MESSAGE(r.GetCompilationStatus() == shaderc_compilation_status_success,
                  r.GetErrorMessage());
  return {r.cbegin(), r.cend()};
}

inline KernelSource precompiled(std::vector<std::uint32_t> words) {
  KernelSource s;
  s.language = Language::glsl;
  s.entry = "main";
  s.spirv = std::move(words);
  return s;
}

}  // namespace tune::testing
