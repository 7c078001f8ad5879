// A machine whose DNS never answers, for the connect-deadline test: run in fresh user, network
// and mount namespaces (the test starts it under `unshare --user --map-root-user --net
// --mount`), it points /etc/resolv.conf at a UDP socket of its own that never replies (the
// system's resolver then retries for 5 x 30 s), and uses a SharedStore whose server is named
// by a host name. Nothing outside the namespaces changes.
//
//   pg_lookup_child <dir>
//
// Writes <dir>/report.txt: "warnings <n> lookup <n> queued <n> local <n> secret <0|1>" and the
// log. Exit status: 0 the store was used (the report says how); 4 the namespace could not be
// set up (the report's first line says why: the test skips).
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "log_capture.hpp"
#include "tune/postgres_store.hpp"
#include "tune/sqlite_store.hpp"

using namespace tune;

namespace {

std::string g_dir;

int refuse(const std::string& why) {
  std::ofstream(g_dir + "/report.txt") << "setup: " << why << ": " << std::strerror(errno) << "\n";
  return 4;
}

// Loopback up (a new network namespace starts with it down).
bool loopback_up() {
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  const bool ok = fd >= 0 && ::ioctl(fd, SIOCGIFFLAGS, &ifr) == 0 &&
                  (ifr.ifr_flags |= IFF_UP, ::ioctl(fd, SIOCSIFFLAGS, &ifr) == 0);
  if (fd >= 0) ::close(fd);
  return ok;
}

// A DNS server that receives every query and answers none: returns its socket.
int silent_dns() {
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(53);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return -1;
  return fd;
}

StoredResult ok_row() {
  StoredResult r;
  r.config = "BM=64";
  r.status = StatusCode::ok;
  r.stats.count = 10;
  r.stats.min = 9;
  r.stats.p20 = 9.5;
  r.stats.median = 10;
  r.stats.p80 = 10.5;
  r.stats.max = 12;
  r.stats.mean = 10;
  r.unix_time = 1'780'000'000;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  g_dir = argv[1];
  if (!loopback_up()) return refuse("bringing the loopback up");
  const std::string resolv = g_dir + "/resolv.conf";
  std::ofstream(resolv) << "nameserver 127.0.0.1\noptions timeout:30 attempts:5\n";
  if (::mount(resolv.c_str(), "/etc/resolv.conf", nullptr, MS_BIND, nullptr) != 0)
    return refuse("bind-mounting a resolv.conf");
  const int dns = silent_dns();
  if (dns < 0) return refuse("binding 127.0.0.1:53");

  testing::LogCapture log;
  PostgresOptions o;
  o.conninfo = "postgresql://tune:s3cret-pw@db.fleet.test:5432/db";
  o.connect_timeout = std::chrono::milliseconds(1000);
  o.retry_after = std::chrono::milliseconds(60000);
  const StoreKey key{"vector_add", 0xfeedfacecafebeefULL, "n=1", "simulated|sim|s1|1.0",
                     "simc 1|libtune 0.1.0"};
  const std::vector<StoredResult> rows{ok_row()};
  std::size_t queued = 0, local = 0;
  {
    auto shared = SharedStore::open(SqliteStore::open(g_dir + "/tune.db"), PostgresStore::open(o));
    (void)shared->load(key);  // a miss: asks the server
    shared->save(key, rows);  // queued
    local = shared->load(key).size();
    queued = shared->queued();
  }
  const std::string all = log.all();
  std::ofstream(g_dir + "/report.txt")
      << "warnings " << log.count(LogLevel::warning, "") << " lookup "
      << log.count(LogLevel::warning, "host name lookup of 'db.fleet.test'") << " queued " << queued
      << " local " << local << " secret " << (all.find("s3cret") != std::string::npos) << "\n"
      << all;
  ::close(dns);
  return 0;
}
