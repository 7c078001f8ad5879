// Python 3 helpers of the tool tests, run as child processes in the TuneCli's environment:
// a JSON-schema validator (the python3-jsonschema package; scripts/install-deps.sh installs
// it, for the tests only) and a pseudo-terminal (python3's pty module) to run `tune` as if
// stderr were a terminal.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "program_paths.hpp"
#include "skip.hpp"
#include "tune_process.hpp"

namespace tune::testing {

// Exit code of the validator script when jsonschema cannot be imported.
inline constexpr int kNoJsonschema = 3;

inline const char* const kValidateScript = R"PY(
import json, sys
try:
    import jsonschema
except ImportError as e:
    print("python3 cannot import jsonschema: %s" % e)
    sys.exit(3)
with open(sys.argv[1]) as f:
    doc = json.load(f)
with open(sys.argv[2]) as f:
    schema = json.load(f)
cls = jsonschema.validators.validator_for(schema)
cls.check_schema(schema)
errors = sorted(cls(schema).iter_errors(doc), key=lambda e: list(e.path))
for e in errors:
    print("%s: %s" % ("/".join(str(p) for p in e.path), e.message))
sys.exit(1 if errors else 0)
)PY";

// Checks `doc` against the JSON schema `schema`; skips (fails in CI) when python3 or its
// jsonschema module is missing.
inline void check_schema(const TuneCli& cli, const std::string& doc, const std::string& schema) {
  const ProcessResult r =
      cli.run_program("/usr/bin/env", {"python3", "-c", kValidateScript, doc, schema});
  if (r.exit_code == kNoJsonschema || r.exit_code == 127) {
    const std::string why =
        "no python3 with jsonschema (install python3-jsonschema): " + r.out + r.err;
    if (in_ci()) FAIL(why);
    TUNE_SKIP(why);
  }
  CHECK_MESSAGE(r.exit_code == 0, doc << " does not follow " << schema << "\n" << r.describe());
}

// Runs `exe args...` with stdin, stdout and stderr on a pseudo-terminal 300 columns wide;
// everything the program wrote comes back as stdout.
inline const char* const kPtyScript = R"PY(
import fcntl, os, pty, struct, sys, termios
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 300, 0, 0))
out = b""
while True:
    try:
        data = os.read(fd, 65536)
    except OSError:
        break
    if not data:
        break
    out += data
_, status = os.waitpid(pid, 0)
sys.stdout.buffer.write(out)
sys.exit(os.waitstatus_to_exitcode(status))
)PY";

inline ProcessResult run_in_pty(const TuneCli& cli, const std::vector<std::string>& args) {
  std::vector<std::string> a = {"python3", "-c", kPtyScript, tune_test_programs::tune_exe};
  a.insert(a.end(), args.begin(), args.end());
  return cli.run_program("/usr/bin/env", a);
}

}  // namespace tune::testing
