// A scratch directory for one test (removed with everything in it at the end of its scope),
// and writing a file under it (parent directories made).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace tune::testing {

class TempDir {
 public:
  explicit TempDir(std::string_view prefix = "libtune-test") {
    static int counter = 0;
    path =
        std::filesystem::temp_directory_path() /
        (std::string(prefix) + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // Writes `text` to `rel` under the directory; returns the file's path.
  std::string write(const std::string& rel, const std::string& text) const {
    const std::filesystem::path p = path / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }

  std::filesystem::path path;
};

}  // namespace tune::testing
