// WorkerDevice: a tune::Device whose every call runs in an isolated worker process on the same
// GPU (AutotunerOptions::isolation). The tuning session talks only through Device& and
// ArgList, so it runs unchanged in the parent against this proxy: user callbacks (dims, hooks,
// verify, module_globals) run in the parent, and their dev.upload/download go to the worker.
//
// Handles: proxy buffers and kernels are ids into the worker's tables. module_globals is
// evaluated here for the configuration and its bytes travel with the compile.
//
// Faults: a worker that dies, does not answer in time, or answers device_lost (a sticky error
// that poisoned its context) is killed and reaped; that call fails with launch_failed (queue
// and launch calls) or compile_error (compile) naming what happened and the configuration,
// never device_lost (the real device is fine: the race goes on). The worker synchronizes each
// launch before answering, so a launch's asynchronous fault is that launch's failure; a
// compile that still meets a dead or poisoned worker (another thread's launch poisoned it) is
// tried once more in a fresh worker, not blamed. A worker that cannot be restarted is
// device_lost naming the worker: the tuning ends, and no candidate is stored as failed. A timeout
// the worker reports keeps its code but restarts the worker too (the kernel may still run there).
// The next call spawns a fresh worker (lazily: a WorkerDevice that is never called never spawns)
// and replays state: every live buffer is recreated with its host shadow, every live kernel is
// recompiled on its next use (the binary cache makes that cheap).
//
// The shadow rule: the proxy keeps a host copy of each buffer as upload, fill and copy left
// it; a kernel launch does not change the shadow. A replayed buffer therefore holds its
// contents from before the launches of the dead worker, which is what tuning wants (every
// candidate sees the caller's inputs). It costs host memory equal to the buffers' size.
//
// info() and language() are the parent device's (the worker must open the same device: its
// fingerprint is checked at every spawn), so they never spawn a worker.
//
// Thread safety: every call may come from any thread; calls are serialised (one request on the
// socket at a time), so compiles in the worker do not overlap, and a compile waits while other
// calls keep coming (a tuning's launches and timings are not queued behind its compiles).
// Ownership: buffers and kernels must be destroyed before the WorkerDevice, as for any Device.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "isolation/wire.hpp"
#include "isolation/worker_process.hpp"
#include "isolation/yielding_mutex.hpp"
#include "tune/device.hpp"

namespace tune::detail {

struct WorkerSettings {
  std::string path;  // the worker executable
  std::string spec;  // its --device argument
  std::chrono::milliseconds startup{120000};
  std::chrono::milliseconds call_limit{60000};      // any call but compile, plus a time()'s plan
  std::chrono::milliseconds compile_limit{300000};  // one compile
  std::uint64_t chunk_bytes = kChunkBytes;          // the largest piece of one transfer
};

class WorkerDevice final : public Device {
 public:
  WorkerDevice(DeviceInfo info, Language language, WorkerSettings settings);
  ~WorkerDevice() override;

  const DeviceInfo& info() const noexcept override { return info_; }
  Language language() const noexcept override { return language_; }
  Result<Buffer> alloc(std::uint64_t bytes) override;
  Status upload(DeviceBuffer& dst, const void* src, std::uint64_t bytes,
                std::uint64_t offset) override;
  Status download(const DeviceBuffer& src, void* dst, std::uint64_t bytes,
                  std::uint64_t offset) override;
  Status fill(DeviceBuffer& dst, std::uint32_t pattern, std::uint64_t bytes,
              std::uint64_t offset) override;
  Status copy(DeviceBuffer& dst, const DeviceBuffer& src, std::uint64_t bytes) override;
  Result<std::unique_ptr<CompiledKernel>> compile(const KernelSource& source,
                                                  const Config& config) override;
  // Forwarded to the worker's device (its binary caches are the worker's).
  bool evict_binary(const CompiledKernel& kernel, std::string_view why) override;
  Status launch(const CompiledKernel& kernel, const LaunchDims& dims, ArgList args) override;
  Result<std::vector<double>> time(const CompiledKernel& kernel, const LaunchDims& dims,
                                   ArgList args, const TimingPlan& plan) override;
  Status synchronize() override;

  // Starts the worker now if none runs: the first start's failure (not_found, unavailable,
  // failed_precondition) is the caller's to report, before any candidate is tried.
  Status start();
  // Workers started so far (the first one included): tests check restarts.
  int spawns() const;

 private:
  class ProxyBuffer;
  class ProxyKernel;

  // Sends `request` (spawning a worker first if none runs) and reads the reply's status; the
  // reply's other fields start at `*rest` in `reply`. A dead/hung/sticky worker becomes
  // `fault` naming `doing`; `*cause` (when given) gets what happened to the worker then
  // (unavailable: it died, device_lost: a sticky error, timeout), else ok. A worker that cannot
  // be restarted (or its state replayed) is device_lost naming it: that ends the tuning and is
  // no candidate's failure. Caller holds mu_.
  Status exchange(const WireWriter& request, std::chrono::milliseconds limit,
                  const std::string& doing, StatusCode fault, std::vector<std::byte>* reply,
                  std::uint64_t* rest = nullptr, Status* cause = nullptr);
  // upload and a restarted worker's replay: `bytes` from `src` at `offset`, in pieces of at
  // most settings_.chunk_bytes. `send` makes one request (exchange or a bare call).
  template <typename Send>
  Status upload_pieces(std::uint64_t id, const std::byte* src, std::uint64_t bytes,
                       std::uint64_t offset, Send send);
  // The reply's status; a device_lost one ends the worker and becomes `fault`. Caller holds mu_.
  Status reply_status(WireReader& r, const std::string& doing, StatusCode fault,
                      Status* cause = nullptr);
  // "downloading after launching config {...}": the likely culprit of an asynchronous fault.
  std::string after_launch(const char* what) const;
  Status ensure_worker();
  // ensure_worker for a call `doing`: a restart that fails is device_lost naming the worker
  // (the first start's failure keeps its code). Caller holds mu_.
  Status worker_for(const std::string& doing);
  Status ensure_kernel(ProxyKernel& k);
  Status check_buffers(ArgList args) const;
  // What launch and time requests start with: op, kernel id, dims, arguments as buffer ids.
  void put_launch(WireWriter& w, WireOp op, const ProxyKernel& k, const LaunchDims& dims,
                  ArgList args) const;
  std::uint64_t id_of(const DeviceBuffer* b) const;
  void forget(ProxyBuffer* b);
  void forget(ProxyKernel* k);

  const DeviceInfo info_;
  const Language language_;
  const WorkerSettings settings_;

  mutable YieldingMutex mu_;  // guards everything below; compiles yield (yielding_mutex.hpp)
  std::unique_ptr<WorkerProcess> proc_;
  std::uint64_t generation_ = 0;  // spawns so far; a kernel compiled in an older one recompiles
  std::uint64_t next_id_ = 1;
  std::set<ProxyBuffer*> buffers_;
  std::string last_launch_;  // config of the last launch: the culprit of a later async fault
};

}  // namespace tune::detail
