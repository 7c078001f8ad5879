# What a consumer of the installed package needs for the postgresql component (installed as
# libtune-postgresql-deps.cmake, included by libtuneConfig.cmake before the component's
# targets): libpq, found by CMake's FindPostgreSQL (PostgreSQL::PostgreSQL; Debian's libpq-dev).
find_dependency(PostgreSQL)
