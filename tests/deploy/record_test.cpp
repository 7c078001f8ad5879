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

#include <nlohmann/json.hpp>

#include "../cache/cache_test_util.hpp"
#include "../core/sim_fixture.hpp"
#include "record_file.hpp"
#include "tune/backend/hash.hpp"
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
  REQUIRE(done->skipped.size() == 2);
  CHECK(done->skipped[0].find("line 5 skipped: not a JSON object") != std::string::npos);
  CHECK(done->skipped[1].find("kernel other_kern key {") != std::string::npos);
  CHECK(done->skipped[1].find("no Autotuner given defines it") != std::string::npos);
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

namespace {

// Records the keys n=1000 and n=1500 of sim_kernel into `file` (a keep-policy run), and returns
// the two lines.
std::vector<std::string> record_two_keys(SimRig& rig, const std::string& file) {
  auto keep = make_tuner(sim_kernel(bm_space({16, 32, 64})), recording(file, FallbackPolicy::keep));
  for (int n : {1000, 1500}) REQUIRE(keep->run(rig.dev, rig.args(n)).ok());
  std::vector<std::string> lines = lines_of(file);
  REQUIRE(lines.size() == 2);
  return lines;
}

// `line` with its "source_hash" field's value replaced by `value` (the whole field removed when
// `value` is empty).
std::string with_source_hash(std::string line, const std::string& value) {
  const std::string field = "\"source_hash\":";
  const std::size_t at = line.find(field);
  REQUIRE(at != std::string::npos);
  const std::size_t end = line.find('"', at + field.size() + 1) + 1;  // past the value's quote
  if (value.empty()) {  // the field and the comma before it (the fields are in name order)
    REQUIRE(line[at - 1] == ',');
    return line.erase(at - 1, end - at + 1);
  }
  return line.replace(at, end - at, field + "\"" + value + "\"");
}

AutotunerOptions offline_options(std::vector<TuningReport>* heard) {
  AutotunerOptions o = quiet_options();
  o.store = SqliteStore::open(":memory:");
  o.listener = [heard](const TuningReport& r) { heard->push_back(r); };
  return o;
}

bool any_has(const std::vector<std::string>& texts, std::initializer_list<std::string> parts) {
  for (const std::string& t : texts) {
    bool all = true;
    for (const std::string& p : parts) all = all && t.find(p) != std::string::npos;
    if (all) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("tune_recorded refuses a line of another source version, naming kernel, key, hashes") {
  cache_test::TempDir dir;
  const std::string file = dir.file("missed.jsonl");
  SimRig rig;
  rig.dev.set_cost_model(bm_model(32));
  const std::vector<std::string> lines = record_two_keys(rig, file);
  const KernelDef v1 = sim_kernel(bm_space({16, 32, 64}));
  const std::uint64_t h1 = v1.source_for(rig.dev.language())->hash();
  RecordedKey rec;
  std::string why;
  REQUIRE(detail::parse_record_line(lines[0], &rec, &why));
  CHECK(rec.source_hash == h1);

  SUBCASE("matching: the kernel given is the version recorded, every key is tuned") {
    std::vector<TuningReport> heard;
    auto offline = make_tuner(v1, offline_options(&heard));
    Result<RecordTuning> done = tune_recorded(file, rig.dev, *offline);
    REQUIRE(done.ok());
    CHECK(done->tuned == 2);
    CHECK(done->skipped.empty());
    CHECK(heard.size() == 2);
  }
  SUBCASE("mismatching: a changed kernel refuses every line, a stale line beside a fresh one") {
    KernelDef v2 = v1;
    v2.sources[0].text += "\n// version 2";
    const std::uint64_t h2 = v2.source_for(rig.dev.language())->hash();
    REQUIRE(h2 != h1);
    std::vector<TuningReport> heard;
    auto changed = make_tuner(v2, offline_options(&heard));
    Result<RecordTuning> done = tune_recorded(file, rig.dev, *changed);
    REQUIRE(done.ok());
    CHECK(done->tuned == 0);
    CHECK(heard.empty());
    REQUIRE(done->skipped.size() == 2);
    for (const std::string& s : done->skipped) {
      CAPTURE(s);
      CHECK(s.rfind("kernel sim_kernel key {" + rec.key.substr(0, 2), 0) == 0);
      CHECK(s.find("0x" + hex64(h1)) != std::string::npos);
      CHECK(s.find("0x" + hex64(h2)) != std::string::npos);
      CHECK(s.find("another version of the kernel") != std::string::npos);
    }
    // The record of v1 with a line recorded by v2 appended: v1 tunes both keys and refuses the
    // v2 line of n=1000 (the same key, another source), and v2 tunes that line alone.
    {
      std::ofstream out(file, std::ios::app);
      out << with_source_hash(lines[0], "0x" + hex64(h2)) << "\n";
    }
    auto original = make_tuner(v1, offline_options(&heard));
    done = tune_recorded(file, rig.dev, *original);
    REQUIRE(done.ok());
    CHECK(done->tuned == 2);
    REQUIRE(done->skipped.size() == 1);
    CHECK(done->skipped[0] ==
          "kernel sim_kernel key {" + rec.key + "}: failed_precondition: " +
              "recorded from source hash 0x" + hex64(h2) + ", but the kernel's " +
              std::string(to_string(rig.dev.language())) + " source given hashes to 0x" +
              hex64(h1) + ": the record was made with another version of the kernel");
    heard.clear();
    auto changed_again = make_tuner(v2, offline_options(&heard));
    done = tune_recorded(file, rig.dev, *changed_again);
    REQUIRE(done.ok());
    CHECK(done->tuned == 1);
    CHECK(done->skipped.size() == 2);
    REQUIRE(heard.size() == 1);
    CHECK(heard[0].key == rec.key);
  }
  SUBCASE("two kernels of one name given: the one of the recorded source tunes") {
    KernelDef v2 = v1;
    v2.sources[0].text += "\n// version 2";
    std::vector<TuningReport> heard_v1, heard_v2;
    auto original = make_tuner(v1, offline_options(&heard_v1));
    auto changed = make_tuner(v2, offline_options(&heard_v2));
    for (int order = 0; order < 2; ++order) {
      CAPTURE(order);
      heard_v1.clear();
      Result<RecordTuning> done = order == 0 ? tune_recorded(file, rig.dev, *original, *changed)
                                             : tune_recorded(file, rig.dev, *changed, *original);
      REQUIRE(done.ok());
      CHECK(done->tuned == 2);
      CHECK(done->skipped.empty());
      CHECK(heard_v2.empty());
    }
    CHECK(heard_v1.empty());  // the second pass found both keys decided in memory
  }
  SUBCASE("missing or malformed: the line is refused, naming kernel and key") {
    cache_test::TempDir other;
    const std::string bad = other.file("bad.jsonl");
    {
      std::ofstream out(bad);
      out << with_source_hash(lines[0], "") << "\n" << with_source_hash(lines[1], "12") << "\n";
    }
    std::vector<TuningReport> heard;
    auto offline = make_tuner(v1, offline_options(&heard));
    Result<RecordTuning> done = tune_recorded(bad, rig.dev, *offline);
    REQUIRE(done.ok());
    CHECK(done->tuned == 0);
    CHECK(heard.empty());
    REQUIRE(done->skipped.size() == 2);
    CHECK(done->skipped[0] == "record file " + bad + " line 1 skipped: kernel sim_kernel key {" +
                                  rec.key +
                                  "}: no 'source_hash': which version of the kernel's source "
                                  "it was recorded from is unknown");
    CHECK(done->skipped[1].find("line 2 skipped: kernel sim_kernel key {") != std::string::npos);
    CHECK(done->skipped[1].find("'source_hash' is not a 0x-prefixed hex string") !=
          std::string::npos);
  }
}

TEST_CASE("damaged record lines are skipped with their reason; the rest of the file goes on") {
  cache_test::TempDir dir;
  const std::string file = dir.file("missed.jsonl");
  SimRig rig;
  rig.dev.set_cost_model(bm_model(32));
  const std::vector<std::string> lines = record_two_keys(rig, file);
  const std::string& good = lines[0];
  const std::vector<std::string> damaged = {
      good.substr(0, good.size() / 2),                   // torn mid-line
      good.substr(0, good.size() - 1),                   // the last brace lost
      "[1, 2, 3]",                                       // JSON, not an object
      std::string("\x01\xff\xfe garbage \0 bytes", 20),  // binary
      "{\"kernel\": \"sim_kernel\", \"key\": 7}",        // a key that is no text
      "{\"kernel\": \"k\", \"key\": \"n=1\", \"device\": \"d\", \"source_hash\": \"0x1\"}",
      "{\"kernel\": \"k\", \"key\": \"n=1\", \"device\": \"d\", \"source_hash\": \"0x1\", "
      "\"args\": [{\"name\": \"x\", \"kind\": \"pointer\", \"type\": \"f32\"}]}",
      "{\"kernel\": \"k\", \"key\": \"n=1\", \"device\": \"d\", \"source_hash\": \"0x1\", "
      "\"args\": [{\"name\": \"x\", \"kind\": \"buffer\", \"type\": \"f32\", \"count\": -1, "
      "\"bytes\": 4}]}",
      // Fields of the wrong type, where a reader that asks for a string would throw.
      "{\"kernel\": \"k\", \"key\": \"n=1\", \"device\": \"d\", \"source_hash\": \"0x1\", "
      "\"served\": 5, \"args\": [{\"name\": \"x\", \"kind\": 7}]}",
      "{\"kernel\": \"k\", \"key\": \"n=1\", \"device\": \"d\", \"source_hash\": 1, \"args\": []}",
  };
  // A whole line whose buffer is larger than the device (recorded so by a damaged or hostile
  // writer), twice: refused at tuning, reported once, and no hiding of the good line after it.
  std::string huge = lines[0];
  const std::size_t at = huge.find("\"count\":1024");
  REQUIRE(at != std::string::npos);
  huge.replace(at, 12, "\"count\":4611686018427387904");
  {
    std::ofstream out(file, std::ios::trunc | std::ios::binary);
    for (const std::string& d : damaged) out << d << "\n";
    out << huge << "\n" << huge << "\n";
    out << lines[1] << "\n" << lines[0];  // the last line without its newline: still whole
  }
  std::vector<TuningReport> heard;
  auto offline = make_tuner(sim_kernel(bm_space({16, 32, 64})), offline_options(&heard));
  Result<RecordTuning> done = tune_recorded(file, rig.dev, *offline);
  REQUIRE(done.ok());
  CHECK(done->tuned == 2);
  CHECK(heard.size() == 2);
  REQUIRE(done->skipped.size() == damaged.size() + 1);
  CHECK(done->skipped.back().find("kernel sim_kernel key {") == 0);
  CHECK(done->skipped.back().find("argument 'x': 4611686018427387904 elements") !=
        std::string::npos);
  CHECK(done->skipped.back().find("more than the device's") != std::string::npos);
  for (std::size_t i = 0; i < damaged.size(); ++i) {
    CAPTURE(done->skipped[i]);
    CHECK(done->skipped[i].rfind(
              "record file " + file + " line " + std::to_string(i + 1) + " skipped: ", 0) == 0);
  }
  CHECK(any_has(done->skipped, {"line 3 skipped: not a JSON object"}));
  CHECK(any_has(done->skipped, {"line 5 skipped: 'key' is missing or not a string"}));
  CHECK(any_has(done->skipped, {"line 6 skipped: 'args' is missing or not an array"}));
  CHECK(any_has(done->skipped, {"line 7 skipped: argument 'x': kind is neither"}));
  CHECK(any_has(done->skipped, {"line 8 skipped: argument 'x': 'count' and 'bytes'"}));
  CHECK(any_has(done->skipped, {"line 9 skipped: argument 'x': kind is neither"}));
  CHECK(any_has(done->skipped, {"line 10 skipped: kernel k key {n=1}: 'source_hash' is not"}));
  // read_record reads the same lines, the damaged ones left out.
  Result<std::vector<RecordedKey>> read = read_record(file);
  REQUIRE(read.ok());
  CHECK(read->size() == 4);
}

namespace {

// Every line a hostile writer could make of `good` by giving one field (at any depth) a value
// of another type.
std::vector<std::string> retyped_lines(const std::string& good) {
  const nlohmann::json base = nlohmann::json::parse(good);
  const std::vector<nlohmann::json> values = {
      nullptr, 5, -1, 1e300, true, "x", "0x", nlohmann::json::array(), nlohmann::json::object()};
  std::vector<std::string> out;
  const nlohmann::json flat = base.flatten();  // "/args/0/name": "a", ...
  for (const auto& item : flat.items()) {
    const nlohmann::json::json_pointer at(item.key());
    for (const nlohmann::json& v : values) {
      nlohmann::json line = base;
      line[at] = v;
      out.push_back(line.dump());
      if (!at.parent_pointer().empty()) {  // the field's container retyped too
        line = base;
        line[at.parent_pointer()] = v;
        out.push_back(line.dump());
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("a record of fields retyped at every depth: every line read or refused, nothing thrown") {
  cache_test::TempDir dir;
  const std::string file = dir.file("missed.jsonl");
  SimRig rig;
  rig.dev.set_cost_model(bm_model(32));
  const std::vector<std::string> lines = record_two_keys(rig, file);
  const std::vector<std::string> hostile = retyped_lines(lines[0]);
  REQUIRE(hostile.size() > 200);
  {
    std::ofstream out(file, std::ios::trunc);
    for (const std::string& l : hostile) out << l << "\n";
  }
  for (const std::string& l : hostile) {
    RecordedKey k;
    std::string why;
    CHECK_NOTHROW((void)detail::parse_record_line(l, &k, &why));
  }
  std::vector<TuningReport> heard;
  auto offline = make_tuner(sim_kernel(bm_space({16, 32, 64})), offline_options(&heard));
  Result<RecordTuning> done = Status(StatusCode::internal, "not run");
  CHECK_NOTHROW(done = tune_recorded(file, rig.dev, *offline));
  REQUIRE(done.ok());
  // The retyped "served" and "value" fields are not read: those lines are the good key's.
  CHECK(done->tuned >= 1);
  CHECK(done->tuned + done->skipped.size() <= hostile.size());
  for (const std::string& why : done->skipped) CHECK(!why.empty());
}
