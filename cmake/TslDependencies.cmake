# Third-party dependencies, all from Debian packages (tools/dev installs them).
find_package(Threads REQUIRED)
find_package(Eigen3 3.4 REQUIRED NO_MODULE)
find_package(ZLIB REQUIRED)
# libzip reads and writes the zip archives of .npz files (runtime/Npz.cpp): maintained,
# in Debian, it reads stored, deflated and zip64 members and checks sizes and CRCs, and
# it builds archives in memory, so TSL's atomic file writer still writes the file.
# (minizip, the other Debian choice, is zlib's unmaintained contrib code.) Found with
# pkg-config: Debian's libzip CMake config names the zipcmp tools of another package.
find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBZIP REQUIRED IMPORTED_TARGET libzip)
find_package(doctest REQUIRED)

# ANTLR4: the tool (4.7.2, a Java program) generates C++ at build time; the runtime
# library (4.9) accepts that code. No CMake config ships for the tool, so we call it.
find_program(ANTLR4_TOOL antlr4 REQUIRED)
find_path(ANTLR4_INCLUDE_DIR antlr4-runtime.h PATH_SUFFIXES antlr4-runtime REQUIRED)
find_library(ANTLR4_RUNTIME_LIB NAMES antlr4-runtime REQUIRED)

# libedit for the REPL's line editing and history.
find_path(LIBEDIT_INCLUDE_DIR histedit.h REQUIRED)
find_library(LIBEDIT_LIB NAMES edit REQUIRED)

# LLVM 19 is the :cpu backend's code generator (libLLVM, linked by tsl_compiler), and
# clang 19 compiles the backend's kernel library to LLVM bitcode at build time
# (compiler/CMakeLists.txt): the bitcode must be of the same LLVM version.
# tsl links LLVM's static components (compiler/CMakeLists.txt); LLVMSupport's link
# interface names zstd's imported target, which LLVM's own find module makes.
list(APPEND CMAKE_MODULE_PATH /usr/lib/llvm-19/lib/cmake/llvm)
find_package(zstd REQUIRED)
find_package(LLVM 19.1 REQUIRED CONFIG PATHS /usr/lib/llvm-19/lib/cmake/llvm NO_DEFAULT_PATH)
message(STATUS "LLVM ${LLVM_PACKAGE_VERSION} at ${LLVM_DIR}")
find_program(TSL_CLANG19 NAMES clang++-19 clang++ PATHS ${LLVM_TOOLS_BINARY_DIR} NO_DEFAULT_PATH REQUIRED)

# MPI (Debian's Open MPI, libopenmpi-dev) carries the collectives between ranks
# (runtime/TransportMpi.cpp); optional: without it (or with -DTSL_MPI=OFF) TSL builds and
# every program runs as a world of one rank. mpirun (openmpi-bin) launches ranks and runs
# the distributed tests.
set(TSL_HAVE_MPI OFF)
if(TSL_MPI)
  find_package(MPI COMPONENTS C)
  if(MPI_C_FOUND)
    set(TSL_HAVE_MPI ON)
  endif()
endif()
find_program(TSL_MPIRUN NAMES mpirun)
message(STATUS "MPI: ${TSL_HAVE_MPI}")

# xeus (Debian's xeus-dev 2.4, with its ZeroMQ server) speaks the Jupyter protocol for
# `tsl-kernel` (kernel/, docs/notebook.md); optional like MPI: without it (or with
# -DTSL_KERNEL=OFF) everything else builds and the notebook tests are not defined.
set(TSL_HAVE_XEUS OFF)
if(TSL_KERNEL)
  find_package(xeus 2.4 QUIET)
  if(xeus_FOUND)
    set(TSL_HAVE_XEUS ON)
  endif()
endif()
message(STATUS "Jupyter kernel (xeus): ${TSL_HAVE_XEUS}")

# Python with NumPy is a test and benchmark peer only (Debian's interpreter, not a user's).
find_program(TSL_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
