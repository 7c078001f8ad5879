// A server that takes TCP connections with TLS only (a self-signed certificate made with
// openssl, pg_server.hpp): sslmode=require works, verify-full works with the certificate's CA
// and fails, with one warning naming the server and the CA file and no password, with another.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "../cache/cache_test_util.hpp"
#include "log_capture.hpp"
#include "pg_server.hpp"
#include "temp_dir.hpp"
#include "tune/postgres_store.hpp"
#include "tune/sqlite_store.hpp"

namespace tune {
namespace {

using testing::LogCapture;
using testing::PgServer;
using testing::TempDir;

PostgresOptions options(const std::string& url) {
  PostgresOptions o;
  o.conninfo = url;
  o.connect_timeout = std::chrono::milliseconds(5000);
  o.retry_after = std::chrono::milliseconds(0);
  return o;
}

TEST_CASE("a server with TLS: sslmode=require and verify-full work, a wrong CA is named") {
  PgServer server;
  const std::string ca = server.enable_tls();
  server.sql("CREATE DATABASE tls");
  const std::string base =
      "postgresql://tune:s3cret-pw@127.0.0.1:" + std::to_string(server.port()) + "/tls";
  const StoreKey key = cache_test::test_key("n=1");

  // sslmode=require: encrypted, no certificate check.
  auto required = PostgresStore::open(options(base + "?sslmode=require"));
  REQUIRE(required->put(key, std::vector{cache_test::ok_row("BM=64", 10)}).ok());
  CHECK(required->fetch(key)->size() == 1);
  // Without TLS the server refuses (so the row above went through TLS).
  auto plain = PostgresStore::open(options(base + "?sslmode=disable"));
  auto refused = plain->fetch(key);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message().find("no encryption") != std::string::npos);
  // verify-full with the CA that signed the server's certificate.
  auto verified = PostgresStore::open(options(base + "?sslmode=verify-full&sslrootcert=" + ca));
  CHECK(verified->fetch(key)->size() == 1);

  // verify-full with a CA that did not: refused, one warning, the CA file named.
  const std::string wrong = server.unrelated_ca();
  TempDir dir;
  LogCapture log;
  auto shared = SharedStore::open(
      SqliteStore::open((dir.path / "tune.db").string()),
      PostgresStore::open(options(base + "?sslmode=verify-full&sslrootcert=" + wrong)));
  CHECK(shared->load(key).empty());
  auto direct = shared->remote()->fetch(key);
  REQUIRE_FALSE(direct.ok());
  const std::string message = direct.status().message();
  CAPTURE(message);
  CHECK(direct.status().code() == StatusCode::unavailable);
  CHECK(message.find("postgresql://tune@127.0.0.1:" + std::to_string(server.port()) + "/tls") == 0);
  CHECK(message.find("certificate verify failed") != std::string::npos);
  CHECK(message.find("sslrootcert " + wrong) != std::string::npos);
  CHECK(message.find("s3cret") == std::string::npos);
  CHECK(log.count(LogLevel::warning, "") == 1);
  CHECK(log.count(LogLevel::warning, "certificate verify failed") == 1);
  CHECK(log.all().find("s3cret") == std::string::npos);
}

}  // namespace
}  // namespace tune
