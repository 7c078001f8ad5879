// The programs tests start, by path: the tune program (or studies' tune-lab), the isolation
// worker, and the tests' own child processes. Each test binary defines the ones it starts in a
// generated source (tune_test_programs() in tests/CMakeLists.txt); using one the binary's
// CMakeLists did not name fails at link time, naming the variable.
#pragma once

namespace tune_test_programs {

extern const char* const tune_exe;         // tools/tune, or studies' tune-lab for its tests
extern const char* const tune_worker;      // tools/tune-worker (AutotunerOptions::isolation)
extern const char* const cache_worker;     // tests/cache: a process writing one cache
extern const char* const sim_worker;       // tests/core: the worker on the simulated device
extern const char* const teardown_child;   // tests/core: a process exiting while compiles run
extern const char* const tuning_worker;    // tests/flows: one tuning process of a flow
extern const char* const pg_tune_child;    // tests/postgres: a tuning process on a server
extern const char* const pg_lookup_child;  // tests/postgres: a lookup process on a server

}  // namespace tune_test_programs
