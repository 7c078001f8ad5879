// Precompiled SPIR-V for the Vulkan tests: GLSL built with shaderc here (as an application
// would build its modules offline), or SPIR-V assembly, wrapped as a KernelSource::spirv.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <shaderc/shaderc.hpp>
#include <spirv-tools/libspirv.hpp>
#include <string>
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

// SPIR-V assembly `text` (what GLSL cannot yet say with these compilers) as a module for `env`,
// validated; the test fails with the assembler's or validator's message otherwise.
inline std::vector<std::uint32_t> assemble(const char* text,
                                           spv_target_env env = SPV_ENV_VULKAN_1_2) {
  spvtools::SpirvTools tools(env);
  std::string messages;
  tools.SetMessageConsumer(
      [&](spv_message_level_t, const char*, const spv_position_t& at, const char* m) {
        messages += "line " + std::to_string(at.line) + ": " + m + "\n";
      });
  std::vector<std::uint32_t> words;
  REQUIRE_MESSAGE(tools.Assemble(text, &words), messages);
  REQUIRE_MESSAGE(tools.Validate(words), messages);
  return words;
}

// A module of nothing but `body` after its header (the reflection reads it; no device would).
inline std::vector<std::uint32_t> bare_module(std::vector<std::uint32_t> body) {
  std::vector<std::uint32_t> words = {0x07230203u, 0x00010000u, 0, 100, 0};
  words.insert(words.end(), body.begin(), body.end());
  return words;
}

// `glsl` as GLSL text, compiled by libtune.
inline KernelSource glsl_text(const char* glsl) {
  KernelSource s;
  s.language = Language::glsl;
  s.entry = "main";
  s.text = glsl;
  return s;
}

inline KernelSource precompiled(std::vector<std::uint32_t> words) {
  KernelSource s;
  s.language = Language::glsl;
  s.entry = "main";
  s.spirv = std::move(words);
  return s;
}

}  // namespace tune::testing
