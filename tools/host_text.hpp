// The host's operating system for reports and exported metadata: "Linux 6.1.0 x86_64" (uname),
// "unknown" when uname fails. Safe from any thread.
#pragma once

#include <string>

namespace tune::cli {

std::string host_os_text();

}  // namespace tune::cli
