# What `cmake --install` puts under the prefix, and `cpack -G DEB` packages: the public
# headers (include/tsl/), libtsl (shared and static: every library of the engine in one),
# the `tsl` command, its man page, the standard library's sources, the docs, and the
# files find_package(tsl CONFIG) and pkg-config read. docs/embedding.md shows their use.
include(GNUInstallDirs)

set(TSL_ENGINE_LIBS tsl_eval tsl_compiler tsl_autodiff tsl_ir tsl_stdlib tsl_parser tsl_runtime)

# libtsl.so: the engine's libraries whole, LLVM's static components as the engine needs
# them (a host never needs LLVM), ANTLR's runtime, zlib and zstd as shared dependencies.
file(WRITE ${CMAKE_BINARY_DIR}/tsl_library.cpp "// libtsl: the engine's libraries, whole.\n")
add_library(tsl_shared SHARED ${CMAKE_BINARY_DIR}/tsl_library.cpp)
set_target_properties(tsl_shared PROPERTIES OUTPUT_NAME tsl VERSION ${PROJECT_VERSION}
                      SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
set(_tsl_whole -Wl,--whole-archive)
foreach(lib ${TSL_ENGINE_LIBS})
  list(APPEND _tsl_whole $<TARGET_FILE:${lib}>)
endforeach()
list(APPEND _tsl_whole -Wl,--no-whole-archive)
# The archives whole, then the libraries again as targets: their own dependencies (LLVM's
# components, ANTLR, zlib, zstd) follow, and nothing is linked twice.
target_link_libraries(tsl_shared PRIVATE ${_tsl_whole} ${TSL_ENGINE_LIBS})
add_dependencies(tsl_shared ${TSL_ENGINE_LIBS})
target_link_options(tsl_shared PRIVATE -Wl,--version-script=${PROJECT_SOURCE_DIR}/cmake/libtsl.map)
set_target_properties(tsl_shared PROPERTIES LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/libtsl.map)

# libtsl.a: the engine's archives merged (a static host links LLVM itself: tsl.pc and
# tslConfig.cmake name it).
set(TSL_STATIC ${CMAKE_BINARY_DIR}/libtsl.a)
set(TSL_MRI "CREATE ${TSL_STATIC}\n")
foreach(lib ${TSL_ENGINE_LIBS})
  string(APPEND TSL_MRI "ADDLIB $<TARGET_FILE:${lib}>\n")
endforeach()
string(APPEND TSL_MRI "SAVE\nEND\n")
file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/libtsl.mri CONTENT "${TSL_MRI}")
add_custom_command(OUTPUT ${TSL_STATIC}
                   COMMAND ${CMAKE_COMMAND} -E rm -f ${TSL_STATIC}
                   COMMAND ${CMAKE_AR} -M < ${CMAKE_BINARY_DIR}/libtsl.mri
                   DEPENDS ${TSL_ENGINE_LIBS} COMMENT "Merging the engine's archives into libtsl.a")
add_custom_target(tsl_static ALL DEPENDS ${TSL_STATIC})

install(TARGETS tsl RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS tsl_shared LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${TSL_STATIC} DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tsl DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/stdlib/ DESTINATION ${CMAKE_INSTALL_DATADIR}/tsl/stdlib
        FILES_MATCHING PATTERN "*.tsl")
install(FILES ${PROJECT_SOURCE_DIR}/docs/tsl.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${PROJECT_SOURCE_DIR}/docs/embedding.md ${PROJECT_SOURCE_DIR}/docs/language.md
              ${PROJECT_SOURCE_DIR}/docs/primitives.md ${PROJECT_SOURCE_DIR}/docs/tensor-core.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/embed DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)

# find_package(tsl CONFIG) and pkg-config. A sanitizer build's library needs its
# sanitizer's runtime in the host: both name the link option.
set(TSL_SANITIZER_LINK "")
if(TSL_SANITIZE)
  set(TSL_SANITIZER_LINK "-fsanitize=address,undefined")
elseif(TSL_TSAN)
  set(TSL_SANITIZER_LINK "-fsanitize=thread")
endif()
# A build with MPI: a static host links Open MPI's library too (libtsl.so names it itself).
set(TSL_MPI_LINK "")
set(TSL_MPI_DEB "")
if(TSL_HAVE_MPI)
  set(TSL_MPI_LINK "${MPI_C_LIBRARIES}")
  set(TSL_MPI_DEB ", libopenmpi3")
endif()
string(REPLACE ";" " " TSL_MPI_PC "${TSL_MPI_LINK}")
# A build with the Jupyter kernel: tsl-kernel links libxeus (and, through it, ZeroMQ).
if(TSL_HAVE_XEUS)
  string(APPEND TSL_MPI_DEB ", libxeus6")
endif()
include(CMakePackageConfigHelpers)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tslConfig.cmake.in ${CMAKE_BINARY_DIR}/tslConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tsl)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/tslConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/tslConfig.cmake ${CMAKE_BINARY_DIR}/tslConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tsl)
# The prefix, relative to the .pc file, so the tree can be installed anywhere.
string(REGEX MATCHALL "[^/]+" _tsl_pc_parts "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
set(TSL_PC_UP "")
foreach(_part ${_tsl_pc_parts})
  string(APPEND TSL_PC_UP "../")
endforeach()
string(REGEX REPLACE "/$" "" TSL_PC_UP "${TSL_PC_UP}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/tsl.pc.in ${CMAKE_BINARY_DIR}/tsl.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/tsl.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# cpack -G DEB: a Debian package of the same tree.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tsl)
set(CPACK_PACKAGE_VENDOR "TSL developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "TSL: a Lisp for tensor programs, its compiler and its embedding library")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "TSL developers <tsl@localhost>")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libantlr4-runtime4.9, libedit2, zlib1g, libzip4, libzstd1, libstdc++6 (>= 12), libc6 (>= 2.36)${TSL_MPI_DEB}")
# Plots are drawn by gnuplot (docs/plots.md): wanted, but TSL runs without it.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "gnuplot-nox")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
include(CPack)
