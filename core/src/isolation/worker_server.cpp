#include "isolation/worker_server.hpp"

#include <dirent.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "isolation/device_codec.hpp"
#include "isolation/wire.hpp"

namespace tune::detail {
namespace {

using Clock = std::chrono::steady_clock;

class Server {
 public:
  explicit Server(Device& dev) : dev_(dev) {}

  // Answers one request into `w`; false for a malformed one.
  bool answer(WireReader& r, WireWriter& w, Status* st) {
    const auto op = static_cast<WireOp>(r.u8());
    switch (op) {
      case WireOp::alloc: {
        const std::uint64_t id = r.u64(), bytes = r.u64();
        if (!r.done()) return false;
        auto b = dev_.alloc(bytes);
        if (b.ok()) buffers_[id] = std::move(*b);
        *st = b.status();
        w.status(*st);
        return true;
      }
      case WireOp::free_buffer: {
        const std::uint64_t id = r.u64();
        if (!r.done()) return false;
        buffers_.erase(id);
        w.status(*st);
        return true;
      }
      case WireOp::upload: {
        DeviceBuffer* b = buffer(r.u64());
        const std::uint64_t offset = r.u64();
        auto [p, n] = r.block();
        if (!r.done() || b == nullptr) return false;
        *st = dev_.upload(*b, p, n, offset);
        w.status(*st);
        return true;
      }
      case WireOp::download:
        return download(r, w, st);
      case WireOp::fill: {
        DeviceBuffer* b = buffer(r.u64());
        const std::uint32_t pattern = r.u32();
        const std::uint64_t bytes = r.u64(), offset = r.u64();
        if (!r.done() || b == nullptr) return false;
        *st = dev_.fill(*b, pattern, bytes, offset);
        w.status(*st);
        return true;
      }
      case WireOp::copy: {
        DeviceBuffer* dst = buffer(r.u64());
        DeviceBuffer* src = buffer(r.u64());
        const std::uint64_t bytes = r.u64();
        if (!r.done() || dst == nullptr || src == nullptr) return false;
        *st = dev_.copy(*dst, *src, bytes);
        w.status(*st);
        return true;
      }
      case WireOp::compile:
        return compile(r, w, st);
      case WireOp::free_kernel: {
        const std::uint64_t id = r.u64();
        if (!r.done()) return false;
        kernels_.erase(id);
        w.status(*st);
        return true;
      }
      case WireOp::launch:
        return launch(r, w, st);
      case WireOp::time:
        return time(r, w, st);
      case WireOp::synchronize:
        if (!r.done()) return false;
        *st = dev_.synchronize();
        w.status(*st);
        return true;
      case WireOp::evict_binary: {
        const CompiledKernel* k = kernel(r.u64());
        const std::string why = r.str();
        if (!r.done() || k == nullptr) return false;
        const bool dropped = dev_.evict_binary(*k, why);
        w.status(*st);
        w.u8(dropped ? 1 : 0);
        return true;
      }
      case WireOp::hello:
        break;
    }
    return false;
  }

 private:
  // A download's bytes in one reply (one too big for a frame is refused).
  bool download(WireReader& r, WireWriter& w, Status* st) {
    DeviceBuffer* b = buffer(r.u64());
    const std::uint64_t offset = r.u64(), n = r.u64();
    if (!r.done() || b == nullptr) return false;
    if (n > kMaxFrameBytes - 64) {  // the reply's status and length must fit beside it
      *st = Status(StatusCode::invalid_argument,
                   "a download of " + std::to_string(n) + " bytes does not fit one reply");
      w.status(*st);
      w.block(nullptr, 0);
      return true;
    }
    std::vector<std::byte> out(n);
    *st = dev_.download(*b, out.data(), n, offset);
    w.status(*st);
    w.block(out.data(), st->ok() ? n : 0);
    return true;
  }

  // A launch, synchronized so that its fault is its own reply's.
  bool launch(WireReader& r, WireWriter& w, Status* st) {
    const CompiledKernel* k = kernel(r.u64());
    const LaunchDims dims = get_dims(r);
    std::vector<ArgValue> args;
    if (!get_args(r, buffer_fn(), &args) || !r.done() || k == nullptr) return false;
    *st = dev_.launch(*k, dims, args);
    // A fault of this launch (an illegal address) is reported by the driver's next call:
    // synchronizing here puts it in this launch's reply, never in the next request's (a
    // compile of another configuration). time() synchronizes already (it reads each
    // repetition's end timestamp).
    if (st->ok()) *st = dev_.synchronize();
    w.status(*st);
    return true;
  }

  bool compile(WireReader& r, WireWriter& w, Status* st) {
    const std::uint64_t id = r.u64();
    KernelSource src = get_source(r);
    const std::string config_text = r.str();
    const bool has_globals = r.u8() != 0;
    auto globals = get_globals(r);
    if (!r.done()) return false;
    auto config = Config::parse(config_text);
    if (!config.ok()) return false;
    if (has_globals) src.module_globals = [globals](const Config&) { return globals; };
    auto k = dev_.compile(src, *config);
    *st = k.status();
    w.status(*st);
    if (k.ok()) {
      put_resources(w, (*k)->resources());
      w.str((*k)->compile_log());
      w.u8((*k)->from_binary_cache() ? 1 : 0);
      kernels_[id] = std::move(*k);
    }
    return true;
  }

  bool time(WireReader& r, WireWriter& w, Status* st) {
    const CompiledKernel* k = kernel(r.u64());
    const LaunchDims dims = get_dims(r);
    std::vector<ArgValue> args;
    if (!get_args(r, buffer_fn(), &args)) return false;
    TimingPlan plan;
    plan.reps = static_cast<int>(r.u32());
    plan.flush_l2 = r.u8() != 0;
    plan.timeout_ms = r.f64();
    const std::uint32_t nz = r.u32();
    for (std::uint32_t i = 0; i < nz && r.ok(); ++i) plan.resets.zero.push_back(buffer(r.u64()));
    const std::uint32_t nr = r.u32();
    for (std::uint32_t i = 0; i < nr && r.ok(); ++i) {
      DeviceBuffer* dst = buffer(r.u64());
      DeviceBuffer* src = buffer(r.u64());
      plan.resets.restore.push_back({dst, src});
    }
    if (!r.done() || k == nullptr) return false;
    // A reset naming no buffer of this worker (id 0: the caller passed a buffer of another
    // device) is the caller's mistake, answered as such; the worker stays.
    if (Status bad = plan.resets.check(); !bad.ok()) {
      *st = Status(
          StatusCode::invalid_argument,
          "a timing reset names a buffer the isolated worker does not hold: " + bad.message());
      w.status(*st);
      return true;
    }
    auto t = dev_.time(*k, dims, args, plan);
    *st = t.status();
    w.status(*st);
    if (t.ok()) {
      w.u32(static_cast<std::uint32_t>(t->size()));
      for (double d : *t) w.f64(d);
    }
    return true;
  }

  DeviceBuffer* buffer(std::uint64_t id) {
    auto it = buffers_.find(id);
    return it == buffers_.end() ? nullptr : it->second.get();
  }
  const CompiledKernel* kernel(std::uint64_t id) {
    auto it = kernels_.find(id);
    return it == kernels_.end() ? nullptr : it->second.get();
  }
  std::function<DeviceBuffer*(std::uint64_t)> buffer_fn() {
    return [this](std::uint64_t id) { return buffer(id); };
  }

  Device& dev_;
  std::map<std::uint64_t, Buffer> buffers_;
  std::map<std::uint64_t, std::unique_ptr<CompiledKernel>> kernels_;
};

Status send_hello(int fd, const Status& st, const std::string& fingerprint) {
  WireWriter w;
  w.u8(static_cast<std::uint8_t>(WireOp::hello));
  w.u32(kWireVersion);
  w.status(st);
  w.str(fingerprint);
  return write_frame(fd, w.bytes());
}

// Closes every descriptor >= 3 but `keep` (close_range where the kernel has it, else each one
// /proc/self/fd lists).
void close_fds_except(int keep) {
  const auto range = [](unsigned lo, unsigned hi) {
    if (lo > hi) return;
#ifdef SYS_close_range
    if (::syscall(SYS_close_range, lo, hi, 0u) == 0) return;
#endif
    if (DIR* d = ::opendir("/proc/self/fd")) {
      std::vector<int> open;
      while (const dirent* e = ::readdir(d)) {
        const int fd = std::atoi(e->d_name);
        if (fd >= static_cast<int>(lo) && static_cast<unsigned>(fd) <= hi && fd != ::dirfd(d))
          open.push_back(fd);
      }
      ::closedir(d);
      for (int fd : open) ::close(fd);
    }
  };
  if (keep < 3) {
    range(3, ~0u);
  } else {
    range(3, static_cast<unsigned>(keep) - 1);
    range(static_cast<unsigned>(keep) + 1, ~0u);
  }
}

}  // namespace

int refuse_worker(int fd, const Status& why) {
  (void)send_hello(fd, why, "");
  return 1;
}

void begin_worker(int fd, pid_t parent) {
  // Descriptors of the host program that were not close-on-exec (a pipe, a listening socket)
  // would stay open while the worker lives: the host's peers would never see EOF on them.
  close_fds_except(fd);
  // A worker stuck in a hung kernel would outlive a parent that died (its socket's EOF is
  // never read): a watcher ends it once it is reparented. The parent's pid comes from argv, so
  // a parent that died while the device opened (seconds, for a GPU) is noticed too. Not
  // PR_SET_PDEATHSIG: that fires when the spawning *thread* ends, and a background tuning's
  // thread does.
  if (parent <= 0) parent = ::getppid();
  if (::getppid() != parent) std::_Exit(4);
  std::thread([parent] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      if (::getppid() != parent) std::_Exit(4);
    }
  }).detach();
}

int serve_worker(Device& dev, int fd) {
  if (!send_hello(fd, {}, dev.info().fingerprint()).ok()) return 1;
  Server server(dev);
  std::vector<std::byte> request;
  for (;;) {
    Status got = read_frame(fd, Clock::time_point::max(), &request);
    if (!got.ok()) return got.code() == StatusCode::unavailable ? 0 : 1;
    WireReader r(request);
    WireWriter w;
    Status st;
    if (!server.answer(r, w, &st)) return 2;
    if (!write_frame(fd, w.bytes()).ok()) return 1;
    if (st.code() == StatusCode::device_lost) return 3;
  }
}

}  // namespace tune::detail
