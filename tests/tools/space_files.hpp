// The T1 examples of tests/tools/data imported into space files with the real `tune
// import-space`, for the tests of the space library (space_test.cpp and the run tests).
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <utility>

#include "space/space_file.hpp"
#include "tune_process.hpp"

namespace tune::testing {

inline std::string t1_example(const std::string& name) {
  return std::string(TUNE_TOOLS_TEST_DATA) + "/" + name;
}

// `tune import-space` of the example `t1_name` into `scratch`; the space file's path.
inline std::string import_example(const TuneCli& cli, const ScratchDir& scratch,
                                  const std::string& t1_name) {
  const std::string out = (scratch.path() / (t1_name + ".space.json")).string();
  const ProcessResult r = cli.run({"import-space", t1_example(t1_name), "--out", out});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  return out;
}

// The points of t1_stencil.json's space and those its conditions accept, counted as Kernel
// Tuner does (every combination, each condition a Python expression on it).
inline std::pair<int, int> stencil_points() {
  int total = 0, valid = 0;
  for (int bx = 16; bx <= 128; bx += 16)
    for (int by : {1, 2, 4, 8})
      for (int tx : {1, 2, 4})
        for (int shared : {0, 1}) {
          (void)tx;
          ++total;
          if (bx * by <= 256 && (shared == 0 || bx % 32 == 0)) ++valid;
        }
  return {total, valid};
}

// The example read back as a SpaceFile.
inline tune::cli::SpaceFile load_example(const TuneCli& cli, const ScratchDir& scratch,
                                         const std::string& t1_name) {
  auto space = tune::cli::read_space_file(import_example(cli, scratch, t1_name));
  REQUIRE_MESSAGE(space.ok(), space.status().to_string());
  return *space;
}

}  // namespace tune::testing
