// Reading a record and tuning its keys. See tune/record.hpp.
#include <cstring>
#include <exception>
#include <fstream>
#include <random>
#include <set>
#include <tuple>
#include <utility>

#include "record_file.hpp"
#include "tune/autotuner.hpp"
#include "tune/backend/hash.hpp"
#include "tune/log.hpp"

namespace tune {
namespace {

// One random element of type `t` in the low size_of(t) bytes: floating types in [0.5, 1)
// (exact in every width: sign 0, the exponent of 0.5, random mantissa bits), integers in
// [0, 100).
std::uint64_t random_element(ElemType t, std::mt19937_64& rng) {
  const std::uint64_t r = rng();
  switch (t) {
    case ElemType::f16:
      return (std::uint64_t{14} << 10) | (r & 0x3ff);
    case ElemType::bf16:
      return (std::uint64_t{126} << 7) | (r & 0x7f);
    case ElemType::f32:
      return (std::uint64_t{126} << 23) | (r & 0x7fffff);
    case ElemType::f64:
      return (std::uint64_t{1022} << 52) | (r & 0xfffffffffffffULL);
    default:
      return r % 100;
  }
}

// The call's arguments re-created on `dev` from the record: buffers allocated at the recorded
// size and filled at random, scalars with their recorded bits.
Status recreate_args(Device& dev, const RecordedKey& rec, std::vector<Buffer>* buffers,
                     std::vector<ArgValue>* args) {
  std::mt19937_64 rng(0x5eed);
  for (const RecordedArg& a : rec.args) {
    ArgValue v;
    v.type = a.type;
    if (a.kind == ArgKind::scalar) {
      v.bits = a.bits;
      args->push_back(v);
      continue;
    }
    const std::size_t width = size_of(a.type);
    // A size beyond the device's memory (a hostile or damaged line) is refused before anything
    // is allocated; a count whose bytes overflow is refused whatever the device reports.
    const std::uint64_t limit = dev.info().global_memory_bytes;
    std::uint64_t count_bytes = 0;
    if (__builtin_mul_overflow(a.count, static_cast<std::uint64_t>(width), &count_bytes))
      return Status(StatusCode::invalid_argument,
                    "argument '" + a.name + "': " + std::to_string(a.count) +
                        " elements recorded, more bytes than 64 bits count");
    if (limit > 0 && (a.bytes > limit || count_bytes > limit))
      return Status(StatusCode::invalid_argument,
                    "argument '" + a.name + "': " + std::to_string(a.count) + " elements, " +
                        std::to_string(a.bytes) + " bytes recorded, more than the device's " +
                        std::to_string(limit) + " bytes of memory");
    const std::uint64_t bytes = std::max(a.bytes, count_bytes);
    std::vector<unsigned char> host;
    try {
      host.resize(bytes);
    } catch (const std::exception&) {  // bad_alloc, or length_error past max_size
      return Status(StatusCode::out_of_resources,
                    "argument '" + a.name + "': no host memory for its " + std::to_string(bytes) +
                        " bytes of random contents");
    }
    for (std::uint64_t e = 0; e + width <= bytes; e += width) {
      const std::uint64_t bits = random_element(a.type, rng);
      std::memcpy(host.data() + e, &bits, width);
    }
    auto buf = dev.alloc(bytes);
    if (!buf.ok()) return Status(buf.status()).with_context("argument '" + a.name + "'");
    TUNE_RETURN_IF_ERROR(dev.upload(**buf, host.data(), bytes, 0));
    args->push_back(ArgValue::buf(**buf, a.type, a.count));
    buffers->push_back(std::move(*buf));
  }
  return dev.synchronize();
}

// The hash of the source `tuner` compiles on `dev` (0: none for its language).
std::uint64_t source_hash_on(const Autotuner& tuner, const Device& dev) {
  const KernelSource* src = tuner.kernel().source_for(dev.language());
  return src == nullptr ? 0 : src->hash();
}

// Whether `rec` was recorded from the source `tuner` compiles on `dev`: a line of another
// version of the kernel (its winner may not be this version's) is refused, naming both hashes.
Status check_source(const Autotuner& tuner, const Device& dev, const RecordedKey& rec) {
  const std::uint64_t here = source_hash_on(tuner, dev);
  if (here == rec.source_hash) return {};
  if (here == 0)
    return Status(StatusCode::unavailable, "the kernel given has no " +
                                               std::string(to_string(dev.language())) +
                                               " source to compare the recorded hash with");
  return Status(StatusCode::failed_precondition,
                "recorded from source hash 0x" + hex64(rec.source_hash) + ", but the kernel's " +
                    std::string(to_string(dev.language())) + " source given hashes to 0x" +
                    hex64(here) + ": the record was made with another version of the kernel");
}

// Tunes one recorded key with `tuner`; an error says why it was skipped. `*tuning_ran` says
// whether the line's own checks (source, arguments, key) passed and the tuning itself ran.
Status tune_one(Autotuner& tuner, Device& dev, const RecordedKey& rec, bool* tuning_ran) {
  *tuning_ran = false;
  TUNE_RETURN_IF_ERROR(check_source(tuner, dev, rec));
  std::vector<Buffer> buffers;
  std::vector<ArgValue> args;
  TUNE_RETURN_IF_ERROR(recreate_args(dev, rec, &buffers, &args));
  Result<std::string> text = tuner.key_text(dev, args);
  if (!text.ok()) return text.status();
  if (*text != rec.key)
    return Status(StatusCode::invalid_argument,
                  "the rebuilt arguments give key {" + *text + "}, not the recorded one");
  *tuning_ran = true;
  Result<Config> tuned = tuner.tune(dev, args);
  if (!tuned.ok()) return tuned.status();
  return dev.synchronize();  // the buffers die here
}

// The record's lines in order; each line that does not parse is left out and described in
// `problems` ("record file F line N skipped: why").
Result<std::vector<RecordedKey>> read_record_lines(const std::string& path,
                                                   std::vector<std::string>* problems) {
  std::ifstream in(path);
  if (!in)
    return Status(StatusCode::io_error, "record file " + path + ": cannot be opened for reading");
  std::vector<RecordedKey> out;
  std::string line, why;
  for (std::size_t n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    RecordedKey k;
    if (detail::parse_record_line(line, &k, &why))
      out.push_back(std::move(k));
    else
      problems->push_back("record file " + path + " line " + std::to_string(n) +
                          " skipped: " + why);
  }
  if (in.bad()) return Status(StatusCode::io_error, "record file " + path + ": read failed");
  return out;
}

}  // namespace

Result<std::vector<RecordedKey>> read_record(const std::string& path) {
  std::vector<std::string> problems;
  Result<std::vector<RecordedKey>> out = read_record_lines(path, &problems);
  for (const std::string& p : problems) log_warning(p);
  return out;
}

Result<RecordTuning> tune_recorded(const std::string& path, Device& dev,
                                   std::span<Autotuner* const> tuners) {
  RecordTuning out;
  Result<std::vector<RecordedKey>> record = read_record_lines(path, &out.skipped);
  if (!record.ok()) return record.status();
  // Keys whose tuning ran, well or not, as (kernel, source hash, key): each is tuned once. A
  // line refused before its tuning (another source version, sizes beyond the device, say) does
  // not hide a later line of the key. A reason already given is not given again (a record of
  // many processes repeats its lines).
  std::set<std::tuple<std::string, std::uint64_t, std::string>> done;
  std::set<std::string> reported;
  for (const RecordedKey& rec : *record) {
    if (done.count({rec.kernel, rec.source_hash, rec.key}) != 0) continue;
    // Of the tuners defining the kernel's name, the one of the recorded source; else any (its
    // line is then refused, naming both hashes).
    Autotuner* tuner = nullptr;
    for (Autotuner* t : tuners) {
      if (t == nullptr || t->kernel().name != rec.kernel) continue;
      if (tuner == nullptr || source_hash_on(*t, dev) == rec.source_hash) tuner = t;
    }
    const std::string what = "kernel " + rec.kernel + " key {" + rec.key + "}: ";
    bool tuning_ran = false;
    Status st = tuner == nullptr ? Status(StatusCode::not_found, "no Autotuner given defines it")
                                 : tune_one(*tuner, dev, rec, &tuning_ran);
    if (tuning_ran) done.emplace(rec.kernel, rec.source_hash, rec.key);
    if (st.ok()) {
      ++out.tuned;
    } else if (std::string why = what + st.to_string(); reported.insert(why).second) {
      out.skipped.push_back(std::move(why));
    }
  }
  return out;
}

}  // namespace tune
