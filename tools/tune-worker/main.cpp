// tune-worker: the isolated tuning worker (AutotunerOptions::isolation). Started by libtune
// with posix_spawn, never by hand:
//   tune-worker --fd N [--parent PID] [--device SPEC]
// closes every inherited descriptor but N, watches PID (its parent: it exits when reparented),
// opens SPEC with tune::open_device (the registry; empty: TUNE_DEVICE, else the first backend
// that opens) and serves tune::Device calls on the socket N until the parent closes it. Exit
// codes: 0 EOF, 1 device or socket failure, 2 malformed request, 3 a sticky device error
// (its context is poisoned; the parent starts a new worker), 4 the parent died, 64 bad
// command line.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "isolation/worker_server.hpp"
#include "tune/registry.hpp"

int main(int argc, char** argv) {
  int fd = -1;
  pid_t parent = 0;
  std::string spec;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    if (flag == "--fd")
      fd = std::atoi(argv[i + 1]);
    else if (flag == "--parent")
      parent = static_cast<pid_t>(std::atol(argv[i + 1]));
    else if (flag == "--device")
      spec = argv[i + 1];
  }
  if (fd < 0) {
    std::fprintf(stderr,
                 "usage: tune-worker --fd N [--parent PID] [--device SPEC] (started by libtune)\n");
    return 64;
  }
  tune::detail::begin_worker(fd, parent);
  auto dev = tune::open_device(spec);
  if (!dev.ok()) {
    std::fprintf(stderr, "tune-worker: %s\n", dev.status().to_string().c_str());
    return tune::detail::refuse_worker(fd, dev.status());
  }
  return tune::detail::serve_worker(**dev, fd);
}
