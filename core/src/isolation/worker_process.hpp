// WorkerProcess: one spawned tune-worker and the socket to it.
//
// spawn() starts the executable with posix_spawn (never fork without exec: CUDA forbids using
// the driver in a forked child) as `<path> --fd 0 --parent <our pid> --device <spec>`, its
// stdin being one end of a socketpair(AF_UNIX) and its stderr an unlinked temporary file (so a
// chatty worker never blocks on a pipe nobody drains, and its last line can name why it
// failed). The parent's end is O_CLOEXEC; writes use MSG_NOSIGNAL, so a dead worker is an
// EPIPE status, never SIGPIPE, and the host program's signal dispositions are left alone. The
// worker closes the other descriptors it inherited, then answers a hello (kWireVersion,
// status and its device's fingerprint) once its device is open; a worker speaking another
// protocol version is refused (failed_precondition naming both).
//
// call() sends one request and waits for its reply until a deadline. On a timeout, a broken
// socket or EOF the process is killed (SIGKILL) and reaped (waitpid), and the Status says
// what happened: "died with signal 11", "exited with code 3", "did not answer within 2000 ms".
// The destructor closes the socket, gives the worker a moment to exit on EOF, then kills and
// reaps it: no zombie, no leaked descriptor.
//
// Thread safety: none; WorkerDevice serialises calls.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "tune/status.hpp"

namespace tune::detail {

class WorkerProcess {
 public:
  // Starts `path` for device `spec` and waits (until `startup`) for its hello. The hello's
  // fingerprint is returned through `fingerprint`. unavailable/not_found naming the path and
  // the worker's last stderr line when it cannot start or its device does not open.
  static Result<std::unique_ptr<WorkerProcess>> spawn(const std::string& path,
                                                      const std::string& spec,
                                                      std::chrono::milliseconds startup,
                                                      std::string* fingerprint);
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Sends `request` and reads the reply payload into `reply`. Any failure (not a reply status:
  // a dead, hung or garbled worker) kills the worker; alive() is false afterwards. A request
  // too large to frame is invalid_argument and the worker stays.
  Status call(const std::vector<std::byte>& request, std::chrono::milliseconds limit,
              std::vector<std::byte>* reply);
  // Kills and reaps the worker; the Status describes how it ended ("died with signal 9").
  std::string kill_and_reap();
  bool alive() const noexcept { return pid_ > 0; }
  pid_t pid() const noexcept { return pid_; }
  // The last non-empty line the worker wrote to stderr ("" when none).
  std::string last_stderr_line() const;

 private:
  WorkerProcess(pid_t pid, int sock, int err_fd) : pid_(pid), sock_(sock), err_fd_(err_fd) {}
  // After EOF: the worker's own exit status once it has ended (killed after a second).
  std::string reap_after_eof();
  // How the reaped process ended.
  static std::string describe_wait(int wstatus);

  pid_t pid_ = -1;
  int sock_ = -1;
  int err_fd_ = -1;
  std::string ended_;  // how it ended, once reaped
};

}  // namespace tune::detail
