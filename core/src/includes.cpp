// The files a kernel's #include lines may open (tune/backend/includes.hpp).
#include "tune/backend/includes.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <system_error>

#include "tune/backend/hash.hpp"

namespace tune {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kHeaderOrigin = "header:";

bool is_header_origin(std::string_view origin) {
  return origin.substr(0, kHeaderOrigin.size()) == kHeaderOrigin;
}

bool regular_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// Every origin `name` may come from, in the search order (includes.hpp), existing ones only.
std::vector<std::string> candidates(const KernelSource& source, std::string_view name, bool quoted,
                                    std::string_view includer_origin) {
  std::vector<std::string> out;
  for (const KernelHeader& h : source.headers)
    if (h.name == name) {
      out.push_back(std::string(kHeaderOrigin) + h.name);
      break;
    }
  const fs::path rel{std::string(name)};
  if (rel.is_absolute()) {
    if (regular_file(rel)) out.push_back(rel.lexically_normal().string());
    return out;
  }
  auto add = [&](const fs::path& dir) {
    const fs::path p = (dir / rel).lexically_normal();
    if (!regular_file(p)) return;
    std::string s = p.string();
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(std::move(s));
  };
  if (quoted) {
    if (!includer_origin.empty() && !is_header_origin(includer_origin)) {
      add(fs::path(std::string(includer_origin)).parent_path());
    } else if (includer_origin.empty() && source.language == Language::cuda_hip) {
      // NVRTC searches the process's working directory for the kernel's own quoted includes.
      std::error_code ec;
      const fs::path cwd = fs::current_path(ec);
      if (!ec) add(cwd);
    }
  }
  for (const std::string& dir : source.include_dirs) add(fs::path(dir));
  return out;
}

class ClosureBuilder {
 public:
  ClosureBuilder(const KernelSource& source, const IncludeLimits& limits)
      : source_(source), limits_(limits) {}

  Status run() {
    TUNE_RETURN_IF_ERROR(follow(source_.text, ""));
    if (!computed_) return {};
    // A computed #include: everything it could name.
    out_.computed_include = true;
    for (const KernelHeader& h : source_.headers)
      TUNE_RETURN_IF_ERROR(add(h.name, std::string(kHeaderOrigin) + h.name));
    for (const std::string& dir : source_.include_dirs) {
      std::vector<std::string> files;
      std::error_code ec;
      for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->is_regular_file(ec)) files.push_back(it->path().lexically_normal().string());
      std::sort(files.begin(), files.end());
      for (const std::string& f : files) TUNE_RETURN_IF_ERROR(add("", f));
    }
    return {};
  }

  IncludeClosure take() { return std::move(out_); }

 private:
  // Reads `origin` into the closure (once) and follows its own #include lines.
  Status add(const std::string& name, const std::string& origin) {
    if (!seen_.insert(origin).second) return {};
    std::string text;
    if (is_header_origin(origin)) {
      const std::string_view hname = std::string_view(origin).substr(kHeaderOrigin.size());
      for (const KernelHeader& h : source_.headers)
        if (h.name == hname) {
          text = h.text;
          break;
        }
    } else {
      std::error_code ec;
      const std::uintmax_t size = fs::file_size(origin, ec);
      if (ec)
        return Status(StatusCode::invalid_argument,
                      "include file " + origin + ": cannot read its size: " + ec.message());
      if (out_.bytes + size > limits_.max_bytes) return over("bytes", origin);
      std::ifstream in(origin, std::ios::binary);
      text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      if (!in.good() && !in.eof())
        return Status(StatusCode::invalid_argument, "include file " + origin + ": read failed");
    }
    if (out_.files.size() + 1 > limits_.max_files) return over("files", origin);
    if (out_.bytes + text.size() > limits_.max_bytes) return over("bytes", origin);
    out_.bytes += text.size();
    out_.files.push_back({name, origin, text});
    return follow(text, origin);
  }

  Status follow(std::string_view text, const std::string& origin) {
    for (const IncludeDirective& d : include_directives(text)) {
      if (d.computed) {
        computed_ = true;
        continue;
      }
      for (const std::string& c : candidates(source_, d.name, d.quoted, origin))
        TUNE_RETURN_IF_ERROR(add(d.name, c));
    }
    return {};
  }

  Status over(const char* what, const std::string& origin) const {
    const std::string limit = std::string(what) == "files" ? std::to_string(limits_.max_files)
                                                           : std::to_string(limits_.max_bytes);
    return Status(StatusCode::invalid_argument,
                  "the kernel's include files exceed " + limit + " " + what + " at " + origin +
                      " (libtune reads every file an #include may open to key its caches; "
                      "narrow include_dirs" +
                      (computed_ ? ", or name headers literally: a computed #include reads "
                                   "every file under the include dirs)"
                                 : ")"));
  }

  const KernelSource& source_;
  const IncludeLimits& limits_;
  IncludeClosure out_;
  std::set<std::string> seen_;
  bool computed_ = false;
};

}  // namespace

std::uint64_t IncludeClosure::hash() const {
  if (empty()) return 0;
  std::uint64_t h = hash_combine(0x1ec1'0de5ULL, computed_include ? 1 : 0);
  for (const IncludedFile& f : files) {
    h = stable_hash(f.origin, h);
    h = stable_hash(f.name, h);
    h = hash_combine(h, f.text.size());
    h = stable_hash(f.text, h);
  }
  return h;
}

const IncludedFile* IncludeClosure::find(std::string_view origin) const noexcept {
  for (const IncludedFile& f : files)
    if (f.origin == origin) return &f;
  return nullptr;
}

std::vector<IncludeDirective> include_directives(std::string_view text) {
  std::vector<IncludeDirective> out;
  auto blank = [](char c) { return c == ' ' || c == '\t'; };
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    std::size_t i = 0;
    while (i < line.size() && blank(line[i])) ++i;
    if (i >= line.size() || line[i] != '#') continue;
    ++i;
    while (i < line.size() && blank(line[i])) ++i;
    constexpr std::string_view kw = "include";
    if (line.substr(i, kw.size()) != kw) continue;
    i += kw.size();
    if (line.substr(i, 5) == "_next") i += 5;  // #include_next: the same candidates
    if (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_'))
      continue;  // another directive (#included...), not an include
    while (i < line.size() && blank(line[i])) ++i;
    if (i >= line.size()) continue;  // "#include" alone: the compiler reports it
    const char open = line[i];
    const char close = open == '"' ? '"' : open == '<' ? '>' : '\0';
    if (close == '\0') {
      out.push_back({"", false, true});
      continue;
    }
    const std::size_t stop = line.find(close, i + 1);
    if (stop == std::string_view::npos) continue;  // malformed: the compiler reports it
    out.push_back({std::string(line.substr(i + 1, stop - i - 1)), open == '"', false});
  }
  return out;
}

Result<IncludeClosure> include_closure(const KernelSource& source, const IncludeLimits& limits) {
  ClosureBuilder b(source, limits);
  TUNE_RETURN_IF_ERROR(b.run());
  return b.take();
}

std::optional<std::string> resolve_include(const KernelSource& source, std::string_view name,
                                           bool quoted, std::string_view includer_origin) {
  auto c = candidates(source, name, quoted, includer_origin);
  if (c.empty()) return std::nullopt;
  return std::move(c.front());
}

}  // namespace tune
