# What a consumer of the installed package needs for the mpi component (installed as
# libtune-mpi-deps.cmake, included by libtuneConfig.cmake before the component's targets).
find_dependency(MPI COMPONENTS C)
