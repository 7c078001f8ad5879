// The isolated tuning worker's server loop (the tune-worker executable's body; the tests'
// simulated worker runs it too).
//
// begin_worker() is the first thing a worker's main does, before its device opens: it closes
// the descriptors the host program leaked into it (all >= 3 but the socket) and starts the
// parent-death watcher. serve_worker() sends the hello (kWireVersion, ok and dev's
// fingerprint), then reads requests from `fd`
// (wire.hpp, device_codec.hpp) and answers each with the Device call's status and results,
// until EOF (0 returned) or a malformed request (2). After answering a request whose status is
// device_lost it returns 3 at once: its context is poisoned, the parent restarts a worker.
// Buffers and kernels are kept in tables keyed by the ids the parent chose.
// A launch is synchronized before its reply, so its fault is its own reply's status.
// The worker exits (code 4) within half a second of its parent's death (the pid given to
// begin_worker), even while stuck in a hung kernel. Blocking: runs until the parent closes the
// socket. Single-threaded (but for the watcher thread).
#pragma once

#include <sys/types.h>

#include "tune/device.hpp"

namespace tune::detail {

// `fd`: the socket to keep; `parent`: the spawning process's pid (--parent; 0: getppid()).
void begin_worker(int fd, pid_t parent);

int serve_worker(Device& dev, int fd);

// The hello of a worker whose device did not open: the parent reports `why`. Returns 1.
int refuse_worker(int fd, const Status& why);

}  // namespace tune::detail
