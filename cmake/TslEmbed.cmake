# tsl_embed_files(OUT_CPP NAMESPACE FILES...): turn text files into a C++ source holding
# them as byte arrays, regenerated whenever a file changes. Used to put stdlib/*.tsl
# inside the binary.
function(tsl_embed_files out_cpp)
  cmake_parse_arguments(ARG "" "ROOT" "FILES" ${ARGN})
  add_custom_command(
    OUTPUT ${out_cpp}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out_cpp} -DROOT=${ARG_ROOT} "-DFILES=${ARG_FILES}"
            -P ${PROJECT_SOURCE_DIR}/cmake/EmbedFilesScript.cmake
    DEPENDS ${ARG_FILES} ${PROJECT_SOURCE_DIR}/cmake/EmbedFilesScript.cmake
    COMMENT "Embedding ${out_cpp}"
    VERBATIM)
endfunction()
