# The compilers and the flags every surgeon library shares.
#
# A build that cannot go on stops with one line naming what is missing and how to provide it
# (surgeon_fail), not CMake's page about a failed compiler test.
include(CheckLanguage)

function(surgeon_fail text)
  # message(FATAL_ERROR) rewraps long text; NOTICE prints the line as written, to stderr.
  message(NOTICE "surgeon build error: ${text}")
  message(FATAL_ERROR "surgeon build error (above)")
endfunction()

check_language(CXX)
if(NOT CMAKE_CXX_COMPILER)
  if(DEFINED ENV{CXX})
    surgeon_fail("the C++ compiler CXX=$ENV{CXX} does not work; install g++ (apt-get install g++) or set CXX to a working C++17 compiler")
  endif()
  surgeon_fail("no C++ compiler found; install g++ (apt-get install g++) or set CXX to a C++17 compiler, or install a prebuilt wheel")
endif()
enable_language(CXX)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
set(CMAKE_CXX_VISIBILITY_PRESET hidden)
set(CMAKE_CUDA_VISIBILITY_PRESET hidden)
set(CMAKE_VISIBILITY_INLINES_HIDDEN ON)
# The optimisation level is each unit's own (ops/kernels/CMakeLists.txt), not the build type's.
foreach(config RELEASE RELWITHDEBINFO MINSIZEREL DEBUG)
  string(REGEX REPLACE "(^| )-O[0-9s]( |$)" " " CMAKE_CXX_FLAGS_${config} "${CMAKE_CXX_FLAGS_${config}}")
  string(REGEX REPLACE "(^| )-O[0-9s]( |$)" " " CMAKE_CUDA_FLAGS_${config} "${CMAKE_CUDA_FLAGS_${config}}")
endforeach()

# Unresolved symbols are link errors, not load-time ones.
if(NOT APPLE)
  set(SURGEON_NO_UNDEFINED "-Wl,--no-undefined")
endif()

# CUDA: the variants are built when nvcc is found (SURGEON_CUDA=AUTO), as the run-time code
# used to look for it: $NVCC, $CUDA_HOME/bin, $CUDA_PATH/bin, nvcc on PATH, /usr/local/cuda/bin.
set(SURGEON_CUDA AUTO CACHE STRING "Build the CUDA variants: AUTO (when nvcc is found), ON, OFF")
set(SURGEON_HAVE_CUDA OFF)
if(NOT SURGEON_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
    set(_nvcc_hints)
    foreach(var CUDA_HOME CUDA_PATH)
      if(DEFINED ENV{${var}})
        list(APPEND _nvcc_hints "$ENV{${var}}/bin")
      endif()
    endforeach()
    if(DEFINED ENV{NVCC})
      set(CMAKE_CUDA_COMPILER "$ENV{NVCC}")
    else()
      find_program(_surgeon_nvcc nvcc HINTS ${_nvcc_hints} PATHS /usr/local/cuda/bin)
      if(_surgeon_nvcc)
        set(CMAKE_CUDA_COMPILER "${_surgeon_nvcc}")
      endif()
    endif()
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # SASS for Ampere and Hopper, plus Hopper's PTX for later GPUs (the driver compiles it).
      set(CMAKE_CUDA_ARCHITECTURES 80-real 90)
    endif()
    enable_language(CUDA)
    set(SURGEON_HAVE_CUDA ON)
    message(STATUS "surgeon: CUDA variants with ${CMAKE_CUDA_COMPILER} for ${CMAKE_CUDA_ARCHITECTURES}")
  elseif(SURGEON_CUDA STREQUAL "ON")
    surgeon_fail("SURGEON_CUDA=ON but no working nvcc was found; install the CUDA toolkit or set CUDACXX (or NVCC) to nvcc")
  else()
    message(STATUS "surgeon: no nvcc found: the CUDA variants are skipped (CPU libraries only)")
  endif()
endif()
