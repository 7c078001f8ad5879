# What a consumer of the installed package needs for the mpi component (installed as
# libtune-mpi-deps.cmake, included by libtuneConfig.cmake before the component's targets):
# MPI for C++ (MPI::MPI_CXX), which needs no C language in the consumer's project.
find_dependency(MPI COMPONENTS CXX)
