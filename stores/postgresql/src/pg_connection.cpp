// The libpq connection with deadlines. See pg_connection.hpp.
#include "pg_connection.hpp"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <vector>

#include "pg_resolve.hpp"

namespace tune::pg {
namespace {

using Clock = std::chrono::steady_clock;

// libpq's connection keywords from `conninfo`; null when it does not parse.
struct ParsedConninfo {
  std::string user, host, hostaddr, port, dbname, password, connect_timeout, sslrootcert;
};

// libpq's own parse error can quote the string (and so a password): quoted parts are removed.
std::string unquoted(std::string_view message) {
  std::string out;
  bool in_quote = false;
  for (char c : message) {
    if (c == '"') {
      if (!in_quote) out += "\"...\"";
      in_quote = !in_quote;
    } else if (!in_quote && c != '\n') {
      out += c;
    }
  }
  return out;
}

bool parse_conninfo(const std::string& conninfo, ParsedConninfo* out, std::string* error) {
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(conninfo.c_str(), &err);
  if (opts == nullptr) {
    *error = unquoted(err != nullptr ? err : "out of memory");
    PQfreemem(err);
    return false;
  }
  for (PQconninfoOption* o = opts; o->keyword != nullptr; ++o) {
    if (o->val == nullptr) continue;
    const std::string_view k = o->keyword;
    std::string* field = k == "user"              ? &out->user
                         : k == "host"            ? &out->host
                         : k == "hostaddr"        ? &out->hostaddr
                         : k == "port"            ? &out->port
                         : k == "dbname"          ? &out->dbname
                         : k == "password"        ? &out->password
                         : k == "connect_timeout" ? &out->connect_timeout
                         : k == "sslrootcert"     ? &out->sslrootcert
                                                  : nullptr;
    if (field != nullptr) *field = o->val;
  }
  PQconninfoFree(opts);
  return true;
}

std::string describe(const ParsedConninfo& c) {
  std::string s = "postgresql://";
  if (!c.user.empty()) s += c.user + "@";
  s += !c.host.empty() ? c.host : !c.hostaddr.empty() ? c.hostaddr : "localhost";
  if (!c.port.empty()) s += ":" + c.port;
  return s + "/" + c.dbname;
}

std::chrono::milliseconds ms_until(Clock::time_point deadline) {
  return std::max(std::chrono::milliseconds(0),
                  std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
}

}  // namespace

Connection::Connection(PostgresOptions opts) : opts_(std::move(opts)) {
  ParsedConninfo parsed;
  if (parse_conninfo(opts_.conninfo, &parsed, &parse_error_)) {
    where_ = describe(parsed);
    password_ = parsed.password;
    // libpq's order: the string, PGSSLROOTCERT, then its default file.
    const char* env_ca = std::getenv("PGSSLROOTCERT");
    ca_file_ = !parsed.sslrootcert.empty()            ? parsed.sslrootcert
               : env_ca != nullptr && *env_ca != '\0' ? env_ca
                                                      : "~/.postgresql/root.crt";
    // What libpq would look up: the string's hosts, else PGHOST's (libpq's own default is a
    // Unix socket, never looked up). Nothing when an address is given (hostaddr, PGHOSTADDR).
    const char* env_addr = std::getenv("PGHOSTADDR");
    if (parsed.hostaddr.empty() && (env_addr == nullptr || *env_addr == '\0')) {
      const char* env_host = std::getenv("PGHOST");
      const char* env_port = std::getenv("PGPORT");
      hosts_ = !parsed.host.empty() ? parsed.host : env_host != nullptr ? env_host : "";
      ports_ = !parsed.port.empty() ? parsed.port : env_port != nullptr ? env_port : "";
    }
    if (!parsed.connect_timeout.empty()) {
      // The connection string's connect_timeout (seconds) wins.
      const long s = std::strtol(parsed.connect_timeout.c_str(), nullptr, 10);
      if (s > 0) opts_.connect_timeout = std::chrono::seconds(s);
    }
  } else {
    where_ = "postgresql://(a connection string that does not parse)";
  }
}

Connection::~Connection() {
  if (conn_ != nullptr) PQfinish(conn_);
}

std::string Connection::scrub(std::string message) const {
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  std::vector<std::string> secrets{password_};
  if (const char* env = std::getenv("PGPASSWORD"); env != nullptr) secrets.emplace_back(env);
  for (const std::string& secret : secrets) {
    if (secret.empty()) continue;
    for (std::size_t at; (at = message.find(secret)) != std::string::npos;)
      message.replace(at, secret.size(), "***");
  }
  return message;
}

void Connection::rest() {
  if (conn_ != nullptr) PQfinish(conn_);
  conn_ = nullptr;
  resting_until_ = Clock::now() + opts_.retry_after;
}

std::string Connection::with_tls_culprit(std::string message) const {
  // libpq says the check failed, not against what: name the CA file (a path, no secret).
  if (message.find("certificate verify failed") != std::string::npos) {
    while (!message.empty() && (message.back() == '\n' || message.back() == ' '))
      message.pop_back();
    message += " (the server's certificate is not signed by a CA of sslrootcert " + ca_file_ + ")";
  }
  return message;
}

Status Connection::fail(std::string why) {
  rest();
  return Status(StatusCode::unavailable, where_ + ": " + scrub(std::move(why)));
}

Status Connection::wait_socket(bool for_write, Clock::time_point deadline) {
  pollfd p{PQsocket(conn_), static_cast<short>(for_write ? POLLOUT : POLLIN), 0};
  if (p.fd < 0) return Status(StatusCode::unavailable, "no socket");
  for (;;) {
    const auto left = ms_until(deadline);
    if (left.count() == 0) return Status(StatusCode::unavailable, "timeout");
    const int rc = ::poll(&p, 1, static_cast<int>(left.count()));
    if (rc > 0) return {};
    if (rc < 0 && errno != EINTR) return Status(StatusCode::unavailable, "poll failed");
  }
}

Status Connection::connect() {
  if (conn_ != nullptr) return {};
  if (!parse_error_.empty())
    return Status(StatusCode::unavailable, where_ + ": " + scrub(parse_error_));
  if (Clock::now() < resting_until_)
    return Status(StatusCode::unavailable, where_ + ": not asked again yet (it failed less than " +
                                               std::to_string(opts_.retry_after.count()) +
                                               " ms ago)");
  // connect_timeout first, so that the connection string's own (expanded from dbname) wins;
  // libpq counts whole seconds, at least 2: the poll loop below keeps the exact deadline.
  const auto seconds = std::max<long long>(2, (opts_.connect_timeout.count() + 999) / 1000);
  const std::string timeout_text = std::to_string(seconds);
  std::vector<const char*> keys = {"connect_timeout", "application_name", "dbname"};
  std::vector<const char*> values = {timeout_text.c_str(), "libtune", opts_.conninfo.c_str()};
  // The deadline covers the host name lookup: libpq's own is synchronous and outside its
  // connect_timeout. The addresses found come after dbname, so they replace its hosts.
  const auto deadline = Clock::now() + opts_.connect_timeout;
  Result<std::optional<HostAddresses>> resolved =
      hosts_.empty() ? std::optional<HostAddresses>() : resolve_hosts(hosts_, ports_, deadline);
  if (!resolved.ok())
    return fail(resolved.status().message() + " (connect timeout " +
                std::to_string(opts_.connect_timeout.count()) + " ms)");
  if (resolved->has_value()) {
    const HostAddresses& h = **resolved;
    keys.insert(keys.end(), {"host", "hostaddr"});
    values.insert(values.end(), {h.host.c_str(), h.hostaddr.c_str()});
    if (!h.port.empty()) {
      keys.push_back("port");
      values.push_back(h.port.c_str());
    }
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  conn_ = PQconnectStartParams(keys.data(), values.data(), 1);
  if (conn_ == nullptr) return fail("out of memory");
  if (PQstatus(conn_) == CONNECTION_BAD) return fail(PQerrorMessage(conn_));
  for (PostgresPollingStatusType st = PGRES_POLLING_WRITING; st != PGRES_POLLING_OK;) {
    if (st == PGRES_POLLING_FAILED) return fail(with_tls_culprit(PQerrorMessage(conn_)));
    if (!wait_socket(st == PGRES_POLLING_WRITING, deadline).ok())
      return fail("no connection within " + std::to_string(opts_.connect_timeout.count()) +
                  " ms (connect timeout)");
    st = PQconnectPoll(conn_);
  }
  const std::string set =
      "SET statement_timeout = " + std::to_string(opts_.statement_timeout.count());
  Result<Answer> r = exec(set);
  return r.ok() ? Status{} : r.status();
}

Result<Answer> Connection::exec(const std::string& sql, std::span<const Param> params) {
  if (Status s = connect(); !s.ok()) return s;
  sqlstate_.clear();
  std::vector<const char*> values;
  for (const Param& p : params) values.push_back(p ? p->c_str() : nullptr);
  const int sent = params.empty()
                       ? PQsendQuery(conn_, sql.c_str())
                       : PQsendQueryParams(conn_, sql.c_str(), static_cast<int>(values.size()),
                                           nullptr, values.data(), nullptr, nullptr, 0);
  if (sent == 0) return fail(PQerrorMessage(conn_));
  // The server's statement_timeout ends a slow statement; one more second covers a server
  // that does not answer at all (stopped, or the network gone).
  return collect(Clock::now() + opts_.statement_timeout + std::chrono::seconds(1));
}

Result<Answer> Connection::collect(Clock::time_point deadline) {
  std::optional<Answer> answer, error;
  for (;;) {
    while (PQisBusy(conn_) != 0) {
      if (!wait_socket(false, deadline).ok())
        return fail("no answer within " + std::to_string(opts_.statement_timeout.count()) +
                    " ms (statement timeout)");
      if (PQconsumeInput(conn_) == 0) return fail(PQerrorMessage(conn_));
    }
    PGresult* r = PQgetResult(conn_);
    if (r == nullptr) break;
    const ExecStatusType st = PQresultStatus(r);
    Answer a(r);
    if (st == PGRES_FATAL_ERROR || st == PGRES_BAD_RESPONSE || st == PGRES_NONFATAL_ERROR) {
      if (!error) {
        const char* code = PQresultErrorField(r, PG_DIAG_SQLSTATE);
        sqlstate_ = code != nullptr ? code : "";
        error = a;
      }
    } else {
      answer = a;
    }
  }
  if (PQstatus(conn_) == CONNECTION_BAD) return fail(PQerrorMessage(conn_));
  if (!error) return answer ? *answer : Answer(nullptr);
  // 57014: canceled by the statement timeout; the server is too slow now.
  const std::string message = scrub(PQerrorMessage(conn_));
  if (sqlstate_ == "57014") return fail(message);
  return Status(StatusCode::io_error, where_ + ": " + message + " (SQLSTATE " + sqlstate_ + ")");
}

}  // namespace tune::pg
