// tune-lab: the research commands behind the figures in bench/RESULTS.md. Built with the studies
// (TUNE_BUILD_STUDIES), never installed: what a user needs is in `tune`.
//
//   tune-lab stability [--device SPEC] [--kernel NAME] [--runs N] [--quick] [--json] [--quality]
//                      [--heat-ms MS] ...
//                                     how often the winner changes when a key is re-tuned, and
//                                     (--quality) how far each pick is from the fastest
//   tune-lab flush-check [--device SPEC] [--reps N] [--bytes N] [--json]
//                                     whether timing's cache flush makes a launch cold
//   tune-lab turns [--device SPEC] [--kernel NAME] [--size N] [--config TEXT] ...
//                                     near-equal configurations timed in turns of 1-100 launches
#include <CLI/CLI.hpp>

#include <string>

#include "flush_check_command.hpp"
#include "stability_command.hpp"
#include "tune/version.hpp"
#include "turns_command.hpp"

int main(int argc, char** argv) {
  CLI::App app{"tune-lab: libtune's research commands (studies/; not installed)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(tune::kVersion));
  tune::cli::add_stability_command(app);
  tune::cli::add_flush_check_command(app);
  tune::cli::add_turns_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);  // a command's failure too (CLI::RuntimeError, its message printed)
  }
  return 0;
}
