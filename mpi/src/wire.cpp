#include "wire.hpp"

#include <charconv>
#include <cstdint>
#include <limits>

namespace tune::mpi::detail {
namespace {

class Writer {
 public:
  Writer& text(const std::string& s) {
    out_ += std::to_string(s.size());
    out_ += ':';
    out_ += s;
    return *this;
  }
  Writer& number(double v) {
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    return text(std::string(buf, r.ptr));
  }
  Writer& integer(std::int64_t v) { return text(std::to_string(v)); }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(const std::string& s) : s_(s) {}
  bool text(std::string* out) {
    const auto colon = s_.find(':', pos_);
    if (colon == std::string::npos) return false;
    std::size_t n = 0;
    auto r = std::from_chars(s_.data() + pos_, s_.data() + colon, n);
    if (r.ec != std::errc() || r.ptr != s_.data() + colon || colon + 1 + n > s_.size())
      return false;
    *out = s_.substr(colon + 1, n);
    pos_ = colon + 1 + n;
    return true;
  }
  bool number(double* out) {
    std::string t;
    if (!text(&t)) return false;
    if (t == "inf") return *out = std::numeric_limits<double>::infinity(), true;
    auto r = std::from_chars(t.data(), t.data() + t.size(), *out);
    return r.ec == std::errc() && r.ptr == t.data() + t.size();
  }
  bool integer(std::int64_t* out) {
    std::string t;
    if (!text(&t)) return false;
    auto r = std::from_chars(t.data(), t.data() + t.size(), *out);
    return r.ec == std::errc() && r.ptr == t.data() + t.size();
  }
  bool at_end() const { return pos_ == s_.size(); }

 private:
  const std::string& s_;
  std::size_t pos_ = 0;
};

void put_status(Writer& w, const Status& st) {
  w.text(std::string(to_string(st.code()))).text(st.message());
}
bool get_status(Reader& r, Status* st) {
  std::string code, message;
  if (!r.text(&code) || !r.text(&message)) return false;
  StatusCode c = StatusCode::ok;
  if (!parse_status_code(code, &c)) return false;
  *st = c == StatusCode::ok ? Status() : Status(c, message);
  return true;
}

void put_result(Writer& w, const ConfigResult& r) {
  w.text(r.config.to_string());
  put_status(w, r.status);
  const SampleStats& s = r.stats;
  w.integer(s.count).number(s.min).number(s.p20).number(s.median).number(s.p80).number(s.max);
  w.number(s.mean).number(r.compile_ms);
  w.integer((r.from_store ? 1 : 0) | (r.raced_out ? 2 : 0) | (r.settled ? 4 : 0));
}
bool get_result(Reader& r, ConfigResult* out) {
  std::string config;
  std::int64_t count = 0, flags = 0;
  SampleStats& s = out->stats;
  if (!r.text(&config) || !get_status(r, &out->status) || !r.integer(&count) || !r.number(&s.min) ||
      !r.number(&s.p20) || !r.number(&s.median) || !r.number(&s.p80) || !r.number(&s.max) ||
      !r.number(&s.mean) || !r.number(&out->compile_ms) || !r.integer(&flags) || count < 0 ||
      count > UINT32_MAX)
    return false;
  auto c = Config::parse(config);
  if (!c.ok()) return false;
  out->config = std::move(*c);
  s.count = static_cast<std::uint32_t>(count);
  out->from_store = (flags & 1) != 0;
  out->raced_out = (flags & 2) != 0;
  out->settled = (flags & 4) != 0;
  return true;
}

void put_results(Writer& w, const std::vector<ConfigResult>& results) {
  w.integer(static_cast<std::int64_t>(results.size()));
  for (const auto& r : results) put_result(w, r);
}
bool get_results(Reader& r, std::vector<ConfigResult>* out) {
  std::int64_t n = 0;
  if (!r.integer(&n) || n < 0) return false;
  out->resize(static_cast<std::size_t>(n));
  for (auto& res : *out)
    if (!get_result(r, &res)) return false;
  return true;
}

Status garbled(const std::string& what) {
  return Status(StatusCode::data_loss, what + ": a message from another rank does not parse");
}

}  // namespace

std::string encode(const Decision& d) {
  Writer w;
  put_status(w, d.status);
  w.text(d.status.ok() ? d.config.to_string() : std::string());
  put_results(w, d.results);
  w.text(encode_texts(d.finalists));
  return w.take();
}

Result<Decision> decode_decision(const std::string& blob, const std::string& what) {
  Reader r(blob);
  Decision d;
  std::string config, finalists;
  if (!get_status(r, &d.status) || !r.text(&config) || !get_results(r, &d.results) ||
      !r.text(&finalists) || !r.at_end())
    return garbled(what);
  if (d.status.ok()) {
    auto c = Config::parse(config);
    if (!c.ok()) return garbled(what);
    d.config = std::move(*c);
  }
  auto f = decode_texts(finalists, what);
  if (!f.ok()) return f.status();
  d.finalists = std::move(*f);
  return d;
}

std::string encode_results(const Status& status, const std::vector<ConfigResult>& results) {
  Writer w;
  put_status(w, status);
  put_results(w, results);
  return w.take();
}

Result<std::vector<ConfigResult>> decode_results(const std::string& blob, const std::string& what) {
  Reader r(blob);
  Status st;
  std::vector<ConfigResult> out;
  if (!get_status(r, &st) || !get_results(r, &out) || !r.at_end()) return garbled(what);
  if (!st.ok()) return st;
  return out;
}

std::string encode_texts(const std::vector<std::string>& texts) {
  Writer w;
  w.integer(static_cast<std::int64_t>(texts.size()));
  for (const auto& t : texts) w.text(t);
  return w.take();
}

Result<std::vector<std::string>> decode_texts(const std::string& blob, const std::string& what) {
  Reader r(blob);
  std::int64_t n = 0;
  if (!r.integer(&n) || n < 0) return garbled(what);
  std::vector<std::string> out(static_cast<std::size_t>(n));
  for (auto& t : out)
    if (!r.text(&t)) return garbled(what);
  if (!r.at_end()) return garbled(what);
  return out;
}

}  // namespace tune::mpi::detail
