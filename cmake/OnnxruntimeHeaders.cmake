# onnxruntime's C API headers for the op library: $ONNXRUNTIME_INCLUDE_DIR (a CMake variable or
# the environment's), else found or fetched by cmake/ort_headers.py (sha256-pinned Debian
# package; cached in ~/.cache/surgeon, or in the build folder when that is not writable).
# Sets SURGEON_ORT_INCLUDE_DIR and SURGEON_ORT_API (the headers' ORT_API_VERSION: the library
# loads into onnxruntime 1.<API> and later).
if(NOT Python_EXECUTABLE)
  find_program(Python_EXECUTABLE NAMES python3 python)
endif()
if(DEFINED ONNXRUNTIME_INCLUDE_DIR AND NOT "${ONNXRUNTIME_INCLUDE_DIR}" STREQUAL "")
  set(ENV{ONNXRUNTIME_INCLUDE_DIR} "${ONNXRUNTIME_INCLUDE_DIR}")
endif()
execute_process(
  COMMAND "${Python_EXECUTABLE}" "${CMAKE_CURRENT_LIST_DIR}/ort_headers.py" --fallback "${CMAKE_BINARY_DIR}"
  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err
  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_STRIP_TRAILING_WHITESPACE)
if(NOT _rc EQUAL 0)
  if(_err STREQUAL "")
    set(_err "cmake/ort_headers.py failed (${_rc}); set ONNXRUNTIME_INCLUDE_DIR to onnxruntime's include folder")
  endif()
  string(REGEX REPLACE "\n.*" "" _err "${_err}")
  surgeon_fail("${_err}")
endif()
string(REPLACE "\n" ";" _out "${_out}")
list(GET _out 0 SURGEON_ORT_INCLUDE_DIR)
list(GET _out 1 SURGEON_ORT_API)
message(STATUS "surgeon: onnxruntime C API ${SURGEON_ORT_API} headers in ${SURGEON_ORT_INCLUDE_DIR}")
