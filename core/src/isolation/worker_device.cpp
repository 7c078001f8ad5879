#include "isolation/worker_device.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "isolation/device_codec.hpp"
#include "isolation/wire.hpp"
#include "tune/log.hpp"
#include "tuning/user_code.hpp"

namespace tune::detail {

class WorkerDevice::ProxyBuffer final : public DeviceBuffer {
 public:
  ProxyBuffer(WorkerDevice& owner, std::uint64_t id, std::uint64_t bytes)
      : owner_(owner), id_(id), bytes_(bytes) {}
  ~ProxyBuffer() override { owner_.forget(this); }
  std::uint64_t size_bytes() const noexcept override { return bytes_; }

  WorkerDevice& owner_;
  const std::uint64_t id_;
  const std::uint64_t bytes_;
  // What upload, fill and copy left in the buffer; empty until the first write (the contents
  // of a fresh allocation are undefined anyway).
  std::vector<std::byte> shadow_;
  std::vector<std::byte>& shadow() {
    if (shadow_.size() != bytes_) shadow_.assign(bytes_, std::byte{0});
    return shadow_;
  }
};

class WorkerDevice::ProxyKernel final : public CompiledKernel {
 public:
  explicit ProxyKernel(WorkerDevice& owner) : owner_(owner) {}
  ~ProxyKernel() override { owner_.forget(this); }

  void set(const KernelResources& res, std::string log, bool cached) {
    resources_ = res;
    log_ = std::move(log);
    from_binary_cache_ = cached;
  }

  WorkerDevice& owner_;
  std::uint64_t id_ = 0;  // set under the device's lock
  KernelSource source_;   // without module_globals: `globals_` holds their bytes
  std::string config_;    // Config::to_string()
  bool has_globals_ = false;
  std::vector<ModuleGlobal> globals_;
  std::uint64_t generation_ = 0;  // the worker it was compiled in
};

namespace {

using std::chrono::milliseconds;

void put_compile(WireWriter& w, std::uint64_t id, const KernelSource& src,
                 const std::string& config, bool has_globals,
                 const std::vector<ModuleGlobal>& globals) {
  w.u8(static_cast<std::uint8_t>(WireOp::compile));
  w.u64(id);
  put_source(w, src);
  w.str(config);
  w.u8(has_globals ? 1 : 0);
  put_globals(w, globals);
}

void put_upload(WireWriter& w, std::uint64_t id, std::uint64_t offset, const std::byte* p,
                std::uint64_t n) {
  w.u8(static_cast<std::uint8_t>(WireOp::upload));
  w.u64(id);
  w.u64(offset);
  w.block(p, n);
}

Status malformed(const std::string& doing) {
  return Status(StatusCode::internal, "the isolated worker sent a malformed reply while " + doing);
}

}  // namespace

WorkerDevice::WorkerDevice(DeviceInfo info, Language language, WorkerSettings settings)
    : info_(std::move(info)), language_(language), settings_(std::move(settings)) {}

WorkerDevice::~WorkerDevice() {
  std::lock_guard lock(mu_);
  proc_.reset();  // closes the socket, reaps the worker
}

Status WorkerDevice::start() {
  std::lock_guard lock(mu_);
  return ensure_worker();
}

template <typename Send>
Status WorkerDevice::upload_pieces(std::uint64_t id, const std::byte* src, std::uint64_t bytes,
                                   std::uint64_t offset, Send send) {
  const std::uint64_t piece = std::max<std::uint64_t>(settings_.chunk_bytes, 1);
  std::uint64_t done = 0;
  do {
    const std::uint64_t n = std::min(piece, bytes - done);
    WireWriter w;
    put_upload(w, id, offset + done, src + done, n);
    TUNE_RETURN_IF_ERROR(send(w));
    done += n;
  } while (done < bytes);
  return {};
}

int WorkerDevice::spawns() const {
  std::lock_guard lock(mu_);
  return static_cast<int>(generation_);
}

Status WorkerDevice::ensure_worker() {
  if (proc_ != nullptr && proc_->alive()) return {};
  proc_.reset();
  std::string fingerprint;
  auto p = WorkerProcess::spawn(settings_.path, settings_.spec, settings_.startup, &fingerprint);
  if (!p.ok()) return p.status();
  if (fingerprint != info_.fingerprint()) {
    (*p)->kill_and_reap();
    return Status(StatusCode::unavailable,
                  "the isolated tuning worker '" + settings_.path + "' opened device '" +
                      fingerprint + "', not this process's '" + info_.fingerprint() +
                      "' (AutotunerOptions::isolation.device names the one to open)");
  }
  proc_ = std::move(*p);
  ++generation_;
  // Replay: every live buffer, with the contents the proxy knows.
  for (ProxyBuffer* b : buffers_) {
    WireWriter w;
    w.u8(static_cast<std::uint8_t>(WireOp::alloc));
    w.u64(b->id_);
    w.u64(b->bytes_);
    std::vector<std::byte> reply;
    const auto call = [&](const WireWriter& req) {
      Status c = proc_->call(req.bytes(), settings_.call_limit, &reply);
      WireReader r(reply);
      return c.ok() ? r.status() : c;
    };
    Status st = call(w);
    if (st.ok() && !b->shadow_.empty())
      st = upload_pieces(b->id_, b->shadow_.data(), b->shadow_.size(), 0, call);
    if (!st.ok()) {
      if (proc_->alive()) proc_->kill_and_reap();
      return Status(StatusCode::unavailable,
                    "the restarted isolated worker could not recreate a buffer of " +
                        std::to_string(b->bytes_) + " bytes: " + st.message());
    }
  }
  return {};
}

Status WorkerDevice::worker_for(const std::string& doing) {
  Status up = ensure_worker();
  if (up.ok() || generation_ == 0) return up;  // never started: the caller reports it as is
  // Not this call's failure: nothing can be measured any more. device_lost ends the tuning
  // without storing the candidates left as failed; a later tuning tries a new worker.
  return Status(StatusCode::device_lost, "the isolated tuning worker '" + settings_.path +
                                             "' could not be restarted before " + doing + ": " +
                                             up.message());
}

Status WorkerDevice::exchange(const WireWriter& request, milliseconds limit,
                              const std::string& doing, StatusCode fault,
                              std::vector<std::byte>* reply, std::uint64_t* rest, Status* cause) {
  if (cause != nullptr) *cause = {};
  TUNE_RETURN_IF_ERROR(worker_for(doing));
  Status st = proc_->call(request.bytes(), limit, reply);
  if (st.code() == StatusCode::invalid_argument) return st;  // too large to send; worker fine
  if (!st.ok()) {
    if (cause != nullptr) *cause = st;
    const std::string line = proc_->last_stderr_line();
    proc_.reset();
    return Status(fault, "the isolated worker " + st.message() + " while " + doing +
                             (line.empty() ? "" : " (its last words: " + line + ")") +
                             "; the worker is restarted for the next call");
  }
  WireReader r(*reply);
  TUNE_RETURN_IF_ERROR(reply_status(r, doing, fault, cause));
  if (rest != nullptr) *rest = r.position();
  return {};
}

Status WorkerDevice::reply_status(WireReader& r, const std::string& doing, StatusCode fault,
                                  Status* cause) {
  Status st = r.status();
  if (cause != nullptr &&
      (st.code() == StatusCode::timeout || st.code() == StatusCode::device_lost))
    *cause = st;
  if (!r.ok()) {
    proc_.reset();
    return malformed(doing);
  }
  if (st.code() == StatusCode::timeout) {
    // The backend gave up waiting, but the kernel may still run in the worker's context and
    // hold up everything queued after it: a fresh worker times the next configuration.
    proc_.reset();
    return Status(StatusCode::timeout, st.message() + " (in the isolated worker while " + doing +
                                           "; the worker was restarted)");
  }
  if (st.code() != StatusCode::device_lost) return st;
  proc_.reset();  // its context is poisoned; the server loop has ended too
  return Status(fault, "the isolated worker reported a sticky error while " + doing + ": " +
                           st.message() + "; the worker was restarted");
}

std::string WorkerDevice::after_launch(const char* what) const {
  return last_launch_.empty()
             ? std::string(what)
             : std::string(what) + " after launching config {" + last_launch_ + "}";
}

std::uint64_t WorkerDevice::id_of(const DeviceBuffer* b) const {
  const auto* p = dynamic_cast<const ProxyBuffer*>(b);
  return p == nullptr ? 0 : p->id_;
}

Status WorkerDevice::check_buffers(ArgList args) const {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i].kind != ArgKind::buffer) continue;
    const auto* p = dynamic_cast<const ProxyBuffer*>(args[i].buffer);
    if (p == nullptr || &p->owner_ != this)
      return Status(
          StatusCode::invalid_argument,
          "argument " + std::to_string(i) + " is not a buffer of the isolated worker device");
  }
  return {};
}

void WorkerDevice::forget(ProxyBuffer* b) {
  std::lock_guard lock(mu_);
  buffers_.erase(b);
  if (proc_ == nullptr || !proc_->alive()) return;
  WireWriter w;
  w.u8(static_cast<std::uint8_t>(WireOp::free_buffer));
  w.u64(b->id_);
  std::vector<std::byte> reply;
  if (!proc_->call(w.bytes(), settings_.call_limit, &reply).ok()) proc_.reset();
}

void WorkerDevice::forget(ProxyKernel* k) {
  std::lock_guard lock(mu_);
  if (proc_ == nullptr || !proc_->alive() || k->generation_ != generation_) return;
  WireWriter w;
  w.u8(static_cast<std::uint8_t>(WireOp::free_kernel));
  w.u64(k->id_);
  std::vector<std::byte> reply;
  if (!proc_->call(w.bytes(), settings_.call_limit, &reply).ok()) proc_.reset();
}

bool WorkerDevice::evict_binary(const CompiledKernel& kernel, std::string_view why) {
  auto* k = dynamic_cast<const ProxyKernel*>(&kernel);
  if (k == nullptr) return false;
  std::lock_guard lock(mu_);
  if (proc_ == nullptr || !proc_->alive() || k->generation_ != generation_) return false;
  WireWriter w;
  w.u8(static_cast<std::uint8_t>(WireOp::evict_binary));
  w.u64(k->id_);
  w.str(std::string(why));
  std::vector<std::byte> reply;
  std::uint64_t rest = 0;
  if (!exchange(w, settings_.call_limit, "evicting a cached binary", StatusCode::internal, &reply,
                &rest)
           .ok())
    return false;
  WireReader r(reply, rest);
  const bool dropped = r.u8() != 0;
  return r.done() && dropped;
}

Result<Buffer> WorkerDevice::alloc(std::uint64_t bytes) {
  std::lock_guard lock(mu_);
  const std::uint64_t id = next_id_++;
  WireWriter w;
  w.u8(static_cast<std::uint8_t>(WireOp::alloc));
  w.u64(id);
  w.u64(bytes);
  std::vector<std::byte> reply;
  const std::string doing = "allocating " + std::to_string(bytes) + " bytes";
  TUNE_RETURN_IF_ERROR(
      exchange(w, settings_.call_limit, doing, StatusCode::out_of_resources, &reply));
  auto b = std::make_unique<ProxyBuffer>(*this, id, bytes);
  buffers_.insert(b.get());
  return Buffer(std::move(b));
}

Status WorkerDevice::upload(DeviceBuffer& dst, const void* src, std::uint64_t bytes,
                            std::uint64_t offset) {
  auto* b = dynamic_cast<ProxyBuffer*>(&dst);
  if (b == nullptr) return Status(StatusCode::invalid_argument, "upload to a foreign buffer");
  if (offset > b->bytes_ || bytes > b->bytes_ - offset)
    return Status(StatusCode::invalid_argument, "upload out of the buffer's bounds");
  std::lock_guard lock(mu_);
  std::vector<std::byte> reply;
  const std::string doing = after_launch("uploading");
  TUNE_RETURN_IF_ERROR(upload_pieces(
      b->id_, static_cast<const std::byte*>(src), bytes, offset, [&](const WireWriter& w) {
        return exchange(w, settings_.call_limit, doing, StatusCode::launch_failed, &reply);
      }));
  if (bytes > 0) std::memcpy(b->shadow().data() + offset, src, bytes);
  return {};
}

Status WorkerDevice::download(const DeviceBuffer& src, void* dst, std::uint64_t bytes,
                              std::uint64_t offset) {
  const std::uint64_t id = id_of(&src);
  if (id == 0) return Status(StatusCode::invalid_argument, "download from a foreign buffer");
  std::lock_guard lock(mu_);
  const std::string doing = after_launch("downloading");
  const std::uint64_t piece = std::max<std::uint64_t>(settings_.chunk_bytes, 1);
  std::uint64_t done = 0;
  do {  // in pieces: see kChunkBytes
    const std::uint64_t want = std::min(piece, bytes - done);
    WireWriter w;
    w.u8(static_cast<std::uint8_t>(WireOp::download));
    w.u64(id);
    w.u64(offset + done);
    w.u64(want);
    std::vector<std::byte> reply;
    std::uint64_t rest = 0;
    TUNE_RETURN_IF_ERROR(
        exchange(w, settings_.call_limit, doing, StatusCode::launch_failed, &reply, &rest));
    WireReader r(reply, rest);
    auto [p, n] = r.block();
    if (!r.done() || n != want) {
      proc_.reset();
      return malformed(doing);
    }
    if (n > 0) std::memcpy(static_cast<std::byte*>(dst) + done, p, n);
    done += n;
  } while (done < bytes);
  return {};
}

Status WorkerDevice::fill(DeviceBuffer& dst, std::uint32_t pattern, std::uint64_t bytes,
                          std::uint64_t offset) {
  auto* b = dynamic_cast<ProxyBuffer*>(&dst);
  if (b == nullptr) return Status(StatusCode::invalid_argument, "fill of a foreign buffer");
  if (bytes % 4 != 0 || offset > b->bytes_ || bytes > b->bytes_ - offset)
    return Status(StatusCode::invalid_argument,
                  "fill out of the buffer's bounds or not of whole words");
  std::lock_guard lock(mu_);
  WireWriter w;
  w.u8(static_cast<std::uint8_t>(WireOp::fill));
  w.u64(b->id_);
  w.u32(pattern);
  w.u64(bytes);
  w.u64(offset);
  std::vector<std::byte> reply;
  const std::string doing = after_launch("filling");
  TUNE_RETURN_IF_ERROR(exchange(w, settings_.call_limit, doing, StatusCode::launch_failed, &reply));
  auto& s = b->shadow();
  for (std::uint64_t i = 0; i < bytes; i += 4) std::memcpy(s.data() + offset + i, &pattern, 4);
  return {};
}

Status WorkerDevice::copy(DeviceBuffer& dst, const DeviceBuffer& src, std::uint64_t bytes) {
  auto* d = dynamic_cast<ProxyBuffer*>(&dst);
  const auto* s = dynamic_cast<const ProxyBuffer*>(&src);
  if (d == nullptr || s == nullptr)
    return Status(StatusCode::invalid_argument, "copy between foreign buffers");
  if (bytes > d->bytes_ || bytes > s->bytes_)
    return Status(StatusCode::invalid_argument, "copy out of the buffers' bounds");
  std::lock_guard lock(mu_);
  WireWriter w;
  w.u8(static_cast<std::uint8_t>(WireOp::copy));
  w.u64(d->id_);
  w.u64(s->id_);
  w.u64(bytes);
  std::vector<std::byte> reply;
  const std::string doing = after_launch("copying");
  TUNE_RETURN_IF_ERROR(exchange(w, settings_.call_limit, doing, StatusCode::launch_failed, &reply));
  auto& ds = d->shadow();
  if (s->shadow_.empty())
    std::fill(ds.begin(), ds.begin() + static_cast<std::ptrdiff_t>(bytes), std::byte{0});
  else
    std::memcpy(ds.data(), s->shadow_.data(), bytes);
  return {};
}

Status WorkerDevice::ensure_kernel(ProxyKernel& k) {
  if (proc_ != nullptr && proc_->alive() && k.generation_ == generation_) return {};
  const std::string doing = "recompiling config {" + k.config_ + "} in the restarted worker";
  TUNE_RETURN_IF_ERROR(worker_for(doing));
  WireWriter w;
  put_compile(w, k.id_, k.source_, k.config_, k.has_globals_, k.globals_);
  std::vector<std::byte> reply;
  TUNE_RETURN_IF_ERROR(
      exchange(w, settings_.compile_limit, doing, StatusCode::launch_failed, &reply));
  k.generation_ = generation_;
  return {};
}

Result<std::unique_ptr<CompiledKernel>> WorkerDevice::compile(const KernelSource& source,
                                                              const Config& config) {
  auto k = std::make_unique<ProxyKernel>(*this);
  k->source_ = source;
  k->source_.module_globals = {};
  k->config_ = config.to_string();
  if (source.module_globals) {
    // The callback runs here, in the parent; its bytes travel.
    k->has_globals_ = true;
    Status st = call_user("module_globals", &config, &k->globals_,
                          [&] { return source.module_globals(config); });
    TUNE_RETURN_IF_ERROR(st);
  }
  const LowPriorityLock lock(mu_);  // yields to launches and timings (yielding_mutex.hpp)
  k->id_ = next_id_++;
  WireWriter w;
  put_compile(w, k->id_, k->source_, k->config_, k->has_globals_, k->globals_);
  std::vector<std::byte> reply;
  const std::string doing = "compiling config {" + k->config_ + "}";
  std::uint64_t rest = 0;
  Status cause;
  Status st =
      exchange(w, settings_.compile_limit, doing, StatusCode::compile_error, &reply, &rest, &cause);
  if (!st.ok() &&
      (cause.code() == StatusCode::unavailable || cause.code() == StatusCode::device_lost)) {
    // Launches of other configurations run on this worker between compiles (a compile thread
    // waits for the lock while the session launches): a worker that died or was poisoned
    // during this compile most likely carries someone else's fault. One more try in a fresh
    // worker; a compile that kills that one too is its own failure.
    log_warning("isolated tuning: " + st.message() + "; the fault is not blamed on config {" +
                k->config_ +
                "} (a launch before it may have caused it): compiling it again in a fresh worker");
    st = exchange(w, settings_.compile_limit, doing, StatusCode::compile_error, &reply, &rest);
  }
  TUNE_RETURN_IF_ERROR(st);
  WireReader r(reply, rest);
  const KernelResources res = get_resources(r);
  std::string log = r.str();
  const bool cached = r.u8() != 0;
  if (!r.done()) {
    proc_.reset();
    return malformed(doing);
  }
  k->set(res, std::move(log), cached);
  k->generation_ = generation_;
  return std::unique_ptr<CompiledKernel>(std::move(k));
}

void WorkerDevice::put_launch(WireWriter& w, WireOp op, const ProxyKernel& k,
                              const LaunchDims& dims, ArgList args) const {
  w.u8(static_cast<std::uint8_t>(op));
  w.u64(k.id_);
  put_dims(w, dims);
  put_args(w, args, [this](const DeviceBuffer* b) { return id_of(b); });
}

Status WorkerDevice::launch(const CompiledKernel& kernel, const LaunchDims& dims, ArgList args) {
  auto* k = dynamic_cast<ProxyKernel*>(const_cast<CompiledKernel*>(&kernel));
  if (k == nullptr) return Status(StatusCode::invalid_argument, "launch of a foreign kernel");
  TUNE_RETURN_IF_ERROR(check_buffers(args));
  std::lock_guard lock(mu_);
  TUNE_RETURN_IF_ERROR(ensure_kernel(*k));
  WireWriter w;
  put_launch(w, WireOp::launch, *k, dims, args);
  std::vector<std::byte> reply;
  const std::string doing = "launching config {" + k->config_ + "}";
  last_launch_ = k->config_;
  return exchange(w, settings_.call_limit, doing, StatusCode::launch_failed, &reply);
}

Result<std::vector<double>> WorkerDevice::time(const CompiledKernel& kernel, const LaunchDims& dims,
                                               ArgList args, const TimingPlan& plan) {
  auto* k = dynamic_cast<ProxyKernel*>(const_cast<CompiledKernel*>(&kernel));
  if (k == nullptr) return Status(StatusCode::invalid_argument, "timing of a foreign kernel");
  TUNE_RETURN_IF_ERROR(check_buffers(args));
  TUNE_RETURN_IF_ERROR(plan.resets.check());
  std::lock_guard lock(mu_);
  TUNE_RETURN_IF_ERROR(ensure_kernel(*k));
  WireWriter w;
  put_launch(w, WireOp::time, *k, dims, args);
  w.u32(static_cast<std::uint32_t>(std::max(plan.reps, 0)));
  w.u8(plan.flush_l2 ? 1 : 0);
  w.f64(plan.timeout_ms);
  w.u32(static_cast<std::uint32_t>(plan.resets.zero.size()));
  for (const DeviceBuffer* b : plan.resets.zero) w.u64(id_of(b));
  w.u32(static_cast<std::uint32_t>(plan.resets.restore.size()));
  for (const BufferRestore& rr : plan.resets.restore) {
    w.u64(id_of(rr.dst));
    w.u64(id_of(rr.src));
  }
  std::vector<std::byte> reply;
  const std::string doing = "timing config {" + k->config_ + "}";
  last_launch_ = k->config_;
  // Each repetition may take up to plan.timeout_ms before the backend itself reports a
  // timeout, so the batch may take reps of them; the call limit on top covers the transfer
  // and the plan's resets. Capped (a day) and computed in double: no overflow.
  const double per_rep = std::isfinite(plan.timeout_ms) ? std::max(plan.timeout_ms, 0.0) : 86400e3;
  const double reps_ms = std::min(per_rep * std::max(plan.reps, 1), 86400e3);
  const auto limit = settings_.call_limit + milliseconds(static_cast<std::int64_t>(reps_ms));
  std::uint64_t rest = 0;
  TUNE_RETURN_IF_ERROR(exchange(w, limit, doing, StatusCode::launch_failed, &reply, &rest));
  WireReader r(reply, rest);
  const std::uint32_t n = r.u32();
  std::vector<double> out;
  for (std::uint32_t i = 0; i < n && r.ok(); ++i) out.push_back(r.f64());
  if (!r.done()) {
    proc_.reset();
    return malformed(doing);
  }
  return out;
}

Status WorkerDevice::synchronize() {
  std::lock_guard lock(mu_);
  WireWriter w;
  w.u8(static_cast<std::uint8_t>(WireOp::synchronize));
  std::vector<std::byte> reply;
  const std::string doing = after_launch("synchronizing");
  return exchange(w, settings_.call_limit, doing, StatusCode::launch_failed, &reply);
}

}  // namespace tune::detail
