// Stand-ins for servers that do not answer (the deadline tests), on free ports of 127.0.0.1:
// a listener that never accepts, and a port that drops every connection. Closed when the
// object goes.
#pragma once

#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace tune::testing {

class LoopbackListener {
 public:
  // `backlog`: connections the kernel completes before it drops new SYNs.
  explicit LoopbackListener(int backlog) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    addr_.sin_family = AF_INET;
    addr_.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr_;
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr_), sizeof addr_) == 0);
    REQUIRE(::listen(fd_, backlog) == 0);
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr_), &len) == 0);
  }
  ~LoopbackListener() { ::close(fd_); }
  LoopbackListener(const LoopbackListener&) = delete;
  LoopbackListener& operator=(const LoopbackListener&) = delete;

  int port() const { return ntohs(addr_.sin_port); }
  const sockaddr_in& address() const { return addr_; }

 private:
  int fd_ = -1;
  sockaddr_in addr_{};
};

// A port of 127.0.0.1 that drops every new SYN: a listener with a backlog of one, filled by a
// connection it never accepts (Linux drops a SYN while the accept queue is full, and the
// client retries for minutes), as an unreachable or firewalled address does.
class DroppingPort {
 public:
  DroppingPort() : listener_(0) {
    filler_ = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(::connect(filler_, reinterpret_cast<const sockaddr*>(&listener_.address()),
                      sizeof(sockaddr_in)) == 0);
  }
  ~DroppingPort() { ::close(filler_); }
  DroppingPort(const DroppingPort&) = delete;
  DroppingPort& operator=(const DroppingPort&) = delete;
  int port() const { return listener_.port(); }

 private:
  LoopbackListener listener_;
  int filler_ = -1;
};

}  // namespace tune::testing
