#include "isolation/worker_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "isolation/wire.hpp"

extern char** environ;

namespace tune::detail {
namespace {

Status errno_status(StatusCode code, const std::string& what) {
  return Status(code, what + ": " + std::strerror(errno));
}

// Closes fd if open.
void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

Result<std::unique_ptr<WorkerProcess>> WorkerProcess::spawn(const std::string& path,
                                                            const std::string& spec,
                                                            std::chrono::milliseconds startup,
                                                            std::string* fingerprint) {
  const std::string who = "the isolated tuning worker '" + path + "'";
  if (::access(path.c_str(), X_OK) != 0) {
    return Status(errno == ENOENT ? StatusCode::not_found : StatusCode::unavailable,
                  who + " cannot be run: " + std::strerror(errno) +
                      " (set AutotunerOptions::isolation.worker or TUNE_WORKER)");
  }
  int sv[2] = {-1, -1};
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return errno_status(StatusCode::unavailable, "socketpair for " + who);
  char err_name[] = "/tmp/tune-worker-stderr-XXXXXX";
  int err_fd = ::mkostemp(err_name, O_CLOEXEC);
  if (err_fd < 0) {
    close_fd(sv[0]);
    close_fd(sv[1]);
    return errno_status(StatusCode::unavailable, "a stderr file for " + who);
  }
  ::unlink(err_name);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  // dup2 clears FD_CLOEXEC on the new descriptor: 0 (its socket), 1 (the parent's stdout) and
  // 2 (the stderr file). Every other descriptor of the host program that is not close-on-exec
  // is inherited too: the worker closes them first thing (begin_worker).
  posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
  posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
  std::vector<std::string> argv_s = {path, "--fd", "0", "--parent", std::to_string(::getpid())};
  if (!spec.empty()) {
    argv_s.push_back("--device");
    argv_s.push_back(spec);
  }
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  // The worker starts with no signal blocked and every signal at its default action, whatever
  // this thread blocks or the host program ignores.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, path.c_str(), &fa, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&fa);
  close_fd(sv[1]);
  if (rc != 0) {
    close_fd(sv[0]);
    close_fd(err_fd);
    return Status(StatusCode::unavailable, who + " did not start: " + std::strerror(rc));
  }
  std::unique_ptr<WorkerProcess> w(new WorkerProcess(pid, sv[0], err_fd));
  std::vector<std::byte> hello;
  Status st = read_frame(w->sock_, std::chrono::steady_clock::now() + startup, &hello);
  if (!st.ok()) {
    const std::string how = st.code() == StatusCode::timeout
                                ? "did not start within " + std::to_string(startup.count()) + " ms"
                                : w->reap_after_eof();
    if (st.code() == StatusCode::timeout) w->kill_and_reap();
    const std::string line = w->last_stderr_line();
    return Status(StatusCode::unavailable, who + " " + how + (line.empty() ? "" : ": " + line));
  }
  WireReader r(hello);
  const auto op = static_cast<WireOp>(r.u8());
  const std::uint32_t version = r.u32();
  if (r.ok() && op == WireOp::hello && version != kWireVersion) {
    w->kill_and_reap();
    return Status(StatusCode::failed_precondition,
                  who + " speaks protocol version " + std::to_string(version) +
                      ", this libtune speaks version " + std::to_string(kWireVersion) +
                      " (install the tune-worker built with this libtune)");
  }
  Status opened = r.status();
  std::string fp = r.str();
  if (!r.done() || op != WireOp::hello) {
    w->kill_and_reap();
    return Status(StatusCode::unavailable, who + " sent a malformed hello");
  }
  if (!opened.ok()) {
    w->kill_and_reap();
    return Status(
        opened.code() == StatusCode::not_found ? StatusCode::not_found : StatusCode::unavailable,
        who + " could not open device '" + spec + "': " + opened.message());
  }
  if (fingerprint != nullptr) *fingerprint = std::move(fp);
  return w;
}

WorkerProcess::~WorkerProcess() {
  if (pid_ > 0) {
    // EOF asks the server loop to end; give it a moment, then make sure.
    close_fd(sock_);
    for (int i = 0; i < 50 && pid_ > 0; ++i) {
      int ws = 0;
      if (::waitpid(pid_, &ws, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (pid_ > 0) kill_and_reap();
  }
  close_fd(sock_);
  close_fd(err_fd_);
}

std::string WorkerProcess::describe_wait(int ws) {
  if (WIFSIGNALED(ws)) {
    const int sig = WTERMSIG(ws);
    const char* name = ::strsignal(sig);
    return "died with signal " + std::to_string(sig) + (name ? " (" + std::string(name) + ")" : "");
  }
  if (WIFEXITED(ws)) return "exited with code " + std::to_string(WEXITSTATUS(ws));
  return "ended";
}

std::string WorkerProcess::kill_and_reap() {
  if (pid_ <= 0) return ended_;
  int ws = 0;
  // A worker that already ended keeps its own exit status; a live one is killed.
  pid_t r = ::waitpid(pid_, &ws, WNOHANG);
  if (r == 0) {
    ::kill(pid_, SIGKILL);
    do {
      r = ::waitpid(pid_, &ws, 0);
    } while (r < 0 && errno == EINTR);
  }
  ended_ = r == pid_ ? describe_wait(ws) : "ended";
  pid_ = -1;
  close_fd(sock_);
  return ended_;
}

Status WorkerProcess::call(const std::vector<std::byte>& request, std::chrono::milliseconds limit,
                           std::vector<std::byte>* reply) {
  if (pid_ <= 0) return Status(StatusCode::unavailable, "the worker is not running");
  Status st = write_frame(sock_, request);
  // A request too large to frame was not written: the worker is fine.
  if (st.code() == StatusCode::invalid_argument) return st;
  if (st.ok()) st = read_frame(sock_, std::chrono::steady_clock::now() + limit, reply);
  if (st.ok()) return st;
  if (st.code() == StatusCode::timeout) {
    kill_and_reap();
    return Status(StatusCode::timeout,
                  "did not answer within " + std::to_string(limit.count()) + " ms and was killed");
  }
  // EOF or a broken socket: the worker died; waitpid says how.
  return Status(StatusCode::unavailable, reap_after_eof());
}

std::string WorkerProcess::reap_after_eof() {
  // A crashing process may take a moment to finish dying after its socket closed: wait up to
  // a second for its own exit status before killing it.
  for (int i = 0; i < 500 && pid_ > 0; ++i) {
    int ws = 0;
    if (::waitpid(pid_, &ws, WNOHANG) == pid_) {
      ended_ = describe_wait(ws);
      pid_ = -1;
      close_fd(sock_);
      return ended_;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return kill_and_reap();
}

std::string WorkerProcess::last_stderr_line() const {
  if (err_fd_ < 0) return {};
  const off_t end = ::lseek(err_fd_, 0, SEEK_END);
  if (end <= 0) return {};
  const off_t from = end > 4096 ? end - 4096 : 0;
  std::string tail(static_cast<std::size_t>(end - from), '\0');
  const ssize_t got = ::pread(err_fd_, tail.data(), tail.size(), from);
  if (got <= 0) return {};
  tail.resize(static_cast<std::size_t>(got));
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) tail.pop_back();
  const auto nl = tail.rfind('\n');
  return nl == std::string::npos ? tail : tail.substr(nl + 1);
}

}  // namespace tune::detail
