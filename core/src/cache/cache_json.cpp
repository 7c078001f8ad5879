// The JSON interchange format of `tune cache export` / `import`. See cache_json.hpp.
#include "cache/cache_json.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <istream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "cache/decision_codec.hpp"
#include "cache/row_rules.hpp"
#include "tune/backend/hash.hpp"

namespace tune {
namespace {

using nlohmann::json;

constexpr std::string_view kFormat = "libtune-cache";
constexpr std::int64_t kFormatVersion = 1;

json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

bool parse_hex64(const std::string& s, std::uint64_t* out) {
  if (s.size() < 3 || s.size() > 18 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) return false;
  std::uint64_t v = 0;
  for (std::size_t i = 2; i < s.size(); ++i) {
    char c = s[i];
    unsigned d;
    if (c >= '0' && c <= '9')
      d = static_cast<unsigned>(c - '0');
    else if (c >= 'a' && c <= 'f')
      d = static_cast<unsigned>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      d = static_cast<unsigned>(c - 'A' + 10);
    else
      return false;
    v = (v << 4) | d;
  }
  *out = v;
  return true;
}

// Reads a required string member; false (with `why`) when missing or not a string.
bool get_string(const json& obj, const char* name, std::string* out, std::string* why,
                bool required = true) {
  auto it = obj.find(name);
  if (it == obj.end()) {
    if (!required) return true;
    *why = std::string("missing '") + name + "'";
    return false;
  }
  if (!it->is_string()) {
    *why = std::string("'") + name + "' is not a string";
    return false;
  }
  *out = it->get_ref<const std::string&>();
  return true;
}

// The "stats" of a row whose status is ok (`ok_row`: every field required) or not (absent
// fields are +inf); false (with `why`) when malformed.
bool parse_stats(const json& j, bool ok_row, SampleStats* stats, std::string* why) {
  const double inf = std::numeric_limits<double>::infinity();
  SampleStats& s = *stats;
  s = SampleStats{};
  if (!ok_row) s.min = s.p20 = s.median = s.p80 = s.max = s.mean = inf;
  auto st = j.find("stats");
  if (st == j.end()) {
    if (ok_row) {
      *why = "an ok row without 'stats'";
      return false;
    }
  } else {
    if (!st->is_object()) {
      *why = "'stats' is not an object";
      return false;
    }
    auto c = st->find("count");
    if (c != st->end()) {
      if (!c->is_number_unsigned() ||
          c->get<std::uint64_t>() > std::numeric_limits<std::uint32_t>::max()) {
        *why = "'stats.count' is not a 32-bit unsigned integer";
        return false;
      }
      s.count = static_cast<std::uint32_t>(c->get<std::uint64_t>());
    }
    struct Field {
      const char* name;
      double* dst;
    } fields[] = {{"min", &s.min}, {"p20", &s.p20}, {"median", &s.median},
                  {"p80", &s.p80}, {"max", &s.max}, {"mean", &s.mean}};
    for (const Field& f : fields) {
      auto v = st->find(f.name);
      if (v == st->end() || v->is_null()) {
        if (ok_row) {
          *why = std::string("an ok row without 'stats.") + f.name + "'";
          return false;
        }
        continue;
      }
      if (!v->is_number()) {
        *why = std::string("'stats.") + f.name + "' is not a number";
        return false;
      }
      *f.dst = v->get<double>();
    }
  }
  return true;
}

// One element of "rows"; false (with `why`) when it is malformed.
bool parse_row(const json& j, CacheRow* row, std::string* why) {
  if (!j.is_object()) {
    *why = "not an object";
    return false;
  }
  StoreKey& k = row->key;
  StoredResult& r = row->result;
  if (!get_string(j, "kernel", &k.kernel, why) || !get_string(j, "key", &k.key, why) ||
      !get_string(j, "device", &k.device, why) || !get_string(j, "toolchain", &k.toolchain, why) ||
      !get_string(j, "config", &r.config, why) ||
      !get_string(j, "reason", &r.reason, why, /*required=*/false)) {
    return false;
  }
  auto sh = j.find("source_hash");
  if (sh == j.end()) {
    *why = "missing 'source_hash'";
    return false;
  }
  if (sh->is_number_unsigned()) {
    k.source_hash = sh->get<std::uint64_t>();
  } else if (!sh->is_string() || !parse_hex64(sh->get_ref<const std::string&>(), &k.source_hash)) {
    *why = "'source_hash' is not a 0x-prefixed 64-bit hex string";
    return false;
  }
  if (Status key_ok = check_stored_key(k); !key_ok.ok()) {
    *why = key_ok.message();
    return false;
  }
  std::string status;
  if (!get_string(j, "status", &status, why)) return false;
  if (!parse_status_code(status, &r.status)) {
    *why = "unknown status '" + status + "'";
    return false;
  }
  auto t = j.find("unix_time");
  if (t != j.end()) {
    if (t->is_number_unsigned() &&
        t->get<std::uint64_t>() <= static_cast<std::uint64_t>(INT64_MAX)) {
      r.unix_time = static_cast<std::int64_t>(t->get<std::uint64_t>());
    } else if (t->is_number_integer() && t->get<std::int64_t>() >= 0) {
      r.unix_time = t->get<std::int64_t>();
    } else {
      *why = "'unix_time' is not a non-negative integer";
      return false;
    }
  }
  if (auto v = j.find("verified"); v != j.end()) {  // optional: absent is not checked
    if (!v->is_boolean()) {
      *why = "'verified' is not a boolean";
      return false;
    }
    r.verified = v->get<bool>();
  }
  // Optional: absent or null is a row without a decision record.
  if (auto d = j.find("decision"); d != j.end() && !d->is_null()) {
    if (!d->is_object()) {
      *why = "'decision' is not an object";
      return false;
    }
    if (!cache::decode_decision(d->dump(), &r.decision, why)) return false;
  }
  if (!parse_stats(j, r.status == StatusCode::ok, &r.stats, why)) return false;
  std::string canonical;
  Status check = check_stored_row(r, &canonical);
  if (!check.ok()) {
    *why = check.message();
    return false;
  }
  r.config = std::move(canonical);
  return true;
}

}  // namespace

std::string cache_rows_to_json(std::span<const CacheRow> rows) {
  json list = json::array();
  for (const CacheRow& row : rows) {
    const StoredResult& r = row.result;
    json stats = {{"count", r.stats.count},
                  {"min", number_or_null(r.stats.min)},
                  {"p20", number_or_null(r.stats.p20)},
                  {"median", number_or_null(r.stats.median)},
                  {"p80", number_or_null(r.stats.p80)},
                  {"max", number_or_null(r.stats.max)},
                  {"mean", number_or_null(r.stats.mean)}};
    list.push_back(
        {{"kernel", row.key.kernel},
         {"source_hash", "0x" + hex64(row.key.source_hash)},
         {"key", row.key.key},
         {"device", row.key.device},
         {"toolchain", row.key.toolchain},
         {"config", r.config},
         {"status", std::string(to_string(r.status))},
         {"reason", r.reason},
         {"unix_time", r.unix_time},
         {"verified", r.verified},
         {"verification", std::string(to_string(verification_of(r.status, r.verified)))},
         {"stats", std::move(stats)},
         {"decision", r.decision ? json::parse(cache::encode_decision(r.decision), nullptr, false)
                                 : json(nullptr)}});
  }
  json doc = {{"format", kFormat}, {"version", kFormatVersion}, {"rows", std::move(list)}};
  // Invalid UTF-8 in a stored string (a compiler log in `reason`) is replaced, not thrown.
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

namespace {

// The input as the parser reads it, with the limits that bound one token's memory enforced
// before the parser sees the bytes: the lexer keeps a whole string or number in memory, so
// an over-long one ends the input here (the parser then reports a parse error, and `limit()`
// says why). Reads `src` in chunks of 64 KiB.
class BoundedInput final : public std::streambuf {
 public:
  explicit BoundedInput(std::streambuf& src) : src_(src) {}

  // Empty unless a limit ended the input: what was exceeded, and where.
  const std::string& limit() const noexcept { return limit_; }
  // The offset of the first byte withheld (meaningful when limit() is not empty): the
  // parser's error is the limit's only if it came there, not at a bad byte before it.
  std::uint64_t limit_offset() const noexcept { return offset_; }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    if (!limit_.empty()) return traits_type::eof();
    const std::streamsize n = src_.sgetn(buf_, sizeof buf_);
    if (n <= 0) return traits_type::eof();
    const std::size_t kept = scan(static_cast<std::size_t>(n));
    if (kept == 0) return traits_type::eof();
    setg(buf_, buf_, buf_ + kept);
    return traits_type::to_int_type(*gptr());
  }

 private:
  // Follows strings (with their escapes) and the tokens between them over the first `n`
  // bytes of buf_; returns how many may be passed on (all, unless a limit is exceeded).
  std::size_t scan(std::size_t n) {
    for (std::size_t i = 0; i < n; ++i, ++offset_) {
      const char c = buf_[i];
      if (in_string_) {
        if (escaped_) {
          escaped_ = false;
        } else if (c == '\\') {
          escaped_ = true;
        } else if (c == '"') {
          in_string_ = false;
          continue;
        }
        if (++run_ > kMaxJsonStringBytes) {
          limit_ = "a string longer than " + std::to_string(kMaxJsonStringBytes >> 20) +
                   " MiB at byte " + std::to_string(offset_);
          return i;
        }
      } else if (c == '"') {
        in_string_ = true;
        run_ = 0;
      } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == ':' ||
                 c == '[' || c == ']' || c == '{' || c == '}') {
        run_ = 0;
      } else if (++run_ > kMaxJsonTokenBytes) {
        limit_ = "a number or literal longer than " + std::to_string(kMaxJsonTokenBytes) +
                 " bytes at byte " + std::to_string(offset_);
        return i;
      }
    }
    return n;
  }

  std::streambuf& src_;
  char buf_[1 << 16];
  bool in_string_ = false;
  bool escaped_ = false;
  std::size_t run_ = 0;  // bytes of the current string or token
  std::uint64_t offset_ = 0;
  std::string limit_;
};

// A streambuf over a string in memory (read only).
class ViewInput final : public std::streambuf {
 public:
  explicit ViewInput(std::string_view text) {
    char* p = const_cast<char*>(text.data());  // never written: a get area only
    setg(p, p, p + text.size());
  }
};

// The SAX handler: follows the top-level object, builds each element of "rows" as a small
// json value (only its scalar members, and the scalars of "stats" and "decision", within the
// row limits),
// checks it with parse_row and hands it on before the next one is read.
class RowsSax {
 public:
  explicit RowsSax(const CacheJsonSink& sink) : sink_(sink) {}

  // What ended the reading early (a sink error, a limit, the wrong format), else ok.
  const Status& stopped() const noexcept { return stopped_; }
  bool saw_object() const noexcept { return saw_object_; }
  const std::optional<std::string>& format() const noexcept { return format_; }
  const std::optional<std::int64_t>& version() const noexcept { return version_; }
  bool saw_rows() const noexcept { return saw_rows_; }
  const std::string& parse_error_text() const noexcept { return parse_error_; }
  std::size_t parse_error_position() const noexcept { return parse_error_position_; }

  // The SAX interface (nlohmann::json_sax): false stops the parser.
  bool null() { return scalar(json(nullptr)); }
  bool boolean(bool v) { return scalar(json(v)); }
  bool number_integer(json::number_integer_t v) { return scalar(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return scalar(json(v)); }
  bool number_float(json::number_float_t v, const std::string&) { return scalar(json(v)); }
  bool string(std::string& v) { return scalar(json(std::move(v))); }
  bool binary(json::binary_t&) { return scalar(json(nullptr)); }  // never from JSON text
  bool start_object(std::size_t) { return open(true); }
  bool start_array(std::size_t) { return open(false); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(std::string& k) {
    if (depth_ == 1) {
      top_key_ = std::move(k);
    } else if (in_row() && (depth_ == kRowDepth || depth_ == kRowDepth + 1)) {
      row_bytes_ += k.size();
      if (++row_members_ > kMaxJsonRowMembers)
        row_too_large("members");
      else if (row_bytes_ > kMaxJsonRowBytes)
        row_too_large("string bytes");
      member_ = std::move(k);
    }
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception&) {
    parse_error_ = "at byte " + std::to_string(position);
    parse_error_position_ = position;
    return false;
  }

 private:
  // Depth of a row's members: the top object is 1, "rows" 2, a row object 3.
  static constexpr int kRowDepth = 3;

  bool in_row() const noexcept { return row_open_ && !row_bad_; }

  bool stop(Status st) {
    stopped_ = std::move(st);
    return false;
  }

  // A top-level member that may only come before the rows, checked as soon as it is known.
  bool top_scalar(json v) {
    if (top_key_ == "format") {
      format_ = v.is_string() ? v.get<std::string>() : std::string();
      if (*format_ != kFormat)
        return stop(Status(StatusCode::invalid_argument,
                           "not a libtune cache export: 'format' is not \"libtune-cache\""));
    } else if (top_key_ == "version") {
      if (!v.is_number_integer())
        return stop(Status(StatusCode::invalid_argument, "missing integer 'version'"));
      version_ = v.get<std::int64_t>();
      if (*version_ != kFormatVersion) return stop(version_error(*version_));
    } else if (top_key_ == "rows") {
      return stop(Status(StatusCode::invalid_argument, "missing array 'rows'"));
    }
    return true;
  }

  bool scalar(json v) {
    if (depth_ == 0) {
      return stop(
          Status(StatusCode::invalid_argument, "not a libtune cache export: not an object"));
    }
    if (depth_ == 1) return top_scalar(std::move(v));
    if (depth_ == 2 && in_rows_) {
      reject_element("not an object");
      return true;
    }
    if (!in_row()) return true;
    if (v.is_string()) {
      row_bytes_ += v.get_ref<const std::string&>().size();
      if (row_bytes_ > kMaxJsonRowBytes) {
        row_too_large("string bytes");
        return true;
      }
    }
    if (depth_ == kRowDepth)
      row_[member_] = std::move(v);
    else if (depth_ == kRowDepth + 1 && !nested_.empty())
      row_[nested_][member_] = std::move(v);
    return true;
  }

  bool open(bool object) {
    if (depth_ >= kMaxJsonDepth)
      return stop(Status(StatusCode::invalid_argument,
                         "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels"));
    if (depth_ == 0 && !object)
      return stop(
          Status(StatusCode::invalid_argument, "not a libtune cache export: not an object"));
    if (depth_ == 0) saw_object_ = true;
    if (depth_ == 1 && top_key_ == "rows") {
      if (!object && saw_rows_)
        return stop(Status(StatusCode::invalid_argument, "'rows' appears twice"));
      if (object) return stop(Status(StatusCode::invalid_argument, "missing array 'rows'"));
      in_rows_ = saw_rows_ = true;
    } else if (depth_ == 1 && (top_key_ == "format" || top_key_ == "version")) {
      if (!top_scalar(object ? json::object() : json::array())) return false;
    } else if (depth_ == 2 && in_rows_) {
      if (object) {
        row_open_ = true;
        row_bad_ = false;
        row_ = json::object();
        row_members_ = row_bytes_ = 0;
      } else {
        reject_element("not an object");
      }
    } else if (in_row() && depth_ == kRowDepth) {
      // A container as a member: kept as an empty one of its kind (parse_row names the
      // member whose type is wrong), its contents skipped; "stats" and "decision" keep their
      // scalars.
      row_[member_] = object ? json::object() : json::array();
      nested_ = object && (member_ == "stats" || member_ == "decision") ? member_ : std::string();
    } else if (in_row() && depth_ == kRowDepth + 1 && !nested_.empty()) {
      row_[nested_][member_] = object ? json::object() : json::array();
    }
    ++depth_;
    return true;
  }

  bool close() {
    --depth_;
    if (depth_ == kRowDepth) nested_.clear();
    if (depth_ == 2 && row_open_) {
      row_open_ = false;
      return finish_row();
    }
    if (depth_ == 1 && in_rows_) in_rows_ = false;
    return true;
  }

  bool finish_row() {
    const std::size_t index = index_++;
    if (row_bad_) {
      if (sink_.rejected) sink_.rejected("row " + std::to_string(index) + ": " + row_bad_why_);
      return true;
    }
    CacheRow row;
    std::string why;
    const bool ok = parse_row(row_, &row, &why);
    row_ = json();
    if (!ok) {
      if (sink_.rejected) sink_.rejected("row " + std::to_string(index) + ": " + why);
      return true;
    }
    if (!sink_.row) return true;
    Status st = sink_.row(std::move(row));
    return st.ok() ? true : stop(std::move(st));
  }

  void reject_element(const std::string& why) {
    if (sink_.rejected) sink_.rejected("row " + std::to_string(index_) + ": " + why);
    ++index_;
    // A non-object element's contents (an array) are skipped: not a row.
  }

  void row_too_large(const char* what) {
    row_bad_ = true;
    row_ = json();
    row_bad_why_ = std::string("more than ") +
                   (std::string_view(what) == "members"
                        ? std::to_string(kMaxJsonRowMembers) + " members"
                        : std::to_string(kMaxJsonRowBytes >> 20) + " MiB of strings");
  }

  static Status version_error(std::int64_t v) {
    return Status(StatusCode::invalid_argument, "format version " + std::to_string(v) +
                                                    " (this libtune reads version " +
                                                    std::to_string(kFormatVersion) + ")");
  }

  const CacheJsonSink& sink_;
  Status stopped_;
  int depth_ = 0;
  std::string top_key_;
  bool saw_object_ = false;
  std::optional<std::string> format_;
  std::optional<std::int64_t> version_;
  bool saw_rows_ = false;
  bool in_rows_ = false;
  std::size_t index_ = 0;  // elements of "rows" met so far
  // The row being built.
  bool row_open_ = false;
  bool row_bad_ = false;  // over a row limit: skipped to its end, then rejected
  std::string row_bad_why_;
  std::string nested_;  // the row's member whose scalars are kept ("stats", "decision"), if in one
  std::string member_;
  json row_;
  std::size_t row_members_ = 0;
  std::size_t row_bytes_ = 0;
  std::string parse_error_;
  std::size_t parse_error_position_ = 0;
};

}  // namespace

Status read_cache_json(std::streambuf& in, const CacheJsonSink& sink) {
  BoundedInput input(in);
  std::istream stream(&input);
  RowsSax sax(sink);
  const bool parsed = json::sax_parse(stream, &sax, json::input_format_t::json, /*strict=*/true);
  if (!sax.stopped().ok()) return sax.stopped();
  if (!parsed && !input.limit().empty() && sax.parse_error_position() >= input.limit_offset())
    return Status(StatusCode::invalid_argument, "not a usable cache export: " + input.limit());
  if (!parsed) {
    return Status(StatusCode::data_loss,
                  "not a JSON document (or not valid UTF-8 JSON; " + sax.parse_error_text() + ")");
  }
  if (!sax.saw_object())
    return Status(StatusCode::invalid_argument, "not a libtune cache export: not an object");
  if (!sax.format() || *sax.format() != kFormat)
    return Status(StatusCode::invalid_argument,
                  "not a libtune cache export: 'format' is not \"libtune-cache\"");
  if (!sax.version()) return Status(StatusCode::invalid_argument, "missing integer 'version'");
  if (!sax.saw_rows()) return Status(StatusCode::invalid_argument, "missing array 'rows'");
  return {};
}

Status read_cache_json(std::string_view text, const CacheJsonSink& sink) {
  ViewInput in(text);
  return read_cache_json(in, sink);
}

Result<std::vector<CacheRow>> cache_rows_from_json(std::string_view text,
                                                   std::vector<std::string>* problems) {
  std::vector<CacheRow> out;
  CacheJsonSink sink;
  sink.row = [&out](CacheRow&& row) {
    out.push_back(std::move(row));
    return Status();
  };
  sink.rejected = [problems](std::string why) {
    if (problems != nullptr) problems->push_back(std::move(why));
  };
  TUNE_RETURN_IF_ERROR(read_cache_json(text, sink));
  return out;
}

}  // namespace tune
