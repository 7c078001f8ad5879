// tuning_study: the helpers the subcommands share (study.hpp).
#include "study.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <utility>

#include "race.hpp"

namespace study {

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

Clock::time_point g_start = Clock::now();

[[noreturn]] void die(const std::string& what, const Status& st) {
  std::fprintf(stderr, "tuning_study: %s: %s\n", what.c_str(), st.to_string().c_str());
  std::exit(1);
}

std::string size_text(const Size& s) {
  std::string out;
  for (auto v : s) out += (out.empty() ? "" : "x") + std::to_string(v);
  return out;
}

std::optional<Size> parse_size(const std::string& text) {
  Size out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t x = text.find('x', pos);
    std::string part = text.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    char* end = nullptr;
    long long v = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || v <= 0) return std::nullopt;
    out.push_back(v);
    if (x == std::string::npos) break;
    pos = x + 1;
  }
  return out;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// Nanoseconds as a short human string.
std::string ns_text(double ns) {
  if (!std::isfinite(ns)) return "inf";
  if (ns >= 1e6) return fmt("%.3f ms", ns / 1e6);
  if (ns >= 1e3) return fmt("%.1f us", ns / 1e3);
  return fmt("%.0f ns", ns);
}

bool is_matmul(const std::string& name) { return name.rfind("matmul", 0) == 0; }

// ---- device and workload helpers -------------------------------------------------------------

std::unique_ptr<Device> open(const Options& o) {
  auto d = open_device(o.device);
  if (!d.ok()) die("open_device(\"" + o.device + "\")", d.status());
  return std::move(*d);
}

BeforeLaunch before_for(const KernelDef& def, ArgList args) {
  auto resets = def.zero_resets(args);
  if (!resets.ok()) die(def.name + " reset_to_zero", resets.status());
  BeforeLaunch b;
  b.resets = std::move(*resets);
  return b;
}

Status verify(Device& dev, const kernels::BundledKernel& k, kernels::Workload& w, const Config& c,
              const CompiledKernel& ck) {
  TUNE_RETURN_IF_ERROR(w.poison_outputs(dev));
  TUNE_RETURN_IF_ERROR(k.def.zero_reset_buffers(dev, w.args()));
  TUNE_RETURN_IF_ERROR(dev.launch(ck, k.def.dims(c, w.args()), w.args()));
  TUNE_RETURN_IF_ERROR(dev.synchronize());
  return w.check(dev);
}

std::unique_ptr<kernels::Workload> make_workload(Device& dev, const kernels::BundledKernel& k,
                                                 const Size& s) {
  auto w = k.workload(s);
  Status st = w->setup(dev, 2024);
  if (!st.ok()) die(k.name + " " + size_text(s) + " setup", st);
  return w;
}

std::vector<Result<std::unique_ptr<CompiledKernel>>> compile_many(Device& dev,
                                                                  const KernelSource& src,
                                                                  const std::vector<Config>& cs) {
  std::vector<std::optional<Result<std::unique_ptr<CompiledKernel>>>> slots(cs.size());
  std::atomic<std::size_t> next{0}, done{0};
  const unsigned workers = std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(),
                                                           static_cast<unsigned>(cs.size())));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < workers; ++t) {
    pool.emplace_back([&] {
      for (std::size_t i = next++; i < cs.size(); i = next++) {
        slots[i].emplace(dev.compile(src, cs[i]));
        std::size_t n = ++done;
        if (cs.size() >= 200 && n % 200 == 0) progress("  compiled %zu / %zu", n, cs.size());
      }
    });
  }
  for (auto& t : pool) t.join();
  std::vector<Result<std::unique_ptr<CompiledKernel>>> out;
  out.reserve(cs.size());
  for (auto& s : slots) out.push_back(std::move(*s));
  return out;
}

// ---- long, interleaved re-timing ---------------------------------------------------------------

Status time_interleaved(Device& dev, std::vector<Contender>& cs, ArgList args,
                        const TimingPolicy& opts, int rounds, const BeforeLaunch& before) {
  std::vector<int> per_round(cs.size(), 0);
  for (std::size_t i = 0; i < cs.size(); ++i) {
    auto est = warm_up(dev, *cs[i].kernel, cs[i].dims, args, opts, before);
    if (!est.ok()) {
      if (est.status().code() == StatusCode::device_lost) return est.status();
      cs[i].status = est.status();
      continue;
    }
    const int total = reps_for(*est, opts);
    per_round[i] = std::max(1, (total + rounds - 1) / rounds);
  }
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t i = 0; i < cs.size(); ++i) {
      if (!cs[i].status.ok()) continue;
      auto s = time_reps(dev, *cs[i].kernel, cs[i].dims, args, opts, per_round[i], before);
      if (!s.ok()) {
        if (s.status().code() == StatusCode::device_lost) return s.status();
        cs[i].status = s.status();
        continue;
      }
      cs[i].samples.insert(cs[i].samples.end(), s->begin(), s->end());
    }
  }
  for (auto& c : cs) {
    if (!c.status.ok() || c.samples.empty()) {
      if (c.status.ok()) c.status = Status(StatusCode::internal, "no samples");
      c.stats.median = kInf;
      continue;
    }
    c.stats = summarize(c.samples);
    c.ci = median_interval(c.samples, 0.99);
  }
  return {};
}

TimingPolicy long_budget(const Options& o) {
  TimingPolicy b;
  if (o.quick) {
    b.warmup_ms = 5;
    b.rep_ms = 50;
    b.max_reps = 300;
  } else if (o.large) {
    b.warmup_ms = 20;
    b.rep_ms = 100;
    b.max_reps = 3000;
  } else {
    b.warmup_ms = 25;
    b.rep_ms = 250;
    b.max_reps = 5000;
  }
  if (o.long_ms > 0) b.rep_ms = o.long_ms;
  b.min_reps = 10;
  b.racing = false;
  return b;
}

std::string budget_text(const TimingPolicy& b, int rounds) {
  return "warmup " + fmt("%.0f", b.warmup_ms) + " ms, " + fmt("%.0f", b.rep_ms) + " ms of reps (" +
         std::to_string(b.min_reps) + ".." + std::to_string(b.max_reps) + ") per config in " +
         std::to_string(rounds) + " interleaved rounds, L2 flushed before each rep";
}

std::vector<kernels::BundledKernel> kernels_for(Device& dev, const Options& o) {
  auto all = kernels::bundled_kernels(dev.language());
  if (all.empty())
    die("bundled kernels",
        Status(StatusCode::unavailable,
               "no bundled kernels for language " + std::string(to_string(dev.language()))));
  if (o.kernel.empty()) return all;
  std::vector<kernels::BundledKernel> out;
  for (auto& k : all)
    if (k.name == o.kernel) out.push_back(std::move(k));
  if (out.empty()) die("--kernel", Status(StatusCode::invalid_argument, "no kernel " + o.kernel));
  return out;
}

void print_device(const DeviceInfo& info, const Options& o) {
  std::printf("Device: %s (%s, %s), driver %s, compiler %s. Command: tuning_study %s%s%s%s%s%s\n",
              info.name.c_str(), info.backend.c_str(), info.arch.c_str(),
              info.driver_version.c_str(), info.compiler_version.c_str(), o.command.c_str(),
              o.large ? " --large" : "", o.quick ? " --quick" : "",
              o.kernel.empty() ? "" : (" --kernel " + o.kernel).c_str(),
              (o.device.empty() ? std::string() : " --device " + o.device).c_str(),
              ((o.command == "record" ? " --space " + o.space : std::string()) +
               (o.size.empty() ? std::string() : " --size " + o.size) +
               (o.long_ms > 0 ? " --long-ms " + fmt("%g", o.long_ms) : std::string()) +
               (o.max_seconds > 0 ? " --max-seconds " + fmt("%g", o.max_seconds) : std::string()) +
               (o.resume.empty() ? std::string() : " --resume " + o.resume))
                  .c_str());
  if (info.vendor == "Mesa" || info.name.find("llvmpipe") != std::string::npos)
    std::printf("Note: lavapipe/llvmpipe runs on the CPU: these are CPU timings, not GPU ones.\n");
  std::printf("\n");
}

std::ofstream open_out(const Options& o, const std::string& name) {
  std::filesystem::create_directories(o.out);
  std::filesystem::path p = std::filesystem::path(o.out) / name;
  std::ofstream f(p);
  if (!f) die("open " + p.string(), Status(StatusCode::internal, "cannot write"));
  progress("writing %s", p.string().c_str());
  return f;
}

Size large_size(const kernels::BundledKernel& k) {
  if (is_matmul(k.name)) return {4096, 4096, 4096};
  return {std::int64_t{1} << 26};
}

}  // namespace study
