// hiprtc (inside libamdhip64) as an RtcCompiler: HIP C++ to a code object for one gfx target.
// hiprtc is reached through the dlopen'ed library's table (hip_library.hpp): the first compile
// or version query loads it.
#include <mutex>
#include <vector>

#include "hip_internal.hpp"
#include "hip_library.hpp"
#include "tune/hip.hpp"

namespace tune::hip::detail {
namespace {

Status hiprtc_failure(const HipLibrary& h, const char* call, hiprtcResult rc,
                      const std::string& log = {}) {
  std::string msg = std::string(call) + " failed: " + h.hiprtcGetErrorString(rc);
  if (!log.empty()) msg += "\n" + log;
  StatusCode code = StatusCode::internal;
  if (rc == HIPRTC_ERROR_COMPILATION) code = StatusCode::compile_error;
  if (rc == HIPRTC_ERROR_INVALID_OPTION) code = StatusCode::invalid_argument;
  return Status(code, msg);
}

// "hiprtc 9.0", as the loaded hiprtc reports itself (ROCm 5.2's says 9.0); "hiprtc unknown"
// when the library is missing or will not say. Loads the library on the first call.
std::string loaded_version() {
  const HipLibrary* h = hip_library(nullptr);
  int major = 0, minor = 0;
  if (h == nullptr || h->hiprtcVersion(&major, &minor) != HIPRTC_SUCCESS) return "hiprtc unknown";
  return "hiprtc " + std::to_string(major) + "." + std::to_string(minor);
}

class HiprtcCompiler final : public gpu::RtcCompiler {
 public:
  std::string version() const override {
    static const std::string v = loaded_version();  // thread-safe once; the library stays
    return v;
  }
  std::string_view binary_kind() const noexcept override { return "hsaco"; }

  Result<std::vector<std::string>> target_options(std::string_view arch,
                                                  bool arch_specific) const override {
    if (arch_specific) {
      return Status(StatusCode::invalid_argument,
                    "hiprtc has no architecture-specific targets (KernelSource::arch_specific is "
                    "for CUDA's sm_XYa)");
    }
    if (arch.size() < 4 || arch.substr(0, 3) != "gfx") {
      return Status(StatusCode::invalid_argument,
                    "hiprtc target '" + std::string(arch) + "' is not a gfx architecture");
    }
    // RDNA (gfx10xx, gfx11xx) compiles wave32 by default; GCN/CDNA are wave64.
    const bool wave32 = arch.substr(0, 5) == "gfx10" || arch.substr(0, 5) == "gfx11";
    return std::vector<std::string>{"--offload-arch=" + std::string(arch),
                                    std::string("-DTUNE_WARP_SIZE=") + (wave32 ? "32" : "64")};
  }

  std::vector<std::string> base_options() const override { return {"-O3", "-std=c++17"}; }
  std::string max_registers_option(int) const override { return {}; }  // no hiprtc equivalent

  Result<gpu::RtcOutput> compile(std::string_view source, std::string_view file_name,
                                 std::span<const std::string> options,
                                 std::span<const KernelHeader> headers,
                                 std::string_view name_expression) override {
    Status why;
    const HipLibrary* h = hip_library(&why);
    if (h == nullptr) return why;
    // ROCm 5.2's hiprtc is not documented as thread-safe: one compile at a time.
    std::lock_guard<std::mutex> lock(mutex_);
    const std::string src(source), name(file_name);
    std::vector<const char*> header_texts, header_names;
    for (const KernelHeader& header : headers) {
      header_texts.push_back(header.text.c_str());
      header_names.push_back(header.name.c_str());
    }
    hiprtcProgram prog = nullptr;
    if (hiprtcResult rc = h->hiprtcCreateProgram(
            &prog, src.c_str(), name.c_str(), static_cast<int>(headers.size()),
            header_texts.empty() ? nullptr : header_texts.data(),
            header_names.empty() ? nullptr : header_names.data());
        rc != HIPRTC_SUCCESS)
      return hiprtc_failure(*h, "hiprtcCreateProgram", rc);
    struct Destroy {
      const HipLibrary* lib;
      hiprtcProgram* p;
      ~Destroy() { (void)lib->hiprtcDestroyProgram(p); }
    } destroy{h, &prog};
    std::vector<const char*> argv;
    for (const auto& o : options) argv.push_back(o.c_str());
    const std::string expr(name_expression);
    if (!expr.empty()) {
      if (hiprtcResult rc = h->hiprtcAddNameExpression(prog, expr.c_str()); rc != HIPRTC_SUCCESS)
        return hiprtc_failure(*h, "hiprtcAddNameExpression", rc);
    }
    const hiprtcResult compiled =
        h->hiprtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
    gpu::RtcOutput out;
    std::size_t log_size = 0;
    if (h->hiprtcGetProgramLogSize(prog, &log_size) == HIPRTC_SUCCESS && log_size > 1) {
      out.log.resize(log_size);
      if (h->hiprtcGetProgramLog(prog, out.log.data()) != HIPRTC_SUCCESS) out.log.clear();
      while (!out.log.empty() && (out.log.back() == '\0' || out.log.back() == '\n'))
        out.log.pop_back();
    }
    if (compiled != HIPRTC_SUCCESS) {
      std::string opts;
      for (const auto& o : options) opts += " " + o;
      return hiprtc_failure(*h, "hiprtcCompileProgram", compiled,
                            "options:" + opts + "\n" + (out.log.empty() ? "(empty log)" : out.log));
    }
    if (!expr.empty()) {
      // Valid until the program is destroyed: copied out now.
      const char* lowered = nullptr;
      if (hiprtcResult rc = h->hiprtcGetLoweredName(prog, expr.c_str(), &lowered);
          rc != HIPRTC_SUCCESS || lowered == nullptr)
        return hiprtc_failure(*h, "hiprtcGetLoweredName", rc, "name expression: " + expr);
      out.entry_name = lowered;
    }
    std::size_t size = 0;
    if (hiprtcResult rc = h->hiprtcGetCodeSize(prog, &size); rc != HIPRTC_SUCCESS)
      return hiprtc_failure(*h, "hiprtcGetCodeSize", rc);
    if (size == 0) return Status(StatusCode::compile_error, "hiprtc produced no code object");
    out.binary.resize(size);
    if (hiprtcResult rc = h->hiprtcGetCode(prog, out.binary.data()); rc != HIPRTC_SUCCESS)
      return hiprtc_failure(*h, "hiprtcGetCode", rc);
    return out;
  }

 private:
  std::mutex mutex_;
};

}  // namespace

std::shared_ptr<gpu::RtcCompiler> hiprtc_compiler() {
  static const std::shared_ptr<gpu::RtcCompiler> compiler = std::make_shared<HiprtcCompiler>();
  return compiler;
}

}  // namespace tune::hip::detail

namespace tune::hip {

std::string compiler_version() { return detail::hiprtc_compiler()->version(); }

Result<gpu::RtcOutput> compile(std::string_view arch, const KernelSource& source,
                               const Config& config) {
  return gpu::compile_for(*detail::hiprtc_compiler(), arch, source, config, nullptr);
}

Result<std::string> compile_binary(std::string_view arch, const KernelSource& source,
                                   const Config& config) {
  auto out = compile(arch, source, config);
  if (!out.ok()) return out.status();
  return std::move(out->binary);
}

}  // namespace tune::hip
