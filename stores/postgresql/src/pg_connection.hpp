// One libpq connection to the server, with the deadlines PostgresOptions promises: connecting
// takes at most connect_timeout, the host name lookup included (pg_resolve.hpp), a statement at
// most statement_timeout (set for the session; the client gives up one second later when the server
// does not answer at all). After a lost connection or a timeout the connection is dropped and, for
// retry_after, not tried again: calls fail at once with unavailable.
//
// Credentials: the connection string goes to libpq only; every message this class makes names
// the server by where() (user@host:port/database) and is scrubbed of the password.
//
// Thread safety: none; PostgresStore serialises calls. Owns its PGconn.
#pragma once

#include <libpq-fe.h>

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "tune/postgres_store.hpp"
#include "tune/status.hpp"

namespace tune::pg {

// A statement's answer (owns the PGresult). Values are libpq's text format.
class Answer {
 public:
  explicit Answer(PGresult* r) : r_(r, &PQclear) {}
  int rows() const { return PQntuples(r_.get()); }
  bool null(int row, int col) const { return PQgetisnull(r_.get(), row, col) != 0; }
  std::string_view text(int row, int col) const {
    return {PQgetvalue(r_.get(), row, col),
            static_cast<std::size_t>(PQgetlength(r_.get(), row, col))};
  }

 private:
  std::shared_ptr<PGresult> r_;
};

// A statement's parameter in text form; nullopt is SQL NULL.
using Param = std::optional<std::string>;

class Connection {
 public:
  explicit Connection(PostgresOptions opts);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // "postgresql://user@host:port/database": no password, whatever the connection string held.
  const std::string& where() const noexcept { return where_; }
  bool connected() const noexcept { return conn_ != nullptr; }
  // Connects (and sets the session's statement_timeout) unless connected. unavailable naming
  // the server and libpq's reason, or at once while a recent failure is being waited out.
  Status connect();
  // Runs `sql` with `params` ($1, $2, ...): unavailable when the connection is lost or the
  // server is too slow (the connection is then dropped and rests for retry_after);
  // io_error with the server's message and SQLSTATE for any other refusal.
  Result<Answer> exec(const std::string& sql, std::span<const Param> params = {});
  // The SQLSTATE of the last refused statement ("42501": insufficient privilege), else "".
  const std::string& last_sqlstate() const noexcept { return sqlstate_; }
  // Drops the connection and rests it for retry_after (a schema it cannot use, say).
  void rest();

 private:
  Status fail(std::string why);  // drops, rests, returns unavailable naming the server
  Status wait_socket(bool for_write, std::chrono::steady_clock::time_point deadline);
  Result<Answer> collect(std::chrono::steady_clock::time_point deadline);
  std::string scrub(std::string message) const;
  // `message` with the CA file named when libpq says the server's certificate failed its check.
  std::string with_tls_culprit(std::string message) const;

  PostgresOptions opts_;
  std::string where_;
  std::string password_;  // only to scrub it from messages
  std::string parse_error_;
  std::string ca_file_;        // sslrootcert as libpq finds it, for messages
  std::string hosts_, ports_;  // to look up within the deadline; empty: nothing to look up
  PGconn* conn_ = nullptr;
  std::chrono::steady_clock::time_point resting_until_{};
  std::string sqlstate_;
};

}  // namespace tune::pg
