// The record file's lines. See record_file.hpp and tune/record.hpp.
#include "record_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "tune/backend/hash.hpp"

namespace tune::detail {
namespace {

using nlohmann::json;

// Field `name` of object `j` when it is a string, else empty (json::value would throw on a field
// of another type: a hostile line must not).
std::string string_field(const json& j, const char* name) {
  const auto it = j.find(name);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool parse_hex(const json& j, std::uint64_t* out) {
  if (!j.is_string()) return false;
  const std::string& s = j.get_ref<const std::string&>();
  if (s.size() < 3 || s.size() > 18 || s[0] != '0' || s[1] != 'x') return false;
  char* end = nullptr;
  errno = 0;
  *out = std::strtoull(s.c_str() + 2, &end, 16);
  return errno == 0 && end == s.c_str() + s.size();
}

bool parse_elem_type(const json& j, ElemType* out) {
  if (!j.is_string()) return false;
  for (int i = 0; i <= static_cast<int>(ElemType::u64); ++i) {
    const auto t = static_cast<ElemType>(i);
    if (j.get_ref<const std::string&>() == to_string(t)) {
      *out = t;
      return true;
    }
  }
  return false;
}

json scalar_value(const ArgValue& a) {
  if (is_float(a.type)) return a.as_double();
  if (a.type == ElemType::u64) return a.bits;
  return a.as_int();
}

bool parse_arg(const json& j, RecordedArg* a, std::string* why) {
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string()) {
    *why = "an argument has no name";
    return false;
  }
  a->name = j["name"].get<std::string>();
  const std::string kind = string_field(j, "kind");
  if (kind != "buffer" && kind != "scalar") {
    *why = "argument '" + a->name + "': kind is neither buffer nor scalar";
    return false;
  }
  a->kind = kind == "buffer" ? ArgKind::buffer : ArgKind::scalar;
  if (!j.contains("type") || !parse_elem_type(j["type"], &a->type)) {
    *why = "argument '" + a->name + "': not an element type";
    return false;
  }
  if (a->kind == ArgKind::scalar) {
    if (j.contains("bits") && parse_hex(j["bits"], &a->bits)) return true;
    *why = "argument '" + a->name + "': 'bits' is not a 0x-prefixed hex string";
    return false;
  }
  const json& count = j.contains("count") ? j["count"] : json();
  const json& bytes = j.contains("bytes") ? j["bytes"] : json();
  if (!count.is_number_unsigned() || !bytes.is_number_unsigned()) {
    *why = "argument '" + a->name + "': 'count' and 'bytes' must be unsigned integers";
    return false;
  }
  a->count = count.get<std::uint64_t>();
  a->bytes = bytes.get<std::uint64_t>();
  return true;
}

}  // namespace

std::string record_line(const KernelSignature& sig, const StoreKey& key, ArgList args,
                        std::string_view served) {
  json jargs = json::array();
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ArgValue& a = args[i];
    const std::string name = i < sig.decls().size() ? sig.decls()[i].name : "";
    const std::string type(to_string(a.type));
    if (a.kind == ArgKind::buffer) {
      const std::uint64_t bytes = a.buffer != nullptr ? a.buffer->size_bytes() : 0;
      jargs.push_back({{"name", name},
                       {"kind", "buffer"},
                       {"type", type},
                       {"count", a.count},
                       {"bytes", bytes}});
    } else {
      jargs.push_back({{"name", name},
                       {"kind", "scalar"},
                       {"type", type},
                       {"bits", "0x" + hex64(a.bits)},
                       {"value", scalar_value(a)}});
    }
  }
  const json line = {{"kernel", key.kernel},
                     {"source_hash", "0x" + hex64(key.source_hash)},
                     {"key", key.key},
                     {"device", key.device},
                     {"served", std::string(served)},
                     {"args", std::move(jargs)}};
  return line.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

Status append_record_line(const std::string& path, const std::string& line) {
  auto failed = [&](const char* what) {
    return Status(StatusCode::io_error,
                  "record file " + path + ": " + what + ": " + std::strerror(errno));
  };
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return failed("open");
  Status st;
  if (::flock(fd, LOCK_EX) != 0) {
    st = failed("flock");
  } else {
    // One write: with O_APPEND and the lock, no other appender's bytes land inside the line.
    const ssize_t n = ::write(fd, line.data(), line.size());
    if (n != static_cast<ssize_t>(line.size()))
      st = n < 0 ? failed("write")
                 : Status(StatusCode::io_error, "record file " + path + ": short write");
  }
  ::close(fd);  // releases the lock
  return st;
}

bool parse_record_line(const std::string& line, RecordedKey* out, std::string* why) {
  const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    *why = "not a JSON object";
    return false;
  }
  for (const char* field : {"kernel", "key", "device"}) {
    if (!j.contains(field) || !j[field].is_string()) {
      *why = std::string("'") + field + "' is missing or not a string";
      return false;
    }
  }
  out->kernel = j["kernel"].get<std::string>();
  out->key = j["key"].get<std::string>();
  out->device = j["device"].get<std::string>();
  out->served = string_field(j, "served");
  // Without its source hash a line cannot be matched to a version of the kernel: refused.
  const std::string what = "kernel " + out->kernel + " key {" + out->key + "}: ";
  if (!j.contains("source_hash")) {
    *why = what +
           "no 'source_hash': which version of the kernel's source it was recorded "
           "from is unknown";
    return false;
  }
  if (!parse_hex(j["source_hash"], &out->source_hash)) {
    *why = what + "'source_hash' is not a 0x-prefixed hex string";
    return false;
  }
  if (!j.contains("args") || !j["args"].is_array()) {
    *why = "'args' is missing or not an array";
    return false;
  }
  out->args.clear();
  for (const json& a : j["args"]) {
    RecordedArg arg;
    if (!parse_arg(a, &arg, why)) return false;
    out->args.push_back(std::move(arg));
  }
  return true;
}

}  // namespace tune::detail
