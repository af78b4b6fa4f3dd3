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

# tsl_embed_binary(OUT_CPP INPUT NAMESPACE SYMBOL): a C++ source holding the bytes of a
# file produced at build time (the :cpu kernel bitcode, the ahead-of-time runtime archive).
function(tsl_embed_binary out_cpp input namespace symbol)
  add_custom_command(
    OUTPUT ${out_cpp}
    COMMAND ${CMAKE_COMMAND} -DIN=${input} -DOUT=${out_cpp} -DNAMESPACE=${namespace} -DSYMBOL=${symbol}
            -P ${PROJECT_SOURCE_DIR}/cmake/EmbedBinaryScript.cmake
    DEPENDS ${input} ${PROJECT_SOURCE_DIR}/cmake/EmbedBinaryScript.cmake
    COMMENT "Embedding ${input}"
    VERBATIM)
endfunction()
