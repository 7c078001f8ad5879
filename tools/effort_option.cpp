// See effort_option.hpp.
#include "effort_option.hpp"

#include <CLI/CLI.hpp>
#include <string>

namespace tune::cli {

CLI::Option* add_effort_option(CLI::App& command, Effort& effort) {
  return command.add_option("--effort")
      ->description(
          "what the tuning may spend: quick (about 30 configurations, short timing), standard "
          "(the default: every configuration up to 250, else a model-guided search of 250) or "
          "thorough (every configuration up to 4096, else a search of 1000)")
      ->check(CLI::IsMember({"quick", "standard", "thorough"}))
      ->each([&effort](const std::string& text) {
        if (auto e = parse_effort(text)) effort = *e;
      });
}

}  // namespace tune::cli
