// Host names of a connection string resolved within the connect deadline. libpq resolves a
// host name itself, synchronously, before its connect_timeout starts: a resolver that never
// answers would block the call for as long as the system's resolver retries (minutes). Here
// every name is looked up on a thread of its own and waited for until the deadline; libpq is
// then given the addresses (hostaddr), so it looks nothing up, and keeps the names (host) for
// TLS verification, ~/.pgpass and its messages.
//
// Thread safety: resolve_hosts may be called from any thread. A lookup still running at the
// deadline is abandoned: its thread ends when the resolver returns, holding nothing of the
// caller's.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "tune/status.hpp"

namespace tune::pg {

// libpq keywords that replace the connection's own: comma lists of equal length, one entry
// per address (a name with two addresses is given twice, so libpq still tries both). `port`
// is empty when the connection's single port (or libpq's default) applies to every entry.
struct HostAddresses {
  std::string host, hostaddr, port;
};

// `hosts` and `ports`: the connection's host and port keywords (comma lists, as libpq takes
// them; the caller applies PGHOST/PGPORT when the string has none). nullopt when there is
// nothing to look up (hostaddr given, Unix sockets, numeric addresses only). unavailable when
// a lookup fails (naming the host and the resolver's reason) or does not finish by `deadline`
// (naming the host).
Result<std::optional<HostAddresses>> resolve_hosts(const std::string& hosts,
                                                   const std::string& ports,
                                                   std::chrono::steady_clock::time_point deadline);

}  // namespace tune::pg
