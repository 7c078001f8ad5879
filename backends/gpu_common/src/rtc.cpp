// Config -> compiler options, resource-log parsing, and the binary cache.
#include "tune/gpu/rtc.hpp"

#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>
#include <thread>
#include <variant>

#include "tune/hash.hpp"
#include "tune/log.hpp"

namespace tune::gpu {

std::vector<std::string> config_defines(const Config& config) {
  std::vector<std::string> out;
  out.reserve(config.params().size() + 6);
  for (const auto& [name, value] : config.params()) {
    std::string def = "-D" + name + "=";
    if (const auto* i = std::get_if<std::int64_t>(&value)) {
      def += std::to_string(*i);
    } else if (const auto* b = std::get_if<bool>(&value)) {
      def += *b ? "1" : "0";
    } else {
      def += std::get<std::string>(value);
    }
    out.push_back(std::move(def));
  }
  const LaunchOptions& l = config.launch();
  if (l.block.x != 0) {
    out.push_back("-DTUNE_BLOCK_X=" + std::to_string(l.block.x));
    out.push_back("-DTUNE_BLOCK_Y=" + std::to_string(l.block.y == 0 ? 1 : l.block.y));
    out.push_back("-DTUNE_BLOCK_Z=" + std::to_string(l.block.z == 0 ? 1 : l.block.z));
  }
  if (l.num_warps != 0) out.push_back("-DTUNE_NUM_WARPS=" + std::to_string(l.num_warps));
  if (l.num_stages != 0) out.push_back("-DTUNE_NUM_STAGES=" + std::to_string(l.num_stages));
  if (l.shared_bytes != 0) out.push_back("-DTUNE_SHARED_BYTES=" + std::to_string(l.shared_bytes));
  return out;
}

Result<std::vector<std::string>> compile_options(const RtcCompiler& compiler, std::string_view arch,
                                                 const Config& config) {
  std::vector<std::string> opts = compiler.base_options();
  auto target = compiler.target_options(arch);
  if (!target.ok()) return target.status();
  opts.insert(opts.end(), target->begin(), target->end());
  if (config.launch().max_registers > 0) {
    std::string reg = compiler.max_registers_option(config.launch().max_registers);
    if (!reg.empty()) opts.push_back(std::move(reg));
  }
  auto defs = config_defines(config);
  opts.insert(opts.end(), defs.begin(), defs.end());
  return opts;
}

namespace {

// The number just before `suffix` in `line`, or 0.
std::uint32_t number_before(std::string_view line, std::string_view suffix) {
  auto pos = line.find(suffix);
  if (pos == std::string_view::npos) return 0;
  auto end = pos;
  while (end > 0 && line[end - 1] == ' ') --end;
  auto begin = end;
  while (begin > 0 && line[begin - 1] >= '0' && line[begin - 1] <= '9') --begin;
  std::uint32_t v = 0;
  std::from_chars(line.data() + begin, line.data() + end, v);
  return v;
}

std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

constexpr char kMagic[8] = {'T', 'U', 'N', 'E', 'B', 'I', 'N', '1'};

struct EntryHeader {
  char magic[8];
  std::uint64_t key_bytes;
  std::uint64_t log_bytes;
  std::uint64_t binary_bytes;
  std::uint64_t checksum;  // stable_hash of key + log + binary
};

std::uint64_t entry_checksum(std::string_view key, std::string_view log, std::string_view bin) {
  return stable_hash(bin, stable_hash(log, stable_hash(key)));
}

}  // namespace

KernelResources parse_resource_log(std::string_view log) {
  KernelResources r;
  std::size_t start = 0;
  while (start < log.size()) {
    std::size_t end = log.find('\n', start);
    if (end == std::string_view::npos) end = log.size();
    std::string_view line = log.substr(start, end - start);
    if (line.find("Used") != std::string_view::npos && line.find("registers") != line.npos)
      r.registers = number_before(line, "registers");
    if (line.find("spill stores") != std::string_view::npos)
      r.spill_bytes = number_before(line, "bytes spill stores");
    if (line.find("bytes stack frame") != std::string_view::npos)
      r.local_bytes = number_before(line, "bytes stack frame");
    if (line.find("bytes smem") != std::string_view::npos)
      r.shared_bytes = number_before(line, "bytes smem");
    start = end + 1;
  }
  return r;
}

std::shared_ptr<BinaryCache> BinaryCache::open_default(std::string_view kind) {
  bool writable = true;
  if (const char* mode = std::getenv("TUNE_CACHE"); mode != nullptr) {
    std::string_view m(mode);
    if (m == "off" || m == "0") return nullptr;
    if (m == "readonly") writable = false;
  }
  std::filesystem::path base;
  if (const char* d = std::getenv("TUNE_CACHE_DIR"); d != nullptr && *d != '\0') {
    base = d;
  } else if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0') {
    base = std::filesystem::path(x) / "libtune";
  } else if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') {
    base = std::filesystem::path(h) / ".cache" / "libtune";
  } else {
    return nullptr;
  }
  return std::make_shared<BinaryCache>(base / std::string(kind), writable);
}

BinaryCache::BinaryCache(std::filesystem::path dir, bool writable)
    : dir_(std::move(dir)), writable_(writable) {}

std::filesystem::path BinaryCache::path_for(std::uint64_t hash) const {
  return dir_ / (hex64(hash) + ".bin");
}

std::optional<RtcOutput> BinaryCache::load(std::string_view key_text) {
  const auto path = path_for(stable_hash(key_text));
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;  // a plain miss
  EntryHeader h{};
  RtcOutput out;
  std::string key;
  bool good = static_cast<bool>(in.read(reinterpret_cast<char*>(&h), sizeof h)) &&
              std::memcmp(h.magic, kMagic, sizeof kMagic) == 0 && h.key_bytes < (1u << 20) &&
              h.log_bytes < (64u << 20) && h.binary_bytes < (1ull << 32);
  if (good) {
    key.resize(h.key_bytes);
    out.log.resize(h.log_bytes);
    out.binary.resize(h.binary_bytes);
    good = in.read(key.data(), static_cast<std::streamsize>(key.size())) &&
           in.read(out.log.data(), static_cast<std::streamsize>(out.log.size())) &&
           in.read(out.binary.data(), static_cast<std::streamsize>(out.binary.size())) &&
           h.checksum == entry_checksum(key, out.log, out.binary);
  }
  if (!good) {
    log_warning("binary cache: ignoring corrupt entry " + path.string());
    return std::nullopt;
  }
  if (key != key_text) return std::nullopt;  // a 64-bit hash collision: treat as a miss
  out.from_cache = true;
  return out;
}

void BinaryCache::store(std::string_view key_text, const RtcOutput& output) {
  if (!writable_) return;
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) {
    log_warning("binary cache: cannot create " + dir_.string() + ": " + ec.message());
    return;
  }
  static std::atomic<std::uint64_t> counter{0};
  const auto final_path = path_for(stable_hash(key_text));
  std::ostringstream tmp_name;
  tmp_name << final_path.filename().string() << ".tmp." << ::getpid() << "."
           << std::hash<std::thread::id>{}(std::this_thread::get_id()) << "." << counter++;
  const auto tmp_path = dir_ / tmp_name.str();
  EntryHeader h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.key_bytes = key_text.size();
  h.log_bytes = output.log.size();
  h.binary_bytes = output.binary.size();
  h.checksum = entry_checksum(key_text, output.log, output.binary);
  {
    std::ofstream out(tmp_path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(&h), sizeof h);
    out.write(key_text.data(), static_cast<std::streamsize>(key_text.size()));
    out.write(output.log.data(), static_cast<std::streamsize>(output.log.size()));
    out.write(output.binary.data(), static_cast<std::streamsize>(output.binary.size()));
    out.flush();
    if (!out) {
      log_warning("binary cache: cannot write " + tmp_path.string());
      out.close();
      std::filesystem::remove(tmp_path, ec);
      return;
    }
  }
  std::filesystem::rename(tmp_path, final_path, ec);
  if (ec) {
    log_warning("binary cache: cannot rename into " + final_path.string() + ": " + ec.message());
    std::filesystem::remove(tmp_path, ec);
  }
}

Result<RtcOutput> compile_for(RtcCompiler& compiler, std::string_view arch,
                              const KernelSource& source, const Config& config,
                              BinaryCache* cache) {
  if (source.language != Language::cuda_hip) {
    return Status(StatusCode::invalid_argument, "source language is " +
                                                    std::string(to_string(source.language)) +
                                                    ", this compiler takes cuda_hip");
  }
  auto opts = compile_options(compiler, arch, config);
  if (!opts.ok()) return opts.status();
  // Everything that decides the binary: compiler, options (arch included), source and entry.
  std::string key = compiler.version();
  key += '\n';
  for (const auto& o : *opts) {
    key += o;
    key += ' ';
  }
  key += '\n';
  key += hex64(stable_hash(source.text, stable_hash(source.entry)));
  if (cache != nullptr) {
    if (auto hit = cache->load(key)) return std::move(*hit);
  }
  const std::string file = (source.entry.empty() ? std::string("kernel") : source.entry) + ".cu";
  auto out = compiler.compile(source.text, file, *opts);
  if (!out.ok()) return out;
  if (cache != nullptr) cache->store(key, *out);
  return out;
}

}  // namespace tune::gpu
