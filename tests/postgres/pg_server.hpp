// A real PostgreSQL server for one test: initdb in a temporary directory, started with pg_ctl
// on a free TCP port of 127.0.0.1 (its unix socket in the same directory), stopped (immediate
// mode) and removed when the object goes, a failing test included. The test is skipped (exit
// 77, the reason printed) when the server programs are absent.
//
// The programs: $TUNE_PG_BINDIR, else the newest /usr/lib/postgresql/<version>/bin (Debian's
// postgresql package); in CI (CI=true) their absence is a failure, not a skip. initdb refuses root,
// so as root the server runs as `nobody` (runuser), its directory handed to that user. A server
// left behind by a test process that died without its destructors is stopped by the next PgServer.
// Authentication is trust on 127.0.0.1 and the socket; the superuser is "tune".
#pragma once

#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "skip.hpp"

namespace tune::testing {

class PgServer {
 public:
  PgServer() : bindir_(find_bindir()) {
    if (bindir_.empty()) {
      const std::string why =
          "no PostgreSQL server programs (install Debian's postgresql package or set "
          "TUNE_PG_BINDIR)";
      if (in_ci()) throw std::runtime_error(why + ": CI installs them (scripts/install-deps.sh)");
      skip_test(why);
    }
    stop_orphans();
    static int counter = 0;
    dir_ = std::filesystem::temp_directory_path() /
           ("libtune-pg-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    as_user_ = run_as();
    if (::geteuid() == 0) {
      const passwd* pw = ::getpwnam("nobody");
      if (pw == nullptr || ::chown(dir_.c_str(), pw->pw_uid, pw->pw_gid) != 0)
        throw std::runtime_error("cannot hand " + dir_.string() + " to user nobody");
    }
    port_ = free_port();
    run(as_user_ + bindir_ + "/initdb -A trust -U tune -E UTF8 --no-sync -D " + data() + " > " +
        (dir_ / "initdb.log").string() + " 2>&1");
    start();
  }
  ~PgServer() {
    stop();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  PgServer(const PgServer&) = delete;
  PgServer& operator=(const PgServer&) = delete;

  void start() {
    run(as_user_ + bindir_ + "/pg_ctl -w -s -D " + data() + " -l " +
        (dir_ / "server.log").string() + " -o \"-p " + std::to_string(port_) + " -k " +
        dir_.string() + " -c listen_addresses=127.0.0.1 -c fsync=off\" start");
    running_ = true;
  }
  // Immediate mode: the postmaster and its backends are killed, as a crash would.
  void stop() {
    if (!running_) return;
    running_ = false;
    run(as_user_ + bindir_ + "/pg_ctl -s -D " + data() + " -m immediate stop");
  }

  // Restarts the server with TLS only on TCP (ssl = on; pg_hba.conf accepts TCP connections
  // with TLS only, the Unix socket as before): a self-signed certificate for 127.0.0.1, made
  // with openssl. Returns its path (the CA that verifies it). Skips without openssl.
  std::string enable_tls() {
    if (std::system("openssl version > /dev/null 2>&1") != 0) skip_test("no openssl program");
    run(as_user_ + "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 " +
        "-addext subjectAltName=IP:127.0.0.1 -keyout " + data() + "/server.key -out " + data() +
        "/server.crt > " + (dir_ / "openssl.log").string() + " 2>&1");
    run(as_user_ + "chmod 600 " + data() + "/server.key");
    std::ofstream(data() + "/postgresql.conf", std::ios::app)
        << "ssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n";
    std::ofstream(data() + "/pg_hba.conf") << "local all all trust\n"
                                              "hostssl all all 127.0.0.1/32 trust\n";
    stop();
    start();
    return data() + "/server.crt";
  }
  // Another self-signed certificate, of a CA that signed nothing the server holds.
  std::string unrelated_ca() const {
    const std::string crt = (dir_ / "unrelated-ca.crt").string();
    run("openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=unrelated-ca -keyout " +
        (dir_ / "unrelated-ca.key").string() + " -out " + crt + " > " +
        (dir_ / "openssl.log").string() + " 2>&1");
    return crt;
  }

  int port() const { return port_; }
  // A connection string for `db` over TCP (extra: "&key=value..." appended as parameters).
  std::string url(const std::string& db = "postgres", const std::string& user = "tune") const {
    return "postgresql://" + user + "@127.0.0.1:" + std::to_string(port_) + "/" + db;
  }
  // Runs `sql` as the superuser on `db` (libpq); throws with the server's message on failure.
  void sql(const std::string& statement, const std::string& db = "postgres") const {
    PGconn* c = PQconnectdb(url(db).c_str());
    PGresult* r = PQstatus(c) == CONNECTION_OK ? PQexec(c, statement.c_str()) : nullptr;
    const bool ok = r != nullptr &&
                    (PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK);
    std::string value = ok && PQntuples(r) > 0 ? PQgetvalue(r, 0, 0) : "";
    std::string err = PQerrorMessage(c);
    PQclear(r);
    PQfinish(c);
    if (!ok) throw std::runtime_error("SQL '" + statement + "' failed: " + err);
    last_ = value;
  }
  // The first value of `query`'s answer.
  std::string scalar(const std::string& query, const std::string& db = "postgres") const {
    sql(query, db);
    return last_;
  }
  // A fresh database for one test case.
  std::string new_database(const std::string& name) const {
    sql("CREATE DATABASE " + name);
    return url(name);
  }

 private:
  // Servers left by a test process that ended without its destructors (a watchdog's exit, a
  // crash): their directory names a process that is gone. Stopped and removed here.
  void stop_orphans() const {
    std::error_code ec;
    for (const auto& e :
         std::filesystem::directory_iterator(std::filesystem::temp_directory_path(), ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("libtune-pg-", 0) != 0) continue;
      const long pid = std::strtol(name.c_str() + 11, nullptr, 10);
      if (pid <= 0 || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
      if (std::filesystem::exists(e.path() / "data" / "postmaster.pid"))
        (void)std::system((run_as() + bindir_ + "/pg_ctl -s -D " + (e.path() / "data").string() +
                           " -m immediate stop >/dev/null 2>&1")
                              .c_str());
      std::filesystem::remove_all(e.path(), ec);
    }
  }
  static std::string run_as() { return ::geteuid() == 0 ? "runuser -u nobody -- " : ""; }
  static std::string find_bindir() {
    if (const char* d = std::getenv("TUNE_PG_BINDIR"); d != nullptr && *d != '\0')
      return std::filesystem::exists(std::string(d) + "/initdb") ? d : "";
    std::string best;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
      const std::string bin = (e.path() / "bin").string();
      if (std::filesystem::exists(bin + "/initdb") && bin > best) best = bin;
    }
    return best;
  }
  static int free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      throw std::runtime_error("no free port");
    ::close(fd);
    return ntohs(a.sin_port);
  }
  void run(const std::string& command) const {
    if (std::system(command.c_str()) != 0) {
      std::string log;
      for (const char* f : {"initdb.log", "server.log", "openssl.log"}) {
        std::ifstream in(dir_ / f);
        log += std::string(std::istreambuf_iterator<char>(in), {});
      }
      throw std::runtime_error("'" + command + "' failed:\n" + log);
    }
  }
  std::string data() const { return (dir_ / "data").string(); }

  std::string bindir_;
  std::filesystem::path dir_;
  std::string as_user_;
  int port_ = 0;
  bool running_ = false;
  mutable std::string last_;
};

}  // namespace tune::testing
