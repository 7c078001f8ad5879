#include "isolation/worker_server.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <thread>

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
      case WireOp::download: {
        DeviceBuffer* b = buffer(r.u64());
        const std::uint64_t offset = r.u64(), n = r.u64();
        if (!r.done() || b == nullptr || n > kMaxFrameBytes) return false;
        std::vector<std::byte> out(n);
        *st = dev_.download(*b, out.data(), n, offset);
        w.status(*st);
        w.block(out.data(), st->ok() ? n : 0);
        return true;
      }
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
      case WireOp::launch: {
        const CompiledKernel* k = kernel(r.u64());
        const LaunchDims dims = get_dims(r);
        std::vector<ArgValue> args;
        if (!get_args(r, buffer_fn(), &args) || !r.done() || k == nullptr) return false;
        *st = dev_.launch(*k, dims, args);
        w.status(*st);
        return true;
      }
      case WireOp::time:
        return time(r, w, st);
      case WireOp::synchronize:
        if (!r.done()) return false;
        *st = dev_.synchronize();
        w.status(*st);
        return true;
      case WireOp::hello:
        break;
    }
    return false;
  }

 private:
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
    if (!r.done() || k == nullptr || !plan.resets.check().ok()) return false;
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
  w.status(st);
  w.str(fingerprint);
  return write_frame(fd, w.bytes());
}

}  // namespace

int refuse_worker(int fd, const Status& why) {
  (void)send_hello(fd, why, "");
  return 1;
}

int serve_worker(Device& dev, int fd) {
  // A worker stuck in a hung kernel would outlive a parent that died (its socket's EOF is
  // never read): a watcher ends it once it is reparented. Not PR_SET_PDEATHSIG: that fires
  // when the spawning *thread* ends, and a background tuning's thread does.
  const pid_t parent = ::getppid();
  std::thread([parent] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      if (::getppid() != parent) std::_Exit(4);
    }
  }).detach();
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
