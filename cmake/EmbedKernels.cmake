# Embeds OpenCL sources into the library as {name, source, hash} records (OpenCV's cl2cpp idea):
# nothing is read from disk at run time. The generated file is rebuilt when any kernel changes.
set(TANDEM_EMBED_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/embed_kernels_script.cmake)

function(tandem_embed_kernels output)
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${output} "-DINPUTS=${ARGN}" -P ${TANDEM_EMBED_SCRIPT}
    DEPENDS ${ARGN} ${TANDEM_EMBED_SCRIPT}
    COMMENT "Embedding OpenCL kernels"
    VERBATIM)
endfunction()
