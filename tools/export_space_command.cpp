// `tune export-space`. See export_space_command.hpp.
#include "export_space_command.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "space/space_file.hpp"
#include "space/t1_writer.hpp"

namespace tune::cli {
namespace {

namespace fs = std::filesystem;

struct ExportArgs {
  std::string file;
  std::string format = "t1";
  std::string out = "-";
};

int cmd_export_space(const ExportArgs& a) {
  auto space = read_space_file(a.file);
  if (!space.ok()) {
    std::fprintf(stderr, "tune export-space: %s\n", space.status().message().c_str());
    return 1;
  }
  std::string kernel_file = space->kernel_file;
  if (a.out != "-")
    kernel_file =
        fs::path(kernel_file).lexically_relative(fs::absolute(a.out).parent_path()).string();
  const std::string text = t1_document(*space, kernel_file).dump(2) + "\n";
  if (a.out == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
  std::ofstream f(a.out, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f) {
    std::fprintf(stderr, "tune export-space: cannot write %s\n", a.out.c_str());
    return 1;
  }
  std::printf("wrote %s: T1 of %s\n", a.out.c_str(), space->kernel.c_str());
  return 0;
}

}  // namespace

void add_export_space_command(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd = app.add_subcommand("export-space", "Write a libtune space file back as T1");
  cmd->add_option("file", args->file, "The space file (from tune import-space)")->required();
  cmd->add_option("--format", args->format, "The format to write (t1)")
      ->check(CLI::IsMember({"t1"}));
  cmd->add_option("--out", args->out, "The file to write ('-', the default: stdout)");
  cmd->callback([args] {
    const int rc = cmd_export_space(*args);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace tune::cli
