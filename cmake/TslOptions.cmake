# Build options shared by every TSL target: warnings, sanitizers, CPU tuning.
option(TSL_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(TSL_TSAN "Build with ThreadSanitizer" OFF)
option(TSL_NATIVE "Tune for the build machine's CPU (-march=native)" ON)
option(TSL_MPI "Run as many ranks over MPI when CMake finds it (docs/distributed.md)" ON)
option(TSL_KERNEL "Build the Jupyter kernel when CMake finds xeus (docs/notebook.md)" ON)

set(TSL_WARNINGS -Wall -Wextra -Wno-unused-parameter)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # GCC 12 reports std::string concatenation falsely (GCC bug 105329).
  list(APPEND TSL_WARNINGS -Wno-restrict)
elseif(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  # libstdc++ 12's std::stable_sort calls its own deprecated get_temporary_buffer.
  list(APPEND TSL_WARNINGS -Wno-deprecated-declarations)
endif()

# The sanitizer build (the asan preset uses clang-19) also instruments everything for
# libFuzzer's coverage, so the fuzz targets in tools/fuzz can be built there.
set(TSL_FUZZ OFF)
if(TSL_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -O1)
  add_link_options(-fsanitize=address,undefined)
  add_compile_definitions(TSL_SANITIZE=1)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    add_compile_options(-fsanitize=fuzzer-no-link)
    set(TSL_FUZZ ON)
  endif()
elseif(TSL_TSAN)
  # TSL_SANITIZE=1: frames are larger, so the stack guard keeps a wider margin.
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer -O1)
  add_link_options(-fsanitize=thread)
  add_compile_definitions(TSL_SANITIZE=1)
elseif(TSL_NATIVE)
  add_compile_options(-march=native)
endif()

# tsl_library(NAME SOURCES... [DEPS ...] [SYSTEM_DEPS ...])
# One library per folder. The repository root and include/ are the include roots,
# so headers are named by their folder: #include "runtime/Tensor.h".
function(tsl_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include)
  target_compile_options(${name} PRIVATE ${TSL_WARNINGS})
  if(ARG_DEPS)
    target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  endif()
endfunction()
