// Record mode (tune/record.hpp): a key served by the fallback chain or not at all is appended
// once per process, with its arguments' types, sizes and scalar values (never contents); hits
// and tuned keys are not; processes appending at once lose or tear no line; tune_recorded
// tunes exactly the recorded keys.
#include <doctest/doctest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "../cache/cache_test_util.hpp"
#include "../core/sim_fixture.hpp"
#include "record_file.hpp"
#include "tune/record.hpp"
#include "tune/sqlite_store.hpp"

extern char** environ;

using namespace tune;
using namespace tune::testing;

namespace {

constexpr const char* kChildVar = "LIBTUNE_TEST_RECORD_CHILD";
constexpr int kLinesPerChild = 200;
constexpr int kChildren = 4;

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

AutotunerOptions recording(const std::string& file, FallbackPolicy policy) {
  AutotunerOptions o = quiet_options();
  o.store = SqliteStore::open(":memory:");
  o.fallback = policy;
  o.record = file;
  return o;
}

}  // namespace

TEST_CASE("a key served by a fallback or not at all is recorded once; hits and tunings are not") {
  cache_test::TempDir dir;
  const std::string file = dir.file("missed.jsonl");
  SimRig rig;
  rig.dev.set_cost_model(bm_model(32));
  auto keep = make_tuner(sim_kernel(bm_space({16, 32, 64})), recording(file, FallbackPolicy::keep));
  REQUIRE(keep->run(rig.dev, rig.args(1000)).ok());  // the default config: recorded
  REQUIRE(keep->run(rig.dev, rig.args(1000)).ok());  // a hit: nothing
  CHECK(lines_of(file).size() == 1);

  auto tuning =
      make_tuner(sim_kernel(bm_space({16, 32, 64})), recording(file, FallbackPolicy::tune));
  REQUIRE(tuning->run(rig.dev, rig.args(2000)).ok());  // tuned: nothing
  CHECK(lines_of(file).size() == 1);

  AutotunerOptions strict = recording(file, FallbackPolicy::tune);
  strict.strict = true;
  auto refusing = make_tuner(sim_kernel(bm_space({16, 32, 64})), strict);
  CHECK(refusing->run(rig.dev, rig.args(3000)).code() == StatusCode::failed_precondition);
  CHECK(refusing->run(rig.dev, rig.args(3000)).code() == StatusCode::failed_precondition);
  CHECK(lines_of(file).size() == 2);  // once per key and process

  Result<std::vector<RecordedKey>> rec = read_record(file);
  REQUIRE(rec.ok());
  REQUIRE(rec->size() == 2);
  const RecordedKey& k = (*rec)[0];
  CHECK(k.kernel == "sim_kernel");
  CHECK(k.key == keep->key_text(rig.dev, rig.args(1000)).value());
  CHECK(k.device == rig.dev.info().fingerprint());
  CHECK(k.source_hash != 0);
  CHECK(k.served == "default config");
  REQUIRE(k.args.size() == 2);
  CHECK(k.args[0].name == "x");
  CHECK(k.args[0].kind == ArgKind::buffer);
  CHECK(k.args[0].type == ElemType::f32);
  CHECK(k.args[0].count == 1024);
  CHECK(k.args[0].bytes == 4096 * sizeof(float));
  CHECK(k.args[1].name == "n");
  CHECK(k.args[1].kind == ArgKind::scalar);
  CHECK(k.args[1].bits == 1000);
  CHECK((*rec)[1].served == "none");
  CHECK((*rec)[1].args[1].bits == 3000);
  // Never a buffer's contents: the line is the same whatever the buffer holds.
  CHECK(lines_of(file)[0].find("\"x\"") != std::string::npos);
}

// Run as a child process by the next test case: appends kLinesPerChild long lines.
TEST_CASE("record appender child (does nothing unless run by the concurrency test)") {
  const char* file = std::getenv(kChildVar);
  if (file == nullptr) return;
  KernelSignature sig;
  std::vector<ArgValue> args;
  for (int i = 0; i < 40; ++i) {  // lines of a few KiB: more than one page of the file
    sig.scalar("argument_with_a_long_name_" + std::to_string(i), ElemType::i64);
    args.emplace_back(std::int64_t{i});
  }
  for (int i = 0; i < kLinesPerChild; ++i) {
    StoreKey key{"k", 1, std::to_string(::getpid()) + ":" + std::to_string(i), "d", "t"};
    REQUIRE(detail::append_record_line(file, detail::record_line(sig, key, args, "none")).ok());
  }
}

TEST_CASE("processes appending at once lose no line and tear none") {
  cache_test::TempDir dir;
  const std::string file = dir.file("shared.jsonl");
  const std::string var = std::string(kChildVar) + "=" + file;
  std::vector<char*> env;
  for (char** e = environ; *e != nullptr; ++e) env.push_back(*e);
  env.push_back(const_cast<char*>(var.c_str()));
  env.push_back(nullptr);
  std::string self(4096, '\0');
  const ssize_t n = ::readlink("/proc/self/exe", self.data(), self.size());
  REQUIRE(n > 0);
  self.resize(static_cast<std::size_t>(n));
  std::string filter = "-tc=record appender child*";
  std::string quiet = "--minimal";
  char* argv[] = {self.data(), filter.data(), quiet.data(), nullptr};
  std::vector<pid_t> pids;
  for (int c = 0; c < kChildren; ++c) {
    pid_t pid = 0;
    REQUIRE(::posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv, env.data()) == 0);
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  const std::vector<std::string> lines = lines_of(file);
  CHECK(lines.size() == static_cast<std::size_t>(kChildren * kLinesPerChild));
  std::set<std::string> keys;
  for (const std::string& l : lines) {
    RecordedKey k;
    std::string why;
    REQUIRE_MESSAGE(detail::parse_record_line(l, &k, &why), why);
    CHECK(k.args.size() == 40);
    keys.insert(k.key);
  }
  CHECK(keys.size() == lines.size());
}

TEST_CASE("tune_recorded tunes exactly the recorded keys") {
  cache_test::TempDir dir;
  const std::string file = dir.file("missed.jsonl");
  SimRig rig;
  rig.dev.set_cost_model(bm_model(32));
  {
    auto keep =
        make_tuner(sim_kernel(bm_space({16, 32, 64})), recording(file, FallbackPolicy::keep));
    for (int n : {1000, 1500, 1000}) REQUIRE(keep->run(rig.dev, rig.args(n)).ok());
  }
  // A second process met n=1500 too, and a kernel this program does not give.
  {
    std::ofstream out(file, std::ios::app);
    out << lines_of(file)[1] << "\n";
    std::string other = lines_of(file)[0];
    other.replace(other.find("sim_kernel"), 10, "other_kern");
    out << other << "\n"
        << "not json\n";
  }
  std::vector<TuningReport> heard;
  AutotunerOptions o = quiet_options();
  o.store = SqliteStore::open(":memory:");
  o.listener = [&](const TuningReport& r) { heard.push_back(r); };
  auto offline = make_tuner(sim_kernel(bm_space({16, 32, 64})), o);
  Result<RecordTuning> done = tune_recorded(file, rig.dev, *offline);
  REQUIRE(done.ok());
  CHECK(done->tuned == 2);
  REQUIRE(done->skipped.size() == 1);
  CHECK(done->skipped[0].find("other_kern") != std::string::npos);
  REQUIRE(heard.size() == 2);
  std::set<std::string> keys;
  for (const TuningReport& r : heard) {
    CHECK(r.source == ResultSource::tuned);
    CHECK(r.results.size() == 3);
    CHECK(r.winner.to_string() == "BM=32");
    keys.insert(r.key);
  }
  CHECK(keys == std::set<std::string>{offline->key_text(rig.dev, rig.args(1000)).value(),
                                      offline->key_text(rig.dev, rig.args(1500)).value()});
  CHECK(read_record(dir.file("absent.jsonl")).status().code() == StatusCode::io_error);
}
