// See host_text.hpp.
#include "host_text.hpp"

#include <sys/utsname.h>

namespace tune::cli {

std::string host_os_text() {
  utsname u{};
  if (::uname(&u) != 0) return "unknown";
  return std::string(u.sysname) + " " + u.release + " " + u.machine;
}

}  // namespace tune::cli
