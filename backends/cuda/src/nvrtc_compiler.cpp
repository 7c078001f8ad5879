#include "nvrtc_compiler.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <span>
#include <system_error>
#include <vector>

#include "nvrtc_library.hpp"
#include "tune/cuda.hpp"
#include "tune/environment.hpp"
#include "tune/log.hpp"

namespace tune::cuda::detail {
namespace {

// nvrtcProgram owner: destroyed on every path.
class Program {
 public:
  explicit Program(const Nvrtc& n) : n_(n) {}
  ~Program() {
    if (prog_ != nullptr) (void)n_.nvrtcDestroyProgram(&prog_);
  }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  nvrtcProgram* out() noexcept { return &prog_; }
  nvrtcProgram get() const noexcept { return prog_; }

 private:
  const Nvrtc& n_;
  nvrtcProgram prog_ = nullptr;
};

Status nvrtc_failure(const Nvrtc& n, const char* call, nvrtcResult rc,
                     const std::string& log = {}) {
  std::string msg = std::string(call) + " failed: " + n.nvrtcGetErrorString(rc);
  if (!log.empty()) msg += "\n" + log;
  StatusCode code = StatusCode::internal;
  if (rc == NVRTC_ERROR_COMPILATION) code = StatusCode::compile_error;
  if (rc == NVRTC_ERROR_INVALID_OPTION) code = StatusCode::invalid_argument;  // the log names it
  return Status(code, msg);
}

// The toolkit's include directory: TUNE_CUDA_INCLUDE_DIR, else the one libtune was built with.
std::vector<std::string> toolkit_includes() {
  std::string dir = env_text("TUNE_CUDA_INCLUDE_DIR");
#ifdef TUNE_CUDA_TOOLKIT_INCLUDE_DIR
  if (dir.empty()) dir = TUNE_CUDA_TOOLKIT_INCLUDE_DIR;
#endif
  std::vector<std::string> out;
  std::error_code ec;
  if (dir.empty() || !std::filesystem::is_directory(dir, ec)) {
    log(LogLevel::debug, "NVRTC: no CUDA include directory (" +
                             (dir.empty() ? std::string("none known") : dir) +
                             "): kernels see only NVRTC's built-in headers");
    return out;
  }
  // CUDA 13 keeps CUB, Thrust and libcu++ (cuda/std) under include/cccl.
  if (std::filesystem::is_directory(std::filesystem::path(dir) / "cccl", ec))
    out.push_back("-I" + (std::filesystem::path(dir) / "cccl").string());
  out.push_back("-I" + dir);
  return out;
}

// The sm number of the "-arch=sm_XY[a]" among `options`, or 0.
int target_sm(std::span<const std::string> options) {
  for (const std::string& o : options) {
    if (o.rfind("-arch=sm_", 0) != 0) continue;
    int sm = 0;
    std::from_chars(o.data() + 9, o.data() + o.size(), sm);
    return sm;
  }
  return 0;
}

// Stateless apart from the library it loads on the first compile (nvrtc_library.hpp): the
// version, the options and a binary-cache lookup need no NVRTC, so a cache hit never loads it.
class NvrtcCompiler final : public gpu::RtcCompiler {
 public:
  std::string version() const override { return version_; }
  std::string_view binary_kind() const noexcept override { return "cubin"; }

  Result<std::vector<std::string>> target_options(std::string_view arch,
                                                  bool arch_specific) const override {
    int sm = 0;
    const bool parsed = arch.size() > 3 && arch.substr(0, 3) == "sm_" &&
                        std::from_chars(arch.data() + 3, arch.data() + arch.size(), sm).ptr ==
                            arch.data() + arch.size();
    if (!parsed) {
      return Status(StatusCode::invalid_argument,
                    "NVRTC target '" + std::string(arch) + "' is not of the form sm_XY");
    }
    // sm_XYa: the features of exactly this architecture (wgmma and setmaxnreg on sm_90), which
    // NVRTC offers from sm_90 on; the binary then runs on that architecture only.
    if (arch_specific && sm < 90) {
      return Status(
          StatusCode::invalid_argument,
          "KernelSource::arch_specific needs sm_90 or later; the target is " + std::string(arch));
    }
    return std::vector<std::string>{"-arch=" + std::string(arch) + (arch_specific ? "a" : ""),
                                    "-DTUNE_WARP_SIZE=32"};
  }

  std::vector<std::string> base_options() const override {
    // -default-device: functions without an execution space are device functions;
    // ptxas -v puts registers/spills/shared memory of each variant in the log.
    return {"--std=c++17", "-default-device", "--ptxas-options=-v"};
  }

  std::string max_registers_option(int registers) const override {
    return "--maxrregcount=" + std::to_string(registers);
  }

  // Read per compile (an environment read and two directory checks beside a compile of 20 ms
  // and more), so a program may set TUNE_CUDA_INCLUDE_DIR before any compile.
  std::vector<std::string> toolkit_include_options() const override { return toolkit_includes(); }

  Result<gpu::RtcOutput> compile(std::string_view source, std::string_view file_name,
                                 std::span<const std::string> options,
                                 std::span<const KernelHeader> headers,
                                 std::string_view name_expression) override {
    Status why;
    const Nvrtc* n = nvrtc(&why);
    if (n == nullptr) return why;
    // Checked here, not in target_options(): that one also builds cache keys, without NVRTC.
    if (const int sm = target_sm(options);
        sm != 0 && !n->archs.empty() &&
        std::find(n->archs.begin(), n->archs.end(), sm) == n->archs.end()) {
      std::string known;
      for (int a : n->archs) known += " sm_" + std::to_string(a);
      return Status(StatusCode::invalid_argument,
                    n->library.path + " (NVRTC " + std::to_string(n->major) + "." +
                        std::to_string(n->minor) + ") cannot target sm_" + std::to_string(sm) +
                        " (supported:" + known + ")");
    }
    const std::string src(source);
    const std::string name(file_name);
    std::vector<const char*> header_texts, header_names;
    for (const KernelHeader& h : headers) {
      header_texts.push_back(h.text.c_str());
      header_names.push_back(h.name.c_str());
    }
    Program prog(*n);
    if (nvrtcResult rc = n->nvrtcCreateProgram(
            prog.out(), src.c_str(), name.c_str(), static_cast<int>(headers.size()),
            header_texts.empty() ? nullptr : header_texts.data(),
            header_names.empty() ? nullptr : header_names.data());
        rc != NVRTC_SUCCESS)
      return nvrtc_failure(*n, "nvrtcCreateProgram", rc);
    std::vector<const char*> argv;
    argv.reserve(options.size());
    for (const auto& o : options) argv.push_back(o.c_str());
    const std::string expr(name_expression);
    if (!expr.empty()) {
      if (nvrtcResult rc = n->nvrtcAddNameExpression(prog.get(), expr.c_str()); rc != NVRTC_SUCCESS)
        return nvrtc_failure(*n, "nvrtcAddNameExpression", rc);
    }
    const nvrtcResult compiled =
        n->nvrtcCompileProgram(prog.get(), static_cast<int>(argv.size()), argv.data());
    gpu::RtcOutput out;
    std::size_t log_size = 0;
    if (n->nvrtcGetProgramLogSize(prog.get(), &log_size) == NVRTC_SUCCESS && log_size > 1) {
      out.log.resize(log_size);
      if (n->nvrtcGetProgramLog(prog.get(), out.log.data()) != NVRTC_SUCCESS) out.log.clear();
      while (!out.log.empty() && (out.log.back() == '\0' || out.log.back() == '\n'))
        out.log.pop_back();
    }
    if (compiled != NVRTC_SUCCESS) {
      std::string opts;
      for (const auto& o : options) opts += " " + o;
      return nvrtc_failure(*n, "nvrtcCompileProgram", compiled,
                           "options:" + opts + "\n" + (out.log.empty() ? "(empty log)" : out.log));
    }
    if (!expr.empty()) {
      // Valid until the program is destroyed: copied out now.
      const char* lowered = nullptr;
      if (nvrtcResult rc = n->nvrtcGetLoweredName(prog.get(), expr.c_str(), &lowered);
          rc != NVRTC_SUCCESS || lowered == nullptr)
        return nvrtc_failure(*n, "nvrtcGetLoweredName", rc, "name expression: " + expr);
      out.entry_name = lowered;
    }
    std::size_t size = 0;
    if (nvrtcResult rc = n->nvrtcGetCUBINSize(prog.get(), &size); rc != NVRTC_SUCCESS)
      return nvrtc_failure(*n, "nvrtcGetCUBINSize", rc);
    if (size == 0) {
      return Status(StatusCode::compile_error,
                    "NVRTC produced no CUBIN (was a virtual compute_XY target given?)");
    }
    out.binary.resize(size);
    if (nvrtcResult rc = n->nvrtcGetCUBIN(prog.get(), out.binary.data()); rc != NVRTC_SUCCESS)
      return nvrtc_failure(*n, "nvrtcGetCUBIN", rc);
    return out;
  }

 private:
  const std::string version_ = built_nvrtc_version();
};

}  // namespace

std::shared_ptr<gpu::RtcCompiler> nvrtc_compiler() {
  static const std::shared_ptr<gpu::RtcCompiler> compiler = std::make_shared<NvrtcCompiler>();
  return compiler;
}

}  // namespace tune::cuda::detail

namespace tune::cuda {

std::string compiler_version() { return detail::nvrtc_compiler()->version(); }

Result<gpu::RtcOutput> compile(std::string_view arch, const KernelSource& source,
                               const Config& config) {
  return gpu::compile_for(*detail::nvrtc_compiler(), arch, source, config, nullptr);
}

Result<std::string> compile_binary(std::string_view arch, const KernelSource& source,
                                   const Config& config) {
  auto out = compile(arch, source, config);
  if (!out.ok()) return out.status();
  return std::move(out->binary);
}

}  // namespace tune::cuda
