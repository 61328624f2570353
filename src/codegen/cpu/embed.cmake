# Texts that generated kernels paste instead of including (vmath.h): each becomes a C++ file
# in the build tree defining `std::string_view orchid::codegen::cpu::NAME()` that returns the
# file's text, regenerated whenever the file changes.
#
# This file is both the module that src/codegen/cpu/CMakeLists.txt includes and, run with
# `cmake -P`, the script that writes one such C++ file (its variables: INPUT, OUTPUT, NAME,
# SOURCE_LABEL).

if(CMAKE_SCRIPT_MODE_FILE)
  cmake_minimum_required(VERSION 3.25)  # the project's policies, in script mode too
  # A raw string literal's delimiter must not occur in the text: try orchid_0, orchid_1, ...
  file(READ "${INPUT}" text)
  set(index 0)
  set(delimiter "orchid_0")
  string(FIND "${text}" ")${delimiter}\"" found)
  while(NOT found EQUAL -1)
    math(EXPR index "${index} + 1")
    set(delimiter "orchid_${index}")
    string(FIND "${text}" ")${delimiter}\"" found)
  endwhile()
  string(CONFIGURE [=[
// Generated from @SOURCE_LABEL@ by src/codegen/cpu/embed.cmake: do not edit.
#include "codegen/cpu/vmath.h"

namespace orchid::codegen::cpu {

std::string_view @NAME@() {
  static constexpr char text[] = R"@delimiter@(@text@)@delimiter@";
  return {text, sizeof text - 1};
}

}  // namespace orchid::codegen::cpu
]=] source @ONLY)
  file(WRITE "${OUTPUT}" "${source}")
  return()
endif()

# Adds to `target` a generated source defining `name()` as the text of `input`.
function(orchid_embed_text target name input)
  set(output "${CMAKE_CURRENT_BINARY_DIR}/${name}.cpp")
  file(RELATIVE_PATH label "${CMAKE_SOURCE_DIR}" "${input}")  # no absolute path in the build
  add_custom_command(
    OUTPUT "${output}"
    COMMAND "${CMAKE_COMMAND}" "-DINPUT=${input}" "-DOUTPUT=${output}" "-DNAME=${name}"
            "-DSOURCE_LABEL=${label}" -P "${CMAKE_CURRENT_FUNCTION_LIST_FILE}"
    DEPENDS "${input}" "${CMAKE_CURRENT_FUNCTION_LIST_FILE}"
    COMMENT "Embedding ${label} as ${name}()"
    VERBATIM)
  target_sources(${target} PRIVATE "${output}")
endfunction()

orchid_embed_text(orchid_codegen_cpu vmath_source ${CMAKE_CURRENT_LIST_DIR}/vmath.inc)
orchid_embed_text(orchid_codegen_cpu gemm_source ${CMAKE_CURRENT_LIST_DIR}/gemm.inc)
orchid_embed_text(orchid_codegen_cpu kernel_abi_source
                  ${CMAKE_SOURCE_DIR}/include/orchid/kernel_abi.h)
