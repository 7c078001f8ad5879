// Kernels as programs write them (tune/backend/includes.hpp, KernelSource in device.hpp): which
// files an #include may open, and what KernelSource::hash() covers: options, include dirs (in
// their order), in-memory headers and the text of every included file, so that stored
// timings of an edited kernel are never reused; and a source without any of them keeps the
// hash it always had.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "temp_dir.hpp"
#include "tune/backend/hash.hpp"
#include "tune/backend/includes.hpp"
#include "tune/device.hpp"

using namespace tune;
namespace fs = std::filesystem;

namespace {

using tune::testing::TempDir;

KernelSource glsl(std::string text) {
  KernelSource s;
  s.language = Language::glsl;
  s.text = std::move(text);
  return s;
}

IncludeClosure closure_of(const KernelSource& s) {
  auto c = include_closure(s);
  REQUIRE_MESSAGE(c.ok(), c.status().to_string());
  return *c;
}

std::vector<std::string> origins(const IncludeClosure& c) {
  std::vector<std::string> out;
  for (const auto& f : c.files) out.push_back(f.origin);
  return out;
}

}  // namespace

TEST_CASE("a source with no options, headers or includes keeps the hash it always had") {
  KernelSource s;
  s.language = Language::cuda_hip;
  s.entry = "k";
  s.text = "extern \"C\" __global__ void k() {}";
  // The formula before KernelSource had options, include_dirs and headers: rows stored under
  // it stay valid.
  CHECK(s.hash() ==
        stable_hash(s.text, stable_hash(s.entry, static_cast<std::uint64_t>(Language::cuda_hip))));
  // Pinned: a change of the hash function or of the formula shows here first.
  CHECK(hex64(s.hash()) == "e343291adad7cea7");
  // An #include of a file found nowhere (a toolkit header) adds nothing either.
  KernelSource t = s;
  t.text = "#include <cub/cub.cuh>\n" + s.text;
  CHECK(t.hash() ==
        stable_hash(t.text, stable_hash(t.entry, static_cast<std::uint64_t>(Language::cuda_hip))));
}

TEST_CASE("options, include dirs and headers change the hash; the same inputs give the same") {
  TempDir a, b;
  KernelSource base = glsl("#version 450\nvoid main() {}\n");
  const std::uint64_t h0 = base.hash();

  KernelSource opt = base;
  opt.options = {"-O0"};
  CHECK(opt.hash() != h0);
  KernelSource opt2 = base;
  opt2.options = {"-O0"};
  CHECK(opt2.hash() == opt.hash());
  opt2.options = {"-Os"};
  CHECK(opt2.hash() != opt.hash());

  KernelSource dirs = base;
  dirs.include_dirs = {a.path.string(), b.path.string()};
  KernelSource swapped = base;
  swapped.include_dirs = {b.path.string(), a.path.string()};
  CHECK(dirs.hash() != h0);
  CHECK(dirs.hash() != swapped.hash());  // the order of include dirs is part of it
  KernelSource dirs_again = base;
  dirs_again.include_dirs = {a.path.string(), b.path.string()};
  CHECK(dirs_again.hash() == dirs.hash());

  KernelSource hdr = base;
  hdr.headers = {{"x.glsl", "#define X 1\n"}};
  KernelSource hdr_edit = base;
  hdr_edit.headers = {{"x.glsl", "#define X 2\n"}};
  KernelSource hdr_renamed = base;
  hdr_renamed.headers = {{"y.glsl", "#define X 1\n"}};
  CHECK(hdr.hash() != h0);
  CHECK(hdr.hash() != hdr_edit.hash());
  CHECK(hdr.hash() != hdr_renamed.hash());

  // Parts are told apart: an option is not an include dir of the same text.
  KernelSource as_option = base;
  as_option.options = {a.path.string()};
  KernelSource as_dir = base;
  as_dir.include_dirs = {a.path.string()};
  CHECK(as_option.hash() != as_dir.hash());
}

TEST_CASE("the hash follows the text of an included file: an edit is a new hash") {
  TempDir d;
  d.write("common.glsl", "#define SCALE 2\n");
  KernelSource s = glsl("#version 450\n#include \"common.glsl\"\nvoid main() {}\n");
  s.include_dirs = {d.path.string()};
  const std::uint64_t before = s.hash();
  CHECK(s.hash() == before);  // read again, same text
  d.write("common.glsl", "#define SCALE 3\n");
  CHECK(s.hash() != before);
  // A file that includes another: the nested one counts too.
  d.write("common.glsl", "#include \"inner.glsl\"\n");
  d.write("inner.glsl", "#define SCALE 4\n");
  const std::uint64_t nested = s.hash();
  d.write("inner.glsl", "#define SCALE 5\n");
  CHECK(s.hash() != nested);
  // A file in the include dir that nothing includes does not count.
  const std::uint64_t now = s.hash();
  d.write("unrelated.glsl", "whatever");
  CHECK(s.hash() == now);
}

TEST_CASE("include_directives: quoted, angled, computed, and what is not an include") {
  const auto d = include_directives(
      "#include \"a.h\"\n"
      "  #  include <b/c.cuh>\r\n"
      "#include_next <n.h>\n"
      "#include HEADER\n"
      "#included \"no.h\"\n"
      "// #include is text here but read anyway: \n"
      "#define X 1\n"
      "#if 0\n#include \"under_if.h\"\n#endif\n");
  REQUIRE(d.size() == 5);
  CHECK(d[0].name == "a.h");
  CHECK(d[0].quoted);
  CHECK(d[1].name == "b/c.cuh");
  CHECK(!d[1].quoted);
  CHECK(d[2].name == "n.h");
  CHECK(d[3].computed);
  CHECK(d[4].name == "under_if.h");  // every #include line, whatever #if is around it
}

TEST_CASE("the search rule: in-memory headers, then beside the includer, then include dirs") {
  TempDir a, b;
  a.write("x.h", "a");
  b.write("x.h", "b");
  b.write("sub/y.h", "#include \"x.h\"\n");
  a.write("sub/x.h", "beside");
  KernelSource s = glsl("");
  s.include_dirs = {a.path.string(), b.path.string()};
  CHECK(resolve_include(s, "x.h", true, "") == (a.path / "x.h").string());
  s.include_dirs = {b.path.string(), a.path.string()};
  CHECK(resolve_include(s, "x.h", true, "") == (b.path / "x.h").string());
  // Quoted: the including file's directory first; angled: not.
  const std::string y = (b.path / "sub/y.h").string();
  s.include_dirs = {a.path.string()};
  a.write("sub/y.h", "");
  CHECK(resolve_include(s, "x.h", true, (a.path / "sub/y.h").string()) ==
        (a.path / "sub/x.h").string());
  CHECK(resolve_include(s, "x.h", false, (a.path / "sub/y.h").string()) ==
        (a.path / "x.h").string());
  // In-memory headers before any directory (NVRTC's order).
  s.headers = {{"x.h", "mem"}};
  CHECK(resolve_include(s, "x.h", true, "") == "header:x.h");
  CHECK(!resolve_include(s, "missing.h", true, "").has_value());
}

TEST_CASE("the closure holds every candidate, so a compiler's own order cannot escape the key") {
  TempDir a, b;
  a.write("x.h", "#include \"y.h\"\n");
  a.write("y.h", "from a");
  b.write("x.h", "from b");
  KernelSource s = glsl("#include \"x.h\"\n#include <nowhere.h>\n");
  s.include_dirs = {a.path.string(), b.path.string()};
  s.headers = {{"x.h", "from memory"}, {"unused.h", "never included"}};
  const IncludeClosure c = closure_of(s);
  CHECK(origins(c) == std::vector<std::string>{"header:x.h", (a.path / "x.h").string(),
                                               (a.path / "y.h").string(),
                                               (b.path / "x.h").string()});
  CHECK(!c.computed_include);
  CHECK(c.find("header:x.h")->text == "from memory");
  CHECK(c.find("header:unused.h") == nullptr);
  CHECK(c.bytes == std::string("from memory").size() + std::string("#include \"y.h\"\n").size() +
                       std::string("from a").size() + std::string("from b").size());
  // A cycle is read once.
  a.write("y.h", "#include \"x.h\"\n");
  CHECK(closure_of(s).files.size() == 4);
}

TEST_CASE("a CUDA/HIP kernel's own quoted includes also look in the working directory") {
  TempDir d;
  d.write("local.cuh", "#define LOCAL 1\n");
  const fs::path old = fs::current_path();
  fs::current_path(d.path);
  KernelSource cu;
  cu.language = Language::cuda_hip;
  cu.entry = "k";
  cu.text = "#include \"local.cuh\"\n";
  KernelSource gl = glsl(cu.text);
  const auto cu_files = closure_of(cu).files.size();
  const auto gl_files = closure_of(gl).files.size();
  fs::current_path(old);
  CHECK(cu_files == 1);  // NVRTC searches there
  CHECK(gl_files == 0);  // libtune's GLSL includer does not
}

TEST_CASE("a computed #include reads every file under the include dirs") {
  TempDir d;
  d.write("one.glsl", "1");
  d.write("deep/two.glsl", "2");
  KernelSource s = glsl("#define H \"one.glsl\"\n#include H\n");
  s.include_dirs = {d.path.string()};
  s.headers = {{"mem.glsl", "m"}};
  const IncludeClosure c = closure_of(s);
  CHECK(c.computed_include);
  CHECK(origins(c) == std::vector<std::string>{"header:mem.glsl",
                                               (d.path / "deep/two.glsl").string(),
                                               (d.path / "one.glsl").string()});
  const std::uint64_t before = s.hash();
  d.write("deep/two.glsl", "22");
  CHECK(s.hash() != before);
}

TEST_CASE("past the limits the closure is an error naming the limit") {
  TempDir d;
  d.write("big.h", std::string(100, 'x'));
  d.write("a.h", "#include \"big.h\"\n");
  KernelSource s = glsl("#include \"a.h\"\n");
  s.include_dirs = {d.path.string()};
  IncludeLimits bytes;
  bytes.max_bytes = 64;
  auto c = include_closure(s, bytes);
  REQUIRE(!c.ok());
  CHECK(c.status().code() == StatusCode::invalid_argument);
  CHECK(c.status().message().find("64 bytes") != std::string::npos);
  CHECK(c.status().message().find("big.h") != std::string::npos);
  IncludeLimits files;
  files.max_files = 1;
  auto f = include_closure(s, files);
  REQUIRE(!f.ok());
  CHECK(f.status().message().find("1 files") != std::string::npos);
  // hash() never fails: the error is folded in (the compile reports it).
  s.include_dirs.clear();
  CHECK(s.hash() == s.hash());
}

TEST_CASE("ModuleGlobal::of copies a value's or an array's bytes") {
  const float f = 1.5f;
  const ModuleGlobal g = ModuleGlobal::of("scale", f);
  CHECK(g.name == "scale");
  REQUIRE(g.bytes.size() == sizeof(float));
  float back = 0;
  std::memcpy(&back, g.bytes.data(), sizeof back);
  CHECK(back == 1.5f);
  const int arr[3] = {1, 2, 3};
  CHECK(ModuleGlobal::of("table", std::span<const int>(arr)).bytes.size() == 3 * sizeof(int));
}
