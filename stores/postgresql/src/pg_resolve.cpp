// Host names resolved within the connect deadline. See pg_resolve.hpp.
#include "pg_resolve.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace tune::pg {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> split_commas(const std::string& list) {
  std::vector<std::string> out;
  std::size_t begin = 0;
  for (std::size_t end; (end = list.find(',', begin)) != std::string::npos; begin = end + 1)
    out.push_back(list.substr(begin, end - begin));
  out.push_back(list.substr(begin));
  return out;
}

std::string join_commas(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i == 0 ? "" : ",") + items[i];
  return out;
}

bool is_numeric_address(const std::string& host) {
  unsigned char buf[sizeof(in6_addr)];
  return ::inet_pton(AF_INET, host.c_str(), buf) == 1 ||
         ::inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

// An entry libpq does not look up: empty (its default), a Unix socket directory ("/..."), an
// abstract socket ("@...").
bool is_socket(const std::string& host) {
  return host.empty() || host.front() == '/' || host.front() == '@';
}

// One lookup, shared with the thread that makes it: the thread may outlive the caller.
struct Lookup {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  int rc = 0;
  std::vector<std::string> addresses;  // numeric, in the resolver's order, no duplicates
};

std::shared_ptr<Lookup> start_lookup(const std::string& name) {
  auto lookup = std::make_shared<Lookup>();
  std::thread([lookup, name] {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const int rc = ::getaddrinfo(name.c_str(), nullptr, &hints, &found);
    std::vector<std::string> addresses;
    for (addrinfo* a = found; rc == 0 && a != nullptr; a = a->ai_next) {
      char text[NI_MAXHOST] = {};
      if (::getnameinfo(a->ai_addr, a->ai_addrlen, text, sizeof text, nullptr, 0, NI_NUMERICHOST) !=
          0)
        continue;
      if (std::find(addresses.begin(), addresses.end(), text) == addresses.end())
        addresses.emplace_back(text);
    }
    if (found != nullptr) ::freeaddrinfo(found);
    std::lock_guard lock(lookup->mu);
    lookup->rc = rc != 0 ? rc : (addresses.empty() ? EAI_NONAME : 0);
    lookup->addresses = std::move(addresses);
    lookup->done = true;
    lookup->cv.notify_all();
  }).detach();
  return lookup;
}

}  // namespace

Result<std::optional<HostAddresses>> resolve_hosts(const std::string& hosts,
                                                   const std::string& ports,
                                                   Clock::time_point deadline) {
  const std::vector<std::string> names = split_commas(hosts);
  const std::vector<std::string> port_list = split_commas(ports);
  // libpq takes one port for every host, or one per host; anything else it refuses itself.
  const bool port_per_host = port_list.size() > 1 && port_list.size() == names.size();
  std::vector<std::shared_ptr<Lookup>> lookups(names.size());
  bool any = false;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (is_socket(names[i]) || is_numeric_address(names[i])) continue;
    lookups[i] = start_lookup(names[i]);
    any = true;
  }
  if (!any) return std::optional<HostAddresses>();
  std::vector<std::string> host_out, addr_out, port_out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    std::vector<std::string> addresses{is_socket(names[i]) ? "" : names[i]};
    if (lookups[i] != nullptr) {
      std::unique_lock lock(lookups[i]->mu);
      if (!lookups[i]->cv.wait_until(lock, deadline, [&] { return lookups[i]->done; }))
        return Status(StatusCode::unavailable,
                      "the host name lookup of '" + names[i] + "' did not finish in time");
      if (lookups[i]->rc != 0)
        return Status(StatusCode::unavailable, "the host name lookup of '" + names[i] +
                                                   "' failed: " + ::gai_strerror(lookups[i]->rc));
      addresses = lookups[i]->addresses;
    }
    for (const std::string& a : addresses) {
      host_out.push_back(names[i]);
      addr_out.push_back(a);
      if (port_per_host) port_out.push_back(port_list[i]);
    }
  }
  return std::optional<HostAddresses>(
      HostAddresses{join_commas(host_out), join_commas(addr_out), join_commas(port_out)});
}

}  // namespace tune::pg
